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

// The parallel parse of a large file: workers read chunks of the file
// (pread, each its own byte range, cut at line boundaries, so no thread
// copies the input for another) and scan them at the same time (finding the
// lines that matter and reading their WAIT and call fields), and the parser
// replays the chunks' lines in file order through the sequential parser's
// own code; the replaying goroutine scans later chunks itself while the
// next one is not ready, so it is one of the workers. Everything that
// depends on earlier lines (timestamps and their anchoring, trcsess
// sections, the instance, series, windows and runs, held waits, relative
// time, calls state, block reads in file order) is therefore done by the
// one replay, exactly as sequentially.
//
// Workers assume they are outside SQL text: a worker does not know whether
// its chunk starts (or a line of it is) inside the text of a PARSING IN
// CURSOR or PARSE ERROR section. Nor do they record lines that could only
// give a pending timestamp its tim (any line with a tim= field). Whenever
// the replay is inside SQL text or a timestamp is pending, it reads the
// chunk's raw lines itself, as the sequential parse does, until the text
// ends and the timestamp is tied, then resumes with the worker's lines
// after that point. Both are a small part of a trace.
const (
	// parallelChunk is the size of the chunks scanned in parallel.
	parallelChunk = 256 << 10
	// parallelMinSize is the smallest input parsed in parallel: smaller
	// ones are not worth starting goroutines for.
	parallelMinSize = 4 * parallelChunk
)

// parallelWorkers returns how many workers parse in, 0 for the sequential
// parse: one processor, a pipe, a compressed file, --follow or a small
// file.
func parallelWorkers(in source.Input, opts source.Options) int {
	n := runtime.GOMAXPROCS(0)
	if n < 2 || opts.Follow || in.At == nil || in.Size < parallelMinSize {
		return 0
	}
	return n
}

// chunk is a run of whole lines of the input and what a worker read of it.
type chunk struct {
	buf   []byte // the chunk's storage, reused
	data  []byte // the lines
	first bool   // data starts with the input's first line
	err   error  // reading the chunk failed
	// lines is how many lines data holds.
	lines int
	recs  []record
	waits []waitLine    // the fields of WAIT lines
	calls []callLine    // and of call lines (calls as series)
	ready chan struct{} // receives once the chunk is loaded and scanned
}

// record is one line a worker found worth handling: every line outside SQL
// text that is not empty or indented.
type record struct {
	at, end   int32 // the line's bytes in data (cut at maxLineLen)
	line      int32 // its number in the chunk, from 1
	pre       int32 // its fields in waits or calls (by kind)
	kind      scanKind
	truncated bool // the line is longer than maxLineLen
	// textEnd, for a PARSING IN CURSOR or PARSE ERROR line, is where the
	// SQL text after it ends in data (0 when the worker could not tell),
	// textLines how many lines the text has.
	textEnd, textLines int32
}

// sqlFollow follows, in a worker, the SQL text after a PARSING IN CURSOR
// or PARSE ERROR line read as a trace line, as parser.sqlText does.
type sqlFollow struct {
	rec         int // the line's record, -1 when no text is followed
	mode        sqlMode
	seen, limit int64
}

// next reads a line of the text; done says the text ended with it, ok
// false that the worker cannot tell (a long line, a statement past its
// limit: the replay reads such text itself).
func (f *sqlFollow) next(line []byte, long bool) (done, ok bool) {
	if long {
		return false, false
	}
	if bytes.Equal(trimCR(line), endOfStmt) {
		return true, true
	}
	f.seen += int64(len(line)) + 1
	if f.mode == sqlStatement {
		return false, f.seen <= f.limit
	}
	return f.seen >= f.limit-2, true
}

// scanKind says which fields of a line a worker read.
type scanKind uint8

const (
	scannedNone scanKind = iota
	scannedWait
	scannedCall
)

// scan finds the chunk's lines worth handling and reads the fields of its
// WAIT lines (and call lines when calls are series).
func (c *chunk) scan(calls bool) {
	c.recs, c.waits, c.calls = c.recs[:0], c.waits[:0], c.calls[:0]
	data := c.data
	n := 0
	text := sqlFollow{rec: -1}
	for at := 0; at < len(data); {
		end := len(data)
		if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
			end = at + i
		}
		n++
		if text.rec < 0 && !calls && len(c.recs) > 0 && c.recs[len(c.recs)-1].line == int32(n-1) {
			// The previous line was recorded: follow its text if it
			// starts one (calls by SQL need the text: not followed).
			text.start(c, data)
		}
		if text.rec >= 0 {
			done, ok := text.next(data[at:end], end-at >= maxLineLen)
			if done {
				r := &c.recs[text.rec]
				r.textEnd, r.textLines = int32(end+1), int32(n)-r.line
			}
			if done || !ok {
				text.rec = -1
			}
		}
		switch {
		case end-at >= maxLineLen:
			c.add(at, at+maxLineLen, n, true, calls)
		case end > at && mayMatter(data[at], calls):
			c.add(at, end, n, false, calls)
		}
		at = end + 1
	}
	c.lines = n
}

// start follows the text after the chunk's last record if it is a
// PARSING IN CURSOR or PARSE ERROR line.
func (f *sqlFollow) start(c *chunk, data []byte) {
	r := c.recs[len(c.recs)-1]
	if r.truncated {
		return
	}
	line := trimCR(data[r.at:r.end])
	switch {
	case bytes.HasPrefix(line, parsingPrefix):
		f.mode = sqlStatement
	case bytes.HasPrefix(line, parseErrorPrefix):
		f.mode = sqlParseError
	default:
		return
	}
	f.rec, f.seen, f.limit = len(c.recs)-1, 0, sqlLimitOf(line, f.mode)
}

// mayMatter says whether a line starting with b may be more to handle
// (outside SQL text) than a tim for a pending timestamp: most lines (binds,
// calls, SQL text, STAT) are skipped on their first byte.
func mayMatter(b byte, calls bool) bool {
	switch b {
	case 'W', '*', 'P', 'T', 'O', 'I', utf8BOM[0]:
		return true
	case 'E', 'F', 'C':
		return calls
	}
	return false
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
// Lines that could only resolve a pending timestamp are not recorded: the
// replay reads the lines after a timestamp itself (see rawLines).
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
		if p.sqlMode != sqlNone || p.pending {
			pos := 0
			if prevEnd >= 0 {
				pos = min(lineEnd(c.data, prevEnd)+1, len(c.data))
			}
			end, line, err := p.rawLines(c, pos, base, prevLine)
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
			if p.sqlMode != sqlNone || p.pending {
				break // the text or the wait for a tim goes on in the next chunk
			}
			continue
		}
		if i == len(c.recs) {
			break
		}
		r := &c.recs[i]
		i++
		p.line = base + int(r.line)
		var err error
		switch {
		case r.kind == scannedWait && p.line != 1:
			// What handle does with a WAIT line outside SQL text.
			err = p.wait(trimCR(c.data[r.at:r.end]), c.waits[r.pre])
		case r.kind == scannedWait:
			err = p.handle(c.data[r.at:r.end], r.truncated, scanned{wait: &c.waits[r.pre]})
		case r.kind == scannedCall:
			err = p.handle(c.data[r.at:r.end], r.truncated, scanned{call: &c.calls[r.pre]})
		default:
			err = p.handle(c.data[r.at:r.end], r.truncated, scanned{})
		}
		if err != nil {
			return err
		}
		prevEnd, prevLine = int(r.end), int(r.line)
		if r.textEnd > 0 && p.sqlMode != sqlNone {
			// The worker followed the text to its end as sqlText does.
			p.sqlMode = sqlNone
			prevEnd, prevLine = int(r.textEnd)-1, int(r.line+r.textLines)
			for i < len(c.recs) && c.recs[i].at < r.textEnd {
				i++
			}
		}
	}
	p.line = base + c.lines
	return nil
}

// rawLines reads the chunk's lines from pos on, as the sequential parse
// does, while they are SQL text (which the workers could not tell) or a
// timestamp waits for the tim of the next line that has one (which the
// workers did not record). It returns where the first line it did not read
// starts and the number of the last line it read.
func (p *parser) rawLines(c *chunk, pos, base, line int) (int, int, error) {
	data := c.data
	for pos < len(data) && (p.sqlMode != sqlNone || p.pending) {
		end := lineEnd(data, pos)
		line++
		text, truncated := data[pos:end], false
		pos = end + 1
		if len(text) >= maxLineLen {
			text, truncated = text[:maxLineLen], true
		} else if p.sqlMode == sqlNone && (len(text) == 0 || text[0] == ' ' || text[0] == '\t') {
			continue // as run skips them
		}
		p.line = base + line
		if err := p.handle(text, truncated, scanned{}); err != nil {
			return 0, 0, err
		}
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

// readTail is how far past its nominal end a chunk is first read, to find
// the end of its last line (read further when that is not enough).
const readTail = 4 << 10

// load reads chunk k of the input r of total bytes: the lines that start in
// [k*size, (k+1)*size), each to its newline (or EOF), but an over-long line
// only to maxLineLen, all the sequential parse looks at. A chunk where no
// line starts is empty.
func (c *chunk) load(r io.ReaderAt, total, k int64, size int) {
	lo := k * int64(size)
	hi := min(lo+int64(size), total)
	// The byte before lo says whether a line starts at lo. Reading from a
	// multiple of 64 keeps the kernel's copy aligned with the buffer: a
	// copy of misaligned bytes is several times slower on some processors.
	from := max(lo-1, 0) &^ 63
	c.first, c.data, c.err = k == 0, nil, nil
	buf, eof := c.readAt(r, c.buf[:0], from, min(hi+readTail, total))
	if c.err != nil {
		return
	}
	start := 0
	if k > 0 {
		before := int(lo - 1 - from)
		i := -1
		if before < len(buf) { // else the file shrank since it was measured
			i = bytes.IndexByte(buf[before:min(int(hi-from)-1, len(buf))], '\n')
		}
		if i < 0 {
			c.buf, c.data = buf, buf[:0]
			return
		}
		start = before + i + 1
	}
	// The last line starts after the last newline before hi-1.
	last := start
	if j := bytes.LastIndexByte(buf[start:max(min(int(hi-1-from), len(buf)), start)], '\n'); j >= 0 {
		last = start + j + 1
	}
	end, searched := 0, last
	for {
		if j := bytes.IndexByte(buf[searched:], '\n'); j >= 0 {
			end = searched + j + 1
			break
		}
		limit := min(from+int64(last)+maxLineLen, total) - from
		if eof || int64(len(buf)) >= limit {
			end = int(min(int64(len(buf)), limit))
			break
		}
		searched = len(buf)
		buf, eof = c.readAt(r, buf, from+int64(len(buf)), min(from+int64(len(buf))+64<<10, from+limit))
		if c.err != nil {
			return
		}
	}
	c.buf, c.data = buf, buf[start:end]
}

// readAt appends the input's bytes [at, to) to buf; eof says the input
// ended before to (it changed since it was measured).
func (c *chunk) readAt(r io.ReaderAt, buf []byte, at, to int64) ([]byte, bool) {
	n := len(buf)
	want := n + int(to-at)
	if cap(buf) < want {
		buf = append(buf[:n:n], make([]byte, want-n)...)
	}
	buf = buf[:want]
	m, err := r.ReadAt(buf[n:], at)
	buf = buf[:n+m]
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return buf, m < want-n
}

// runParallel parses the input r of total bytes, chunks of size bytes
// being loaded and scanned by workers goroutines at the same time: the
// caller's goroutine replays them in file order and, while the next one is
// not ready, loads and scans a later one itself, so it is one of the
// workers.
func (p *parser) runParallel(ctx context.Context, r io.ReaderAt, total int64, workers, size int) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	chunks := (total + int64(size) - 1) / int64(size)
	// A chunk is claimed with a token and gives it back once replayed:
	// at most slots chunks are in memory, chunk k in ring[k%slots].
	slots := 2 * workers
	ring := make([]*chunk, slots)
	tokens := make(chan struct{}, slots)
	for i := range ring {
		ring[i] = &chunk{ready: make(chan struct{}, 1)}
		tokens <- struct{}{}
	}
	var next atomic.Int64
	calls := p.calls != nil
	// claim loads and scans the next chunk nobody has claimed; false when
	// there is none.
	claim := func() bool {
		k := next.Add(1) - 1
		if k >= chunks {
			return false
		}
		c := ring[k%int64(slots)]
		c.load(r, total, k, size)
		if c.err == nil {
			c.scan(calls)
		}
		c.ready <- struct{}{}
		return true
	}
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() {
			defer wg.Done()
			for {
				select {
				case <-tokens:
				case <-ctx.Done():
					return
				}
				if !claim() {
					return
				}
			}
		}()
	}
	base, more := 0, true
	for k := range chunks {
		c := ring[k%int64(slots)]
		if err := p.await(ctx, c, tokens, &more, claim); err != nil {
			return err
		}
		if c.err != nil {
			return fmt.Errorf("reading after line %d: %w", base, c.err)
		}
		if err := p.replay(c, base); err != nil {
			return err
		}
		base += c.lines
		tokens <- struct{}{}
	}
	return p.finish()
}

// await returns once c is ready, claiming later chunks meanwhile while
// there are some (more) and a slot is free.
func (p *parser) await(ctx context.Context, c *chunk, tokens chan struct{}, more *bool, claim func() bool) error {
	for {
		select {
		case <-c.ready:
			return nil
		default:
		}
		free := tokens
		if !*more {
			free = nil
		}
		select {
		case <-c.ready:
			return nil
		case <-free:
			*more = claim()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
