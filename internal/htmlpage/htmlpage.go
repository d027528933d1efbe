// Package htmlpage writes the frame of latscope's self-contained HTML pages
// (the heat-map report of view/static, the flame graph viewer of
// flame/html): one file with its stylesheet, data and script inline, under
// a Content-Security-Policy that lets it fetch nothing.
package htmlpage

import (
	"bufio"
	"net/http"
)

// ContentSecurityPolicy forbids a page to fetch anything at all.
const ContentSecurityPolicy = `default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:`

// SandboxHeaders sets the headers under which latscope serve answers one
// of these pages: it runs in a sandbox (an opaque origin), so its script
// draws the page but cannot use the viewer's session, and only the
// server's own pages may frame it (the browser view shows reports, flame
// graphs and audit timelines inside its pages).
func SandboxHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "sandbox allow-scripts; "+ContentSecurityPolicy+"; frame-ancestors 'self'")
	h.Set("X-Frame-Options", "SAMEORIGIN")
}

// WriteHead writes the document up to the opened body: the policy, the
// viewport, the generator, the title (already escaped) and the stylesheet.
// Errors stick in w until its Flush.
func WriteHead(w *bufio.Writer, escapedTitle, css string) {
	w.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	w.WriteString(`<meta http-equiv="Content-Security-Policy" content="` + ContentSecurityPolicy + "\">\n")
	w.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	w.WriteString(`<meta name="generator" content="latscope">` + "\n")
	w.WriteString("<title>" + escapedTitle + "</title>\n<style>\n" + css + "</style>\n</head>\n<body>\n")
}

// WriteTail writes the page's data, JSON safe inside a script element (as
// encoding/json escapes <, > and &), in the element with id dataID, then
// the script, and closes the document.
func WriteTail(w *bufio.Writer, dataID string, data []byte, js string) {
	w.WriteString(`<script type="application/json" id="` + dataID + `">`)
	w.Write(data)
	w.WriteString("</script>\n<script>\n" + js + "</script>\n</body>\n</html>\n")
}
