package postgres

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// logPollEvery is how often the followed --log file is checked for new
// lines, rotation and truncation.
const logPollEvery = 100 * time.Millisecond

// followLog follows the server log named by --log (like tail -F: from its
// end when the source starts, across rotation and truncation) and records
// each logged statement's duration into the live windows, so the log's
// statement histograms share the sampler's windows. A log it cannot read
// is reported once per outage and retried; sampling goes on.
func (s *liveSource) followLog(ctx context.Context, w *liveWindows) {
	path := s.opts.DB.Log
	p := newParser(source.Input{Name: path, Diag: s.diag}, s.opts, func(stream.Interval) error { return nil })
	sink := &logSink{w: w, seen: map[string]bool{}}
	p.add = sink.add
	t := &tailer{path: path}
	failing := false
	for {
		n, err := t.poll(p.Line)
		switch {
		case err != nil && !failing:
			failing = true
			s.diag.Warn(s.name, "cannot read the server log %s (--log): %v; sampling goes on without its statement durations, retrying", path, err)
		case err == nil:
			failing = false
		}
		if n == 0 {
			_ = p.finishPending() // a quiet log: the statement being assembled is whole
		}
		if !sleep(ctx, logPollEvery) {
			_ = p.finishPending()
			return
		}
	}
}

// logSink records the log's statements into the live windows, capping
// the per-statement series like the log format does.
type logSink struct {
	w    *liveWindows
	seen map[string]bool
}

func (l *logSink) add(end time.Time, statement string, us float64, inAll, inOwn bool) error {
	if inAll {
		l.w.record(end, AllStatements, us)
	}
	if inOwn {
		if !l.seen[statement] && len(l.seen) >= maxSeries {
			statement = otherStatements
		}
		l.seen[statement] = true
		l.w.record(end, statement, us)
	}
	return nil
}

// tailer reads the complete lines appended to a file.
type tailer struct {
	path    string
	f       *os.File
	started bool   // the first open seeks to the end: only new lines
	offset  int64  // bytes consumed from f
	partial []byte // an unfinished last line
	tooLong bool
	line    int
	buf     []byte
}

// poll hands every complete new line to fn and returns how many there
// were. A rotated file (the path names another file) is read to its end,
// then the new file from its start; a truncated file is read again from
// its start.
func (t *tailer) poll(fn func(n int, text string, tooLong bool) error) (int, error) {
	if t.f == nil {
		if err := t.open(); err != nil {
			return 0, err
		}
	}
	n, err := t.drain(fn)
	if err != nil {
		return n, err
	}
	cur, err := os.Stat(t.path)
	if err != nil {
		return n, nil // rotated away and not yet re-created: keep the old file
	}
	mine, err := t.f.Stat()
	if err != nil {
		return n, err
	}
	switch {
	case !os.SameFile(cur, mine):
		if len(t.partial) > 0 { // the old file's last line had no newline
			n++
			t.line++
			_ = fn(t.line, string(t.partial), t.tooLong)
		}
		t.close()
		m, err := t.poll(fn)
		return n + m, err
	case cur.Size() < t.offset:
		if _, err := t.f.Seek(0, io.SeekStart); err != nil {
			return n, err
		}
		t.offset, t.partial, t.tooLong, t.line = 0, t.partial[:0], false, 0
	}
	return n, nil
}

func (t *tailer) open() error {
	f, err := os.Open(t.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			t.started = true // once created, all of it is new
		}
		return err
	}
	t.offset, t.partial, t.tooLong, t.line = 0, t.partial[:0], false, 0
	if !t.started {
		if t.offset, err = f.Seek(0, io.SeekEnd); err != nil {
			f.Close()
			return err
		}
	}
	t.started = true
	t.f = f
	return nil
}

func (t *tailer) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// drain reads to the current end of the file.
func (t *tailer) drain(fn func(n int, text string, tooLong bool) error) (int, error) {
	if t.buf == nil {
		t.buf = make([]byte, 64<<10)
	}
	lines := 0
	for {
		k, err := t.f.Read(t.buf)
		t.offset += int64(k)
		data := t.buf[:k]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				t.appendPartial(data)
				break
			}
			t.appendPartial(data[:i])
			text := string(bytes.TrimSuffix(t.partial, []byte("\r")))
			t.line++
			lines++
			if ferr := fn(t.line, text, t.tooLong); ferr != nil {
				return lines, ferr
			}
			t.partial, t.tooLong = t.partial[:0], false
			data = data[i+1:]
		}
		if errors.Is(err, io.EOF) || (err == nil && k == 0) {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}

func (t *tailer) appendPartial(b []byte) {
	room := maxLineLen - len(t.partial)
	if len(b) > room {
		b, t.tooLong = b[:max(room, 0)], true
	}
	t.partial = append(t.partial, b...)
}
