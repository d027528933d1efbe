package input

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Problem is one piece of bad input: where it was and why it was skipped.
type Problem struct {
	Source string
	// Line is the 1-based line number, 0 when the source is not line-based.
	Line int
	// At is the time of the data for live sources (zero otherwise).
	At     time.Time
	Reason string
}

// String returns "file:line: reason" (or "source at time: reason").
func (p Problem) String() string {
	switch {
	case p.Line > 0:
		return fmt.Sprintf("%s:%d: %s", p.Source, p.Line, p.Reason)
	case !p.At.IsZero():
		return fmt.Sprintf("%s at %s: %s", p.Source, p.At.Format(time.RFC3339), p.Reason)
	}
	return fmt.Sprintf("%s: %s", p.Source, p.Reason)
}

// Diagnostics collects malformed-input reports and warnings from all sources.
// The first few problems of each source are printed as they happen; every
// problem is counted. It is safe for concurrent use; a nil *Diagnostics is
// silent and counts nothing.
type Diagnostics struct {
	mu       sync.Mutex
	out      io.Writer
	limit    int
	counts   map[string]int
	first    map[string][]Problem
	warnings []string
	order    []string
}

// DefaultReportLimit is how many problems per source are printed.
const DefaultReportLimit = 5

// NewDiagnostics prints the first limit problems per source to out (nil:
// print nothing) and counts the rest.
func NewDiagnostics(out io.Writer, limit int) *Diagnostics {
	return &Diagnostics{out: out, limit: limit, counts: map[string]int{}, first: map[string][]Problem{}}
}

// Malformed records a skipped line.
func (d *Diagnostics) Malformed(source string, line int, reason string) {
	d.add(Problem{Source: source, Line: line, Reason: reason})
}

// MalformedAt records skipped data of a live source at time at.
func (d *Diagnostics) MalformedAt(source string, at time.Time, reason string) {
	d.add(Problem{Source: source, At: at, Reason: reason})
}

func (d *Diagnostics) add(p Problem) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.counts == nil { // the zero value is usable (silent, no examples kept)
		d.counts, d.first = map[string]int{}, map[string][]Problem{}
	}
	if _, ok := d.counts[p.Source]; !ok {
		d.order = append(d.order, p.Source)
	}
	d.counts[p.Source]++
	if len(d.first[p.Source]) < d.limit {
		d.first[p.Source] = append(d.first[p.Source], p)
		if d.out != nil {
			fmt.Fprintf(d.out, "latscope: skipped %s\n", p)
		}
	}
}

// Warn records a warning about a source (printed once per distinct text).
func (d *Diagnostics) Warn(source, format string, args ...any) {
	if d == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if source != "" {
		msg = source + ": " + msg
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if slices.Contains(d.warnings, msg) {
		return
	}
	d.warnings = append(d.warnings, msg)
	if d.out != nil {
		fmt.Fprintf(d.out, "latscope: warning: %s\n", msg)
	}
}

// SourceProblems summarises one source's skipped input.
type SourceProblems struct {
	Source string    `json:"source"`
	Count  int       `json:"count"`
	First  []Problem `json:"-"`
}

// Problems returns, per source in order of first report, how much input was
// skipped and the first problems.
func (d *Diagnostics) Problems() []SourceProblems {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]SourceProblems, 0, len(d.order))
	for _, s := range d.order {
		out = append(out, SourceProblems{Source: s, Count: d.counts[s], First: slices.Clone(d.first[s])})
	}
	return out
}

// Warnings returns the warnings in the order they were made.
func (d *Diagnostics) Warnings() []string {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.warnings)
}

// Count returns the number of skipped pieces of input for a source.
func (d *Diagnostics) Count(source string) int {
	if d == nil {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.counts[source]
}

// PrintSummary writes one line per source that had skipped input, for
// problems beyond those already printed.
func (d *Diagnostics) PrintSummary(w io.Writer) {
	for _, p := range d.Problems() {
		fmt.Fprintf(w, "latscope: %s: %d malformed line(s) skipped", p.Source, p.Count)
		if p.Count > len(p.First) {
			fmt.Fprintf(w, " (first %d shown above)", len(p.First))
		}
		fmt.Fprintln(w)
	}
}
