package input

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
)

// LineReader returns a line-oriented input's lines one at a time: each
// line as soon as it arrives (a pipe from a running tool or a followed file
// yields its data the moment it is written), without its line ending,
// numbered for file:line messages, with memory bounded per line.
type LineReader struct {
	r      *bufio.Reader
	buf    []byte
	maxLen int
	number int
}

// NewLineReader reads r; lines longer than maxLen bytes are cut to their
// start and flagged as too long.
func NewLineReader(r io.Reader, maxLen int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 16<<10), maxLen: maxLen}
}

// Number returns the 1-based number of the last line returned.
func (lr *LineReader) Number() int { return lr.number }

// Next returns the next line. tooLong says it exceeded the maximum length
// and only its start is returned. err is io.EOF after the last line.
func (lr *LineReader) Next() (line string, tooLong bool, err error) {
	b, tooLong, err := lr.NextBytes()
	return string(b), tooLong, err
}

// NextBytes is Next without the string copy, for parsers that read every
// line of large inputs: the line is valid only until the next call.
func (lr *LineReader) NextBytes() (line []byte, tooLong bool, err error) {
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
			return nil, false, err
		}
	}
}

// line counts the line and returns it without "\n" or "\r\n".
func (lr *LineReader) line() []byte {
	lr.number++
	b := lr.buf
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// EachLine calls line for every line of r until it ends (then it returns
// nil), ctx is done (ctx's error) or line fails (its error). Read errors
// name the input and the line being read.
func EachLine(ctx context.Context, name string, r io.Reader, maxLen int, line func(n int, text string, tooLong bool) error) error {
	lr := NewLineReader(r, maxLen)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		text, tooLong, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, lr.number+1, err)
		}
		if err := line(lr.number, text, tooLong); err != nil {
			return err
		}
	}
}

// LineParser is a line-based format's parser.
type LineParser interface {
	// Line takes line n (1-based); tooLong says only its start is given.
	Line(n int, text string, tooLong bool) error
	// End is called once the input has ended; cancelled says reading
	// stopped because the run was stopped (--duration, a quitting view
	// while following a file), so an unfinished last record is no damage.
	End(cancelled bool) error
}
