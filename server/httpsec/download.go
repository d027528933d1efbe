package httpsec

import (
	"errors"
	"io"
	"mime"
	"net/http"
)

// Download is a response that is not JSON: a report as a table, CSV or
// HTML page, an export in latscope's recording or another tool's format.
type Download struct {
	ContentType string
	// Filename is the name a client saves the body under
	// (Content-Disposition: attachment).
	Filename string
	// Write writes the body after the headers.
	Write func(w io.Writer) error
}

// DownloadFunc prepares a download. Its errors are answered as an
// APIFunc's are ({"error": "..."} with the status they map to), before any
// byte of the body is sent.
type DownloadFunc func(r *http.Request) (Download, error)

// TooLargeError answers 413: the request asks for more than the server
// sends in one answer. Msg says how to ask for less.
type TooLargeError struct{ Msg string }

func (e *TooLargeError) Error() string { return e.Msg }

// Download adapts a DownloadFunc into a handler for Handle. An error while
// the body is written cuts the connection, so that a client never takes a
// truncated body for a whole one.
func (rt *Router) Download(f DownloadFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, err := f(r)
		var tooLarge *TooLargeError
		switch {
		case errors.As(err, &tooLarge):
			writeError(w, http.StatusRequestEntityTooLarge, tooLarge.Msg)
			return
		case err != nil:
			rt.fail(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", d.ContentType)
		if d.Filename != "" {
			h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": d.Filename}))
		}
		w.WriteHeader(http.StatusOK)
		if err := d.Write(w); err != nil {
			rt.cfg.Logger.Warn("download cut", "method", r.Method, "path", r.URL.Path, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
}
