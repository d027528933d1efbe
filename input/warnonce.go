package input

// OnceWarnings warns about one input at most once per kind of trouble: the
// first occurrence is told, later ones are dropped even when their text
// differs (Diagnostics.Warn alone drops only a repeated text).
type OnceWarnings struct {
	diag   *Diagnostics
	source string
	warned map[string]bool
}

// NewOnceWarnings warns to diag (nil: nowhere) about source.
func NewOnceWarnings(diag *Diagnostics, source string) *OnceWarnings {
	return &OnceWarnings{diag: diag, source: source, warned: map[string]bool{}}
}

// Warn warns the first time kind occurs.
func (w *OnceWarnings) Warn(kind, format string, args ...any) {
	if w.warned[kind] {
		return
	}
	w.warned[kind] = true
	w.diag.Warn(w.source, format, args...)
}
