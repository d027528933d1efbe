package httpsec

import (
	"net/http"
	"time"
)

// recorder remembers the status and the user for the request log.
type recorder struct {
	http.ResponseWriter
	status int
	user   string
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (deadlines, flush).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func setUser(w http.ResponseWriter, user string) {
	if rec, ok := w.(*recorder); ok {
		rec.user = user
	}
}

// outer adds what every response carries: security headers, a log line
// (method, path without the query, status, user, client, duration; never
// headers or bodies) and recovery from a handler's panic.
func (rt *Router) outer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		if rt.cfg.TLS {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		rec := &recorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				rt.cfg.Logger.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", p)
				if rec.status == 0 {
					writeError(rec, http.StatusInternalServerError, "internal error")
				}
			}
			rt.cfg.Logger.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
				"user", rec.user, "remote", RemoteHost(r), "duration", time.Since(start).Round(time.Microsecond))
		}()
		next.ServeHTTP(rec, r)
	})
}

func (rt *Router) internalError(w http.ResponseWriter, r *http.Request, err error) {
	rt.cfg.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal error")
}
