package oracle10046

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/latscope/latscope/source"
)

// The parallel parse of a large file: a reader cuts the input into chunks
// at line boundaries, workers scan the chunks at the same time (finding the
// lines that matter and reading their WAIT and call fields, which is most
// of the work), and the parser replays the chunks' lines in file order
// through the same handle as the sequential parse. Everything that depends
// on earlier lines (timestamps and their anchoring, trcsess sections, the
// instance, series, windows and runs, held waits, relative time, calls
// state, block reads in file order) is therefore done by the one replay,
// exactly as sequentially.
//
// The only speculation is SQL text: a worker does not know whether its
// chunk starts (or a line of it is) inside the text of a PARSING IN CURSOR
// or PARSE ERROR section, so it scans as if outside, skipping indented
// lines. Whenever the replay is inside SQL text it reads the chunk's raw
// lines itself, one by one as the sequential parse does, until the text
// ends, then resumes with the worker's lines after that point. SQL text is
// a small part of a trace, so this costs little.
const (
	// parallelChunk is the size of the chunks scanned in parallel.
	parallelChunk = 256 << 10
	// parallelMinSize is the smallest input parsed in parallel: smaller
	// ones are not worth starting goroutines for.
	parallelMinSize = 4 * parallelChunk
)

// parallelWorkers returns how many workers parse in, 0 for the sequential
// parse: one processor, a pipe, --follow or a small file.
func parallelWorkers(in source.Input, opts source.Options) int {
	n := runtime.GOMAXPROCS(0)
	if n < 2 || opts.Follow || in.Size < parallelMinSize {
		return 0
	}
	return n
}

// chunk is a run of whole lines of the input and what a worker read of it.
type chunk struct {
	buf   []byte // the chunk's storage, reused
	data  []byte // the lines
	first bool   // data starts with the input's first line
	// long says data is the start of one over-long line, the only line of
	// the chunk (its rest is skipped, as the sequential parse does).
	long bool
	// lines is how many lines data holds.
	lines   int
	recs    []record
	waits   []waitLine    // the fields of WAIT lines
	calls   []callLine    // and of call lines (calls as series)
	claimed atomic.Bool   // a worker (or the replay) is scanning it
	done    chan struct{} // closed when a worker has scanned it
}

// record is one line a worker found worth handling: every line outside SQL
// text that is not empty or indented.
type record struct {
	at, end   int32 // the line's bytes in data (cut at maxLineLen)
	line      int32 // its number in the chunk, from 1
	pre       int32 // its fields in waits or calls (by kind)
	kind      scanKind
	truncated bool // the line is longer than maxLineLen
}

// scanKind says which fields of a line a worker read.
type scanKind uint8

const (
	scannedNone scanKind = iota
	scannedWait
	scannedCall
	// scannedTimOnly: the line only matters to a pending timestamp.
	scannedTimOnly
)

// scan finds the chunk's lines worth handling and reads the fields of its
// WAIT lines (and call lines when calls are series).
func (c *chunk) scan(calls bool) {
	c.recs, c.waits, c.calls = c.recs[:0], c.waits[:0], c.calls[:0]
	if c.long {
		c.lines = 1
		c.add(0, len(c.data), 1, true, calls)
		return
	}
	data := c.data
	n := 0
	for at := 0; at < len(data); {
		end := lineEnd(data, at)
		n++
		switch {
		case end-at >= maxLineLen:
			c.add(at, at+maxLineLen, n, true, calls)
		case end > at && data[at] != ' ' && data[at] != '\t':
			c.add(at, end, n, false, calls)
		}
		at = end + 1
	}
	c.lines = n
}

// add records line n, data[at:end], if handle may do something with it
// outside SQL text, reading its fields the way handle would see them.
func (c *chunk) add(at, end, n int, truncated, calls bool) {
	r := record{at: int32(at), end: int32(end), line: int32(n), truncated: truncated}
	line := c.data[at:end]
	if c.first && n == 1 {
		line = bytes.TrimPrefix(line, utf8BOM)
	}
	line = trimCR(line)
	switch {
	case len(line) == 0:
		return
	case line[0] == 'W' && bytes.HasPrefix(line, waitPrefix):
		r.pre, r.kind = int32(len(c.waits)), scannedWait
		c.waits = append(c.waits, scanWait(line, truncated))
	case calls && (line[0] == 'P' || line[0] == 'E' || line[0] == 'F' || line[0] == 'C') && callPrefixed(line):
		r.pre, r.kind = int32(len(c.calls)), scannedCall
		c.calls = append(c.calls, scanCall(line))
	case changesState(line):
	case line[0] >= 'A' && line[0] <= 'Z':
		r.kind = scannedTimOnly
	default:
		return
	}
	c.recs = append(c.recs, r)
}

// callPrefixed says whether a line starts like a call ("EXEC #"...).
func callPrefixed(line []byte) bool {
	typ, _ := callType(line)
	return typ != 0
}

// changesState says whether handle does more with a line (outside SQL text,
// with no call handler) than resolve a pending timestamp with its tim:
// timestamps and sections, SQL text starts, file headers and instances.
func changesState(line []byte) bool {
	switch line[0] {
	case '*':
		return bytes.HasPrefix(line, starsPrefix)
	case 'P':
		return bytes.HasPrefix(line, parsingPrefix) || bytes.HasPrefix(line, parseErrorPrefix)
	case 'T':
		return bytes.HasPrefix(line, traceFilePrefix)
	case 'O':
		return bytes.HasPrefix(line, bannerPrefix)
	case 'I':
		return bytes.HasPrefix(line, instancePrefix)
	}
	return false
}

// replay hands the chunk's lines to handle in order; base is the number of
// lines before the chunk.
func (p *parser) replay(c *chunk, base int) error {
	prevEnd, prevLine := -1, 0 // the last line handled
	for i := 0; ; {
		if p.sqlMode != sqlNone {
			pos := 0
			if prevEnd >= 0 {
				pos = min(lineEnd(c.data, prevEnd)+1, len(c.data))
			}
			end, line, err := p.sqlLines(c, pos, base, prevLine)
			if err != nil {
				return err
			}
			for i < len(c.recs) && int(c.recs[i].at) < end {
				i++
			}
			prevEnd, prevLine = end-1, line
			if prevEnd < 0 {
				break // an empty chunk
			}
			if p.sqlMode != sqlNone {
				break // the text goes on in the next chunk
			}
			continue
		}
		if i == len(c.recs) {
			break
		}
		r := &c.recs[i]
		i++
		if r.kind == scannedTimOnly && !p.pending {
			continue
		}
		p.line = base + int(r.line)
		var pre scanned
		switch r.kind {
		case scannedWait:
			pre.wait = &c.waits[r.pre]
		case scannedCall:
			pre.call = &c.calls[r.pre]
		}
		if err := p.handle(c.data[r.at:r.end], r.truncated, pre); err != nil {
			return err
		}
		prevEnd, prevLine = int(r.end), int(r.line)
	}
	p.line = base + c.lines
	return nil
}

// sqlLines reads the chunk's lines from pos on, as the sequential parse
// does, while they are SQL text. It returns where the first line it did
// not read starts and the number of the last line it read.
func (p *parser) sqlLines(c *chunk, pos, base, line int) (int, int, error) {
	data := c.data
	for pos < len(data) && p.sqlMode != sqlNone {
		end := lineEnd(data, pos)
		line++
		p.line = base + line
		text, truncated := data[pos:end], c.long
		if len(text) >= maxLineLen {
			text, truncated = text[:maxLineLen], true
		}
		if err := p.handle(text, truncated, scanned{}); err != nil {
			return 0, 0, err
		}
		pos = end + 1
	}
	return min(pos, len(data)), line, nil
}

// lineEnd returns where the line starting at data[at] ends: at its newline
// or at the end of data.
func lineEnd(data []byte, at int) int {
	if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
		return at + i
	}
	return len(data)
}

// chunker cuts an input into chunks of whole lines.
type chunker struct {
	r        io.Reader
	size     int
	carry    []byte // read past the last chunk's end
	skipping bool   // discarding the rest of an over-long line
	eof      bool
	err      error // a read error (not io.EOF)
}

// next fills c with the next chunk; false at the end of the input.
func (k *chunker) next(c *chunk) bool {
	buf := c.buf[:0]
	if cap(buf) < k.size {
		buf = make([]byte, 0, k.size)
	}
	buf = append(buf, k.carry...)
	k.carry = k.carry[:0]
	for {
		if k.skipping {
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				buf = append(buf[:0], buf[i+1:]...)
				k.skipping = false
			} else {
				buf = buf[:0]
			}
		}
		if !k.skipping && len(buf) > 0 {
			if k.eof {
				return k.emit(c, buf, len(buf), false)
			}
			if len(buf) == cap(buf) {
				if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
					return k.emit(c, buf, i+1, false)
				}
				if len(buf) >= maxLineLen {
					k.skipping = true
					return k.emit(c, buf, maxLineLen, true)
				}
				buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
			}
		}
		if k.eof {
			c.buf = buf
			return false
		}
		n, err := k.r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if !errors.Is(err, io.EOF) {
				k.err = err
			}
			k.eof = true
		}
	}
}

// emit makes buf[:n] the chunk and keeps the rest for the next.
func (k *chunker) emit(c *chunk, buf []byte, n int, long bool) bool {
	k.carry = append(k.carry, buf[n:]...)
	c.buf, c.data, c.long = buf, buf[:n], long
	return true
}

// runParallel parses r with workers scanning chunks of size bytes.
func (p *parser) runParallel(ctx context.Context, r io.Reader, workers, size int) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	slots := 2 * workers
	free := make(chan *chunk, slots)
	for range slots {
		free <- &chunk{}
	}
	todo := make(chan *chunk, slots)
	inOrder := make(chan *chunk, slots)
	k := &chunker{r: r, size: size}
	calls := p.calls != nil
	wg.Add(1 + workers)
	go func() {
		defer wg.Done()
		defer close(todo)
		defer close(inOrder)
		for first := true; ; first = false {
			var c *chunk
			select {
			case c = <-free:
			case <-ctx.Done():
				return
			}
			if !k.next(c) {
				return
			}
			c.first, c.done = first, make(chan struct{})
			c.claimed.Store(false)
			for _, ch := range [2]chan *chunk{todo, inOrder} {
				select {
				case ch <- c:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	for range workers {
		go func() {
			defer wg.Done()
			for c := range todo {
				if c.claimed.CompareAndSwap(false, true) {
					c.scan(calls)
					close(c.done)
				}
			}
		}()
	}
	base := 0
	for c := range inOrder {
		// A chunk no worker has started is scanned here rather than
		// waited for: on a busy machine the workers may not be running.
		if c.claimed.CompareAndSwap(false, true) {
			c.scan(calls)
		} else {
			select {
			case <-c.done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := p.replay(c, base); err != nil {
			return err
		}
		base += c.lines
		free <- c
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if k.err != nil {
		return fmt.Errorf("reading after line %d: %w", base, k.err)
	}
	return p.finish()
}
