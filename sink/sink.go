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
}

// Format is one output format.
type Format struct {
	// Name is the value of --to.
	Name string
	// Extension is the usual file extension, which also selects the format
	// when --to is not given.
	Extension   string
	Description string
	// Keeps says what the format holds exactly and what it cannot, for
	// `latscope formats`.
	Keeps string
	// Example is a command line writing the format.
	Example string
	New     func(w io.Writer, o Options) (Writer, error)
}
