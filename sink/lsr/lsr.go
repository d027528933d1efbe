// Package lsr registers latscope's recording format (package recording) as
// an output of `latscope convert --to latscope` and `latscope record`.
package lsr

import (
	"io"

	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/sink"
)

// Format is the recording as a sink.
func Format() sink.Format {
	return sink.Format{
		Name:        recording.FormatName,
		Extension:   recording.Extension,
		Description: "latscope recording (replayable by every latscope command)",
		Keeps:       "everything, exactly: every interval, series, bucket edge, count and sum, and mean series (count and total per window)",
		Example:     "latscope convert trace.trc --to latscope -o trace.lsr",
		New: func(w io.Writer, _ sink.Options) (sink.Writer, error) {
			return recording.NewWriter(w)
		},
	}
}
