package httpsec

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
)

// errorBody is every error response: {"error": "..."}.
type errorBody struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v) // the client went away; nothing to tell it
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

// writePageError answers a browser page with a short HTML page (no
// script, no style: the default policy allows none) and a way back.
func writePageError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%d %s · latscope</title><link rel=\"icon\" href=\"data:,\"></head>\n"+
		"<body><h1>%s</h1><p>%s.</p><p><a href=\"/\">Back to the dashboard</a></p></body></html>\n",
		status, http.StatusText(status), http.StatusText(status), html.EscapeString(msg))
}

// retryAfterUnavailable is the Retry-After of a 503: a stream slot or a
// restarted server is usually there within seconds.
const retryAfterUnavailable = "5"

// Unavailable marks err as a refusal for now (a cap on streams, a server
// that is stopping): the API answers it 503 with Retry-After.
func Unavailable(err error) error { return unavailableError{err} }

type unavailableError struct{ error }

func (e unavailableError) Unwrap() error { return e.error }

// errMediaType refuses bodies that are not JSON: an HTML form of another
// site cannot send application/json without a CORS preflight.
var errMediaType = errors.New("the body must be application/json")

// badRequestError is a body that is not the JSON the route expects.
type badRequestError struct{ msg string }

func (e *badRequestError) Error() string { return e.msg }

// decodeBody reads exactly one JSON object of the route's capped size into
// v, refusing unknown fields so that a typo is not silently ignored.
func decodeBody(r *http.Request, v any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return errMediaType
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		if _, err = dec.Token(); errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			err = errors.New("data after the JSON object")
		}
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return fmt.Errorf("request body: %w", err)
	}
	return &badRequestError{msg: "request body: " + err.Error()}
}
