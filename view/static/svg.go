package static

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/latscope/latscope/stream"
)

// fontStack is the system font stack of the SVG and HTML text.
const fontStack = `system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif`

// WriteSVG writes the recording as one standalone SVG: every series' maps
// stacked, with native tooltips on the merged cell runs.
func WriteSVG(w io.Writer, ivs []stream.Interval, o Options) error {
	r := buildReport(ivs, o)
	g := vectorGeometry(r.Columns)
	g.titles = true
	bw := bufio.NewWriter(w)
	bw.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	renderSVG(bw, layoutDocument(r, g), svgStyle{standalone: true, idPrefix: "ls"})
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing SVG: %w", err)
	}
	return nil
}

// svgStyle says how an SVG element is embedded.
type svgStyle struct {
	// standalone: a document of its own (namespace, fonts, white
	// background) rather than inline in the HTML page.
	standalone bool
	// idPrefix keeps the pattern id unique when several SVGs share a page.
	idPrefix string
	// attrs are extra attributes of the <svg> element (already escaped).
	attrs string
}

// renderSVG writes a canvas as an <svg> element. Consecutive cell runs of
// one colour share a <g fill> so the file stays small.
func renderSVG(w *bufio.Writer, c *canvas, st svgStyle) {
	size := num(c.w) + `" height="` + num(c.h)
	w.WriteString(`<svg`)
	if st.standalone {
		w.WriteString(` xmlns="http://www.w3.org/2000/svg" font-family="` + escapeAttr(fontStack) + `" font-size="12"`)
	}
	w.WriteString(` width="` + size + `" viewBox="0 0 ` + num(c.w) + " " + num(c.h) + `"` + st.attrs + ">\n")
	pattern := st.idPrefix + "-nodata"
	fmt.Fprintf(w, `<defs><pattern id="%s" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">`+
		`<rect width="6" height="6" fill="%s"/><rect width="2" height="6" fill="%s"/></pattern></defs>`+"\n",
		pattern, hexColour(noDataBase), hexColour(noDataHatch))
	if st.standalone {
		fmt.Fprintf(w, `<rect width="%s" height="%s" fill="#ffffff"/>`+"\n", num(c.w), num(c.h))
	}
	fill := func(p paint) string {
		if p.noData {
			return "url(#" + pattern + ")"
		}
		return hexColour(p.rgb)
	}
	open := ""                     // fill of the open cell group
	scratch := make([]byte, 0, 96) // cell rects are most of the file: format them without fmt
	for _, s := range c.shapes {
		if open != "" && (!s.cell || fill(s.fill) != open) {
			w.WriteString("</g>\n")
			open = ""
		}
		if s.cell && open == "" {
			open = fill(s.fill)
			fmt.Fprintf(w, `<g class="cells" fill="%s" shape-rendering="crispEdges">`+"\n", open)
		}
		if s.cell && s.title == "" {
			scratch = appendCellRect(scratch[:0], s)
			w.Write(scratch)
			continue
		}
		writeShape(w, s, fill)
	}
	if open != "" {
		w.WriteString("</g>\n")
	}
	w.WriteString("</svg>\n")
}

// writeShape writes one shape; cell runs inherit their group's fill.
func writeShape(w *bufio.Writer, s shape, fill func(paint) string) {
	switch s.kind {
	case rectShape:
		fmt.Fprintf(w, `<rect x="%s" y="%s" width="%s" height="%s"`, num(s.x), num(s.y), num(s.w), num(s.h))
		if s.class != "" {
			w.WriteString(` class="` + s.class + `"`)
		}
		switch {
		case s.cell:
		case s.stroke.A != 0:
			fmt.Fprintf(w, ` fill="none" stroke="%s" stroke-width="1" shape-rendering="crispEdges"`, hexColour(s.stroke))
		default:
			fmt.Fprintf(w, ` fill="%s" shape-rendering="crispEdges"`, fill(s.fill))
		}
		if s.title != "" {
			w.WriteString("><title>" + escapeText(s.title) + "</title></rect>\n")
			return
		}
		w.WriteString("/>\n")
	case lineShape:
		fmt.Fprintf(w, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" shape-rendering="crispEdges"/>`+"\n",
			num(s.x), num(s.y), num(s.x+s.w), num(s.y+s.h), hexColour(s.stroke))
	case textShape:
		fmt.Fprintf(w, `<text x="%s" y="%s" font-size="%s" fill="%s"`, num(s.x), num(s.y), num(s.size), hexColour(s.fill.rgb))
		switch s.anchor {
		case anchorMiddle:
			w.WriteString(` text-anchor="middle"`)
		case anchorEnd:
			w.WriteString(` text-anchor="end"`)
		}
		if s.bold {
			w.WriteString(` font-weight="600"`)
		}
		w.WriteString(">" + escapeText(s.text) + "</text>\n")
	}
}

// appendCellRect appends a cell run's <rect>, which inherits its fill.
func appendCellRect(b []byte, s shape) []byte {
	b = append(b, `<rect x="`...)
	b = appendNum(b, s.x)
	b = append(b, `" y="`...)
	b = appendNum(b, s.y)
	b = append(b, `" width="`...)
	b = appendNum(b, s.w)
	b = append(b, `" height="`...)
	b = appendNum(b, s.h)
	return append(b, "\"/>\n"...)
}

func appendNum(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, math.Round(v*100)/100, 'f', -1, 64)
}

// num prints a coordinate with at most two decimals.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

func hexColour(c color.RGBA) string {
	return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
}

// escapeText escapes text for XML and HTML; characters XML cannot hold
// (invalid UTF-8, most control characters) become U+FFFD.
func escapeText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// escapeAttr escapes an attribute value (quotes included).
func escapeAttr(s string) string { return escapeText(s) }
