package recording

import (
	"io"

	"github.com/latscope/latscope/sink"
)

// SinkFormat is the recording as a `latscope convert --to latscope` target.
func SinkFormat() sink.Format {
	return sink.Format{
		Name:        FormatName,
		Extension:   Extension,
		Description: "latscope recording (replayable by every latscope command)",
		Keeps:       "everything, exactly: every interval, series, bucket edge, count and sum, and mean series (count and total per window)",
		Example:     "latscope convert trace.trc --to latscope -o trace.lsr",
		New: func(w io.Writer, _ sink.Options) (sink.Writer, error) {
			return NewWriter(w)
		},
	}
}
