// Package lines reads the line-oriented inputs most sources parse: each line
// is returned as soon as it arrives (a pipe from a running tool or a
// followed file yields its data the moment it is written), without its line
// ending, numbered for file:line messages, with memory bounded per line.
package lines

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Reader returns an input's lines one at a time.
type Reader struct {
	r      *bufio.Reader
	buf    []byte
	maxLen int
	number int
}

// NewReader reads r; lines longer than maxLen bytes are cut to their start
// and flagged as too long.
func NewReader(r io.Reader, maxLen int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 16<<10), maxLen: maxLen}
}

// Number returns the 1-based number of the last line returned.
func (lr *Reader) Number() int { return lr.number }

// Next returns the next line. tooLong says it exceeded the maximum length
// and only its start is returned. err is io.EOF after the last line.
func (lr *Reader) Next() (line string, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(lr.buf)+len(chunk) <= lr.maxLen {
			lr.buf = append(lr.buf, chunk...)
		} else {
			tooLong = true
			lr.buf = append(lr.buf, chunk[:max(0, lr.maxLen-len(lr.buf))]...)
		}
		switch {
		case err == nil:
			return lr.line(), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(lr.buf) > 0:
			return lr.line(), tooLong, nil // last line without a newline
		default:
			return "", false, err
		}
	}
}

// line counts the line and returns it without "\n" or "\r\n".
func (lr *Reader) line() string {
	lr.number++
	b := lr.buf
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return string(b)
}

// Each calls line for every line of the input until it ends (then it
// returns nil), ctx is done (ctx's error) or line fails (its error). Read
// errors name the input and the line being read.
func Each(ctx context.Context, in source.Input, maxLen int, line func(n int, text string, tooLong bool) error) error {
	lr := NewReader(in.Reader, maxLen)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		text, tooLong, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", in.Name, lr.number+1, err)
		}
		if err := line(lr.number, text, tooLong); err != nil {
			return err
		}
	}
}

// Parser is a line-based format's parser.
type Parser interface {
	// Line takes line n (1-based); tooLong says only its start is given.
	Line(n int, text string, tooLong bool) error
	// End is called once the input has ended; cancelled says reading
	// stopped because the run was stopped (--duration, a quitting view
	// while following a file), so an unfinished last record is no damage.
	End(cancelled bool) error
}

// NewSource returns a Source that feeds every line of in to the parser
// start makes for each Run. Lines longer than maxLen are cut and flagged.
func NewSource(in source.Input, maxLen int, start func(emit func(stream.Interval) error) Parser) (source.Source, error) {
	if in.Reader == nil {
		return nil, fmt.Errorf("%s: no reader", in.Name)
	}
	return &lineSource{in: in, maxLen: maxLen, start: start}, nil
}

type lineSource struct {
	in     source.Input
	maxLen int
	start  func(emit func(stream.Interval) error) Parser
}

// Name returns the input's name (its path, or "-").
func (s *lineSource) Name() string { return s.in.Name }

// Run parses the input to its end.
func (s *lineSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	p := s.start(emit)
	if err := Each(ctx, s.in, s.maxLen, p.Line); err != nil {
		return err
	}
	return p.End(ctx.Err() != nil)
}
