package driver

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/flame/load"
)

// progress shows how far big files have been read, on one stderr line that
// rewrites itself, when stderr is a terminal and the input is large enough
// to take a while.
type progress struct {
	out     io.Writer
	enabled bool
	total   atomic.Int64
	read    atomic.Int64
	start   time.Time
	mu      sync.Mutex
	last    time.Time
	shown   bool
}

// progressMin is the input size from which progress is shown.
const progressMin = 32 << 20

func newProgress(out io.Writer, tty bool) *progress {
	return &progress{out: out, enabled: tty, start: time.Now()}
}

// forStacks hands the progress line to the stack loader.
func (p *progress) forStacks() load.Progress {
	return load.Progress{Wrap: p.wrap, Status: p.messages(), Done: p.done}
}

// wrap counts the bytes read from a file.
func (p *progress) wrap(name string, size int64, r io.Reader) io.Reader {
	p.total.Add(size)
	if at, ok := r.(io.ReaderAt); ok {
		return &countingReaderAt{countingReader{r: r, p: p}, at}
	}
	return &countingReader{r: r, p: p}
}

type countingReader struct {
	r io.Reader
	p *progress
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.add(int64(n))
	return n, err
}

// countingReaderAt counts what a parser reads at offsets of its own (the
// parallel parse of a regular file) as countingReader counts reads.
type countingReaderAt struct {
	countingReader
	at io.ReaderAt
}

func (c *countingReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.at.ReadAt(b, off)
	c.p.add(int64(n))
	return n, err
}

func (p *progress) add(n int64) {
	total := p.total.Load()
	read := min(p.read.Add(n), total) // the parallel 10046 parse reads a little past its chunks
	if !p.enabled || total < progressMin {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < 250*time.Millisecond {
		return
	}
	p.last = now
	secs := now.Sub(p.start).Seconds()
	fmt.Fprintf(p.out, "\rreading: %3.0f%%  %d of %d MB  %.0f MB/s ", 100*float64(read)/float64(total), read>>20, total>>20, float64(read)/1e6/secs)
	p.shown = true
}

// done clears the progress line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.out, "\r\033[K")
		p.shown = false
	}
}

// messages returns a writer for other stderr messages: it clears the
// progress line first so that a warning does not land in its middle.
func (p *progress) messages() io.Writer { return messageWriter{p} }

type messageWriter struct{ p *progress }

func (m messageWriter) Write(b []byte) (int, error) {
	m.p.mu.Lock()
	defer m.p.mu.Unlock()
	if m.p.shown {
		fmt.Fprint(m.p.out, "\r\033[K")
		m.p.shown = false
	}
	return m.p.out.Write(b)
}

// statusLines returns the writer sources report setup progress to: on a
// terminal each line replaces the previous one; elsewhere lines are kept.
func (p *progress) statusLines() io.Writer {
	if !p.enabled {
		return p.out
	}
	return statusWriter{p}
}

type statusWriter struct{ p *progress }

func (s statusWriter) Write(b []byte) (int, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	line := strings.TrimRight(string(b), "\r\n")
	fmt.Fprintf(s.p.out, "\r\033[K%s", line)
	s.p.shown = true
	return len(b), nil
}
