package collapse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Chunking for parallel collapsers of blank-line separated records (perf
// script samples): the input is cut after blank lines into blocks that can
// be parsed independently, so workers need no state from earlier blocks.

const (
	chunkBlock = 1 << 20  // usual chunk size
	chunkMax   = 64 << 20 // largest chunk searched for a blank line
	// lineMax is the longest line kept. It is a property of the input, not
	// of the chunking: chunks grow to hold any line up to it, so the
	// chunk sizes never decide which lines are read.
	lineMax = 64 << 20
)

// textChunk is a run of whole lines of the input.
type textChunk struct {
	idx  int    // order in the input
	line int    // number of its first line (1-based)
	data []byte // whole lines
	buf  []byte // backing buffer, recycled after parsing
	// seq: the chunk does not start or does not end at a record boundary
	// (no blank line within chunkMax), so it must be parsed in input order
	// by one parser that keeps its state from chunk to chunk.
	seq bool
	// last: no input follows.
	last bool
	// longLine > 0: a line longer than lineMax starting at this line number
	// was skipped (data holds the whole lines before it).
	longLine int
}

// chunker cuts a reader into textChunks.
type chunker struct {
	r       io.Reader
	block   int
	max     int
	lineMax int
	pend    []byte // unconsumed input, starting at a line start
	eof     bool
	err     error
	mid     bool // the previous chunk ended inside a record
	skip    bool // discarding the rest of an over-long line
	idx     int
	line    int
	free    chan []byte
}

func newChunker(r io.Reader, block, maxChunk, pool int) *chunker {
	return &chunker{r: r, block: block, max: maxChunk, lineMax: max(maxChunk, lineMax), line: 1, free: make(chan []byte, pool)}
}

// recycle returns a chunk's buffer for reuse.
func (c *chunker) recycle(b []byte) {
	if cap(b) != c.block {
		return // grown buffers are dropped
	}
	select {
	case c.free <- b[:0]:
	default:
	}
}

func (c *chunker) newBuf(n int) []byte {
	if n <= c.block {
		select {
		case b := <-c.free:
			return b
		default:
		}
		n = c.block
	}
	return make([]byte, 0, n)
}

// fill reads until pend is full or the input ends.
func (c *chunker) fill() {
	for !c.eof && len(c.pend) < cap(c.pend) {
		n, err := c.r.Read(c.pend[len(c.pend):cap(c.pend)])
		c.pend = c.pend[:len(c.pend)+n]
		if err != nil {
			c.eof = true
			if !errors.Is(err, io.EOF) {
				c.err = err
			}
		}
	}
}

// next returns the next chunk, or io.EOF at the end (or the read error,
// after every chunk read before it).
func (c *chunker) next() (textChunk, error) {
	if c.pend == nil {
		c.pend = c.newBuf(c.block)
	}
	for {
		c.fill()
		if c.skip {
			c.dropLongLine()
			continue
		}
		if len(c.pend) == 0 && c.eof {
			if c.err != nil {
				return textChunk{}, fmt.Errorf("line %d: %w", c.line, c.err)
			}
			return textChunk{}, io.EOF
		}
		data := c.pend
		if c.mid {
			if b := firstBlankLineEnd(data); b > 0 {
				c.mid = false
				return c.emit(b, true, 0), nil
			}
		} else if b := lastBlankLineEnd(data); b > 0 {
			return c.emit(b, false, 0), nil
		}
		nl := bytes.LastIndexByte(data, '\n')
		limit := c.max // a whole line is in: cut at a line end from max on
		if nl < 0 {
			limit = c.lineMax // one unfinished line: grow to hold it
		}
		switch {
		case c.eof:
			return c.emit(len(data), c.mid, 0), nil
		case len(data) < limit:
			grown := make([]byte, len(data), min(2*cap(data), limit))
			copy(grown, data)
			c.recycle(c.pend)
			c.pend = grown
		case nl < 0: // one line longer than lineMax: skip it
			long := c.line
			c.skip = true
			c.pend = c.pend[:0]
			return textChunk{idx: c.nextIdx(), line: c.line, seq: true, longLine: long}, nil
		default:
			c.mid = true
			return c.emit(nl+1, true, 0), nil
		}
	}
}

// dropLongLine discards input up to and including the next newline.
func (c *chunker) dropLongLine() {
	if i := bytes.IndexByte(c.pend, '\n'); i >= 0 {
		c.skip = false
		c.line++
		n := copy(c.pend, c.pend[i+1:])
		c.pend = c.pend[:n]
		return
	}
	c.pend = c.pend[:0]
	if c.eof {
		c.skip = false
	}
}

func (c *chunker) nextIdx() int {
	c.idx++
	return c.idx - 1
}

// emit returns pend[:n] as a chunk and keeps the rest pending in a new
// buffer.
func (c *chunker) emit(n int, seq bool, long int) textChunk {
	ch := textChunk{idx: c.nextIdx(), line: c.line, data: c.pend[:n], buf: c.pend, seq: seq, longLine: long}
	ch.last = c.eof && n == len(c.pend)
	c.line += bytes.Count(ch.data, []byte{'\n'})
	rest := c.pend[n:]
	c.pend = c.newBuf(len(rest))
	c.pend = append(c.pend, rest...)
	return ch
}

// lastBlankLineEnd returns the offset just after the last empty line of
// data (which starts at a line start), or 0.
func lastBlankLineEnd(data []byte) int {
	if i := bytes.LastIndex(data, []byte("\n\n")); i >= 0 {
		return i + 2
	}
	if len(data) > 0 && data[0] == '\n' {
		return 1
	}
	return 0
}

// firstBlankLineEnd returns the offset just after the first empty line of
// data, or 0.
func firstBlankLineEnd(data []byte) int {
	if len(data) > 0 && data[0] == '\n' {
		return 1
	}
	if i := bytes.Index(data, []byte("\n\n")); i >= 0 {
		return i + 2
	}
	return 0
}
