// Package source defines how latscope reads latency data: a Source emits
// stream.Intervals; file formats are recognised by sniffing the start of the
// input; Diagnostics counts and reports malformed input without losing the
// good part.
package source

import (
	"context"
	"io"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Source produces intervals until its input ends, ctx is cancelled or an
// error stops it. Run calls emit from one goroutine; an error from emit
// stops the source and is returned.
type Source interface {
	Name() string
	Run(ctx context.Context, emit func(stream.Interval) error) error
}

// Options are the reading choices a user can make; zero values mean "the
// source's default".
type Options struct {
	// Format forces an input format by name instead of detection.
	Format string
	// Bound sets the bucket semantics of records that do not say which they
	// use (BoundUnknown: infer from the record, else warn and use upper).
	Bound hist.BoundKind
	// Location is the time zone of timestamps that carry no UTC offset.
	Location *time.Location
	// Interval is the binning interval for per-event sources.
	Interval time.Duration
	// Events keeps only these events (exact names); empty keeps all.
	Events []string
	// Follow keeps reading a growing file like tail -f.
	Follow bool
	// Progress receives human progress lines for long setup work, such as
	// a probe creating its scratch file (nil: silent).
	Progress io.Writer
}

// Loc returns the zone for offset-less timestamps (local by default).
func (o Options) Loc() *time.Location {
	if o.Location != nil {
		return o.Location
	}
	return time.Local
}

// KeepEvent reports whether an event passes the --event filter.
func (o Options) KeepEvent(name string) bool {
	if len(o.Events) == 0 {
		return true
	}
	for _, e := range o.Events {
		if e == name {
			return true
		}
	}
	return false
}

// Verdict is a format detector's answer about an input prefix.
type Verdict int

// Detector answers.
const (
	// No: the input is not in this format.
	No Verdict = iota
	// NeedMore: the prefix is too short to tell.
	NeedMore
	// Yes: the input is in this format.
	Yes
)

// Input is an opened input handed to a format.
type Input struct {
	// Name is the path (or "-") used in messages.
	Name string
	// Reader yields the whole input, including the prefix detection read.
	Reader io.Reader
	// Diag receives malformed-line reports and warnings.
	Diag *Diagnostics
}

// Format is one file format latscope reads.
type Format struct {
	Name        string
	Description string
	// Detect looks at the start of the input.
	Detect func(prefix []byte) Verdict
	// Open returns a Source that reads the input.
	Open func(in Input, opts Options) (Source, error)
}
