// Package lsr registers latscope's recording format (package recording) as
// an input: detected by its magic, replayed in file order.
package lsr

import (
	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/source"
)

// Format is the recording as a source format.
func Format() source.Format {
	return source.Format{
		Name:        recording.FormatName,
		Description: "latscope recording (latscope record -o FILE" + recording.Extension + ")",
		Detection:   "the 8-byte magic \\x89LSR\\r\\n\\x1a\\n at the start",
		Example:     "latscope heatmap capture.lsr --speed 10",
		Detect:      recording.Detect,
		Open: func(in source.Input, opts source.Options) (source.Source, error) {
			return recording.OpenReplay(in.Name, in.Reader, in.Diag, recording.ReplayOptions{Events: opts.Events, Follow: opts.Follow})
		},
	}
}
