package httpsec

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces a secret in logs.
const Redacted = "[REDACTED]"

// Redactor removes secrets from log records: values it was told about
// (database passwords read from files or the environment), anything shaped
// like a latscope token or session id, passwords in URLs, and attributes
// whose key names a secret.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string
}

// Add registers a secret value to remove wherever it appears.
func (r *Redactor) Add(secret string) {
	if len(secret) < 4 { // shorter "secrets" would shred ordinary text
		return
	}
	r.mu.Lock()
	r.secrets = append(r.secrets, secret)
	r.mu.Unlock()
}

var (
	credentialPattern  = regexp.MustCompile(`ls(at|ss)_[A-Za-z0-9_-]{43}`)
	urlPasswordPattern = regexp.MustCompile(`(://[^:/@\s]*):[^@\s/]*@`)
	secretKeyPattern   = regexp.MustCompile(`(?i)pass|secret|token|authorization|cookie|credential|api_?key`)
)

// Redact returns s with every known secret replaced.
func (r *Redactor) Redact(s string) string {
	r.mu.RLock()
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, Redacted)
	}
	r.mu.RUnlock()
	s = credentialPattern.ReplaceAllString(s, Redacted)
	return urlPasswordPattern.ReplaceAllString(s, "$1:"+Redacted+"@")
}

// Handler wraps a slog handler so that every record passes through Redact.
func (r *Redactor) Handler(next slog.Handler) slog.Handler {
	return &redactingHandler{next: next, r: r}
}

type redactingHandler struct {
	next slog.Handler
	r    *Redactor
}

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &redactingHandler{next: h.next.WithAttrs(clean), r: h.r}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{next: h.next.WithGroup(name), r: h.r}
}

func (h *redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	if secretKeyPattern.MatchString(a.Key) {
		return slog.String(a.Key, Redacted)
	}
	switch v.Kind() {
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = h.attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindString, slog.KindAny:
		return slog.String(a.Key, h.r.Redact(v.String()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
