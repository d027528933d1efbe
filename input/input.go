// Package input is the plumbing every reader of latscope's inputs shares,
// whatever it reads (latency sources, stack collapsers, recordings):
// Diagnostics (malformed input counted and reported with file:line,
// warnings), Unused (the lines of an input that gave nothing), the Verdict
// of a format detector, gzip unwrapping, the line reader, and the
// line-scanning detector most text formats use. It imports
// nothing of latscope's, so sources, collapsers, sinks and views can all
// lean on it without leaning on each other.
package input

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
)

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

// Decompressed returns r buffered with size bytes for format detection,
// gunzipped when it starts with gzip's magic.
func Decompressed(name string, r io.Reader, size int) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(r, size)
	if prefix, _ := br.Peek(2); len(prefix) == 2 && prefix[0] == 0x1f && prefix[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		br = bufio.NewReaderSize(zr, size)
	}
	return br, nil
}
