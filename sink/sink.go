// Package sink defines how latscope writes a stream of latency histograms
// in other tools' formats (`latscope convert`): a Writer takes intervals in
// time order and says, through Diagnostics, what its format could not hold.
package sink

import (
	"io"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// Writer writes intervals in one format.
type Writer interface {
	// Write writes one interval; intervals arrive in time order.
	Write(stream.Interval) error
	// Close flushes what is buffered; it does not close the io.Writer.
	Close() error
}

// Options are what every writer may use.
type Options struct {
	// Name is the output's name (a path or "-") for messages.
	Name string
	// Diag receives a warning, once per kind, when the target cannot hold
	// the data exactly (rebinning into power-of-two buckets, lost sums...).
	Diag *input.Diagnostics
	// Endpoint is where a format that is sent rather than written
	// (Format.Sent) sends: a URL.
	Endpoint string
	// Host names the machine the data comes from, for formats that carry
	// it (otlp's host.name); empty: this machine's host name.
	Host string
	// Headers are extra request headers of a sent format (a tenant's
	// token).
	Headers map[string]string
}

// Format is one output format.
type Format struct {
	// Name is the value of --to.
	Name string
	// Extension is the usual file extension, which also selects the format
	// when --to is not given.
	Extension string
	// Sent says the format goes to Options.Endpoint over the network, not
	// to a file: New gets no io.Writer.
	Sent        bool
	Description string
	// Keeps says what the format holds exactly and what it cannot, for
	// `latscope formats`.
	Keeps string
	// Example is a command line writing the format.
	Example string
	New     func(w io.Writer, o Options) (Writer, error)
}

// Warner warns through Options.Diag the first time each kind of loss
// occurs, so that a writer says what its format cannot hold once, however
// often it happens and whatever the details of each occurrence.
type Warner struct {
	opts   Options
	warned map[string]bool
}

// NewWarner returns a Warner for the output o names.
func NewWarner(o Options) *Warner { return &Warner{opts: o, warned: map[string]bool{}} }

// Once warns unless kind was warned about already.
func (w *Warner) Once(kind, format string, args ...any) {
	if w.warned[kind] {
		return
	}
	w.warned[kind] = true
	w.opts.Diag.Warn(w.opts.Name, format, args...)
}
