package oracle10046

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// The read buffer starts small (most traces are small) and doubles while
// reads fill it, up to maxLineLen, the longest line parsed whole. Longer
// lines (huge SQL text, bind dumps) do not fail the parse: their first
// maxLineLen bytes are dispatched like any line and the rest is skipped.
const (
	initialBufSize = 64 << 10
	maxLineLen     = 1 << 20
)

// run reads r to the end (or until ctx is done), handing every line to
// handle, then flushes the intervals still open.
func (p *parser) run(ctx context.Context, r io.Reader) error {
	if r == nil {
		return nil
	}
	buf := make([]byte, initialBufSize)
	start, end := 0, 0
	skipping := false // discarding the tail of an over-long line
	eof := false
	for {
		data := buf[start:end]
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			line := data[:i]
			data = data[i+1:]
			if skipping {
				skipping = false
				continue
			}
			p.line++
			// Fast path: indented lines (binds, dumps) outside SQL text
			// are never looked at.
			if p.sqlMode == sqlNone && (len(line) == 0 || line[0] == ' ' || line[0] == '\t') {
				continue
			}
			if err := p.handle(line, false, scanned{}); err != nil {
				return err
			}
		}
		start = end - len(data)
		if eof {
			if start < end && !skipping {
				p.line++
				if err := p.handle(buf[start:end], false, scanned{}); err != nil {
					return err
				}
			}
			return p.finish()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if start > 0 {
			copy(buf, buf[start:end])
			end -= start
			start = 0
		}
		if end == len(buf) && len(buf) < maxLineLen {
			buf = append(buf, make([]byte, len(buf))...)
		}
		if end == len(buf) {
			// No newline in a full buffer: hand over the prefix once.
			if !skipping {
				p.line++
				if err := p.handle(buf[:end], true, scanned{}); err != nil {
					return err
				}
				skipping = true
			}
			end = 0
		}
		n, err := r.Read(buf[end:])
		if end+n == len(buf) && len(buf) < maxLineLen {
			buf = append(buf, make([]byte, len(buf))...) // data is flowing: read more at once
		}
		end += n
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return fmt.Errorf("reading after line %d: %w", p.line, err)
			}
			eof = true
		}
	}
}
