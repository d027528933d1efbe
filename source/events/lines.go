package events

import (
	"bufio"
	"errors"
	"io"
)

// maxLineLen bounds the memory one input line may take: event lines are
// shorter than 200 bytes, so longer ones are garbage and only reported.
const maxLineLen = 64 << 10

// lineReader returns lines as soon as they arrive (a followed file yields events
// the moment they are written), without their line ending.
type lineReader struct {
	r      *bufio.Reader
	buf    []byte
	number int // 1-based number of the last line returned
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 16<<10)}
}

// next returns the next line. tooLong says the line exceeded maxLineLen and
// only its start is returned. err is io.EOF after the last line.
func (lr *lineReader) next() (line string, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(lr.buf)+len(chunk) <= maxLineLen {
			lr.buf = append(lr.buf, chunk...)
		} else {
			tooLong = true
			lr.buf = append(lr.buf, chunk[:maxLineLen-len(lr.buf)]...)
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
func (lr *lineReader) line() string {
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
