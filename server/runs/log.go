package runs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxLine bounds the progress line kept from a child's output.
const maxLine = 512

// runLog is a run's log file, DATA/runs/ID/log.txt: what the server says
// about the run and everything its children write to stderr (and stdout
// when it is not an output), up to a size cap. It remembers the latest
// line as the run's progress and publishes what it writes.
type runLog struct {
	mu        sync.Mutex
	f         *os.File
	size, cap int64
	truncated bool
	last      string
	partial   string
	publish   func(Event)
}

func openLog(dir string, cap int64, publish func(Event)) (*runLog, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, LogName), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	return &runLog{f: f, cap: cap, publish: publish}, nil
}

// Write never fails, so that a child is not stopped by its log: past the
// cap the text is dropped (said once in the log) but still read for the
// progress line.
func (l *runLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return len(p), nil
	}
	l.noteLines(string(p))
	l.append(p)
	return len(p), nil
}

// say writes a line of the server's own, which is not the child's
// progress.
func (l *runLog) say(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.append(fmt.Appendf(nil, "latscope serve: "+format+"\n", args...))
	}
}

// append writes what fits under the cap and publishes it.
func (l *runLog) append(p []byte) {
	offset := l.size
	keep := p
	if room := l.cap - l.size; int64(len(keep)) > room {
		keep = keep[:max(room, 0)]
	}
	text := string(keep)
	if len(keep) < len(p) && !l.truncated {
		l.truncated = true
		text += fmt.Sprintf("\n[latscope serve: log cut at %d bytes]\n", l.cap)
	}
	if text != "" {
		n, _ := l.f.WriteString(text)
		l.size += int64(n)
		l.publish(Event{Type: EventLog, Offset: offset, Text: text})
	}
	l.publish(Event{Type: EventProgress, Progress: &Progress{Line: l.last, LogBytes: l.size}})
}

// noteLines keeps the last complete non-empty line; carriage returns end
// lines too, as progress meters use them.
func (l *runLog) noteLines(s string) {
	s = l.partial + s
	cut := strings.LastIndexAny(s, "\r\n")
	if cut < 0 {
		l.partial = truncate(s, 4*maxLine)
		return
	}
	l.partial = truncate(s[cut+1:], 4*maxLine)
	lines := strings.FieldsFunc(s[:cut], func(r rune) bool { return r == '\r' || r == '\n' })
	for i := len(lines) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(lines[i]); line != "" {
			l.last = truncate(line, maxLine)
			return
		}
	}
}

// close writes the server's last word and closes the file.
func (l *runLog) close(final string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	n, _ := l.f.WriteString(final)
	l.publish(Event{Type: EventLog, Offset: l.size, Text: final})
	l.size += int64(n)
	l.f.Close()
	l.f = nil
}

// progress returns prev with the latest line and the log's size.
func (l *runLog) progress(prev Progress) Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last != "" {
		prev.Line = l.last
	}
	prev.LogBytes = l.size
	return prev
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
