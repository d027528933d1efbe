package collapse

import (
	"bytes"
	"strings"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

// GdbFormat collapses gdb backtraces as the poor man's profiler gathers
// them (gdb -batch -ex 'thread apply all bt' -p PID, run repeatedly and
// concatenated; Linux pstack prints the same), like FlameGraph's
// stackcollapse-gdb.pl: each thread's backtrace is one sample. A frame
// "#3  0x… in func (args) at file.c:12" or "#3  func (args) from lib.so"
// gives "func"; "#4  <signal handler called>" is kept whole; "??" stays.
// A backtrace ends at a "Thread" header or at any line that is not a
// frame; indented lines (arguments wrapped by gdb) continue the frame.
func GdbFormat() Format {
	return Format{
		Name: "gdb",
		Description: "gdb/pstack backtraces (gdb -batch -ex 'thread apply all bt' -p PID, repeated): " +
			"\"Thread N (...)\" headers and \"#0  0x... in func (...) at file:line\" frames; recognised by " +
			"its first Thread or #0 line after gdb's messages; each thread's backtrace counts one sample",
		Detect:   detectGdb,
		Collapse: collapseGdb,
	}
}

// gdbDetectGiveUp: a prefix of more than 64 KiB of chatter is not gdb's.
const gdbDetectGiveUp = 64<<10 + 1

// detectGdb skips the messages gdb prints on attaching, then wants a
// "Thread N (" header or a "#0 " frame. It looks at every complete line,
// not txtDetectScan's first 64: gdb says "[New LWP n]" once per thread.
func detectGdb(prefix []byte) input.Verdict {
	scan := input.LineScan{GiveUp: gdbDetectGiveUp}
	for l := range scan.Lines(prefix) {
		switch {
		case isGdbChatter(l.Text):
			continue
		case isGdbThread(l.Text):
			return input.Yes
		case bytes.HasPrefix(l.Text, []byte("#0 ")):
			if _, ok := gdbFunction(string(l.Text)); ok {
				return input.Yes
			}
		}
		return input.No
	}
	return scan.Undecided(prefix)
}

// isGdbChatter matches what gdb prints before the first backtrace.
func isGdbChatter(line []byte) bool {
	s := string(line)
	if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "[") || strings.HasPrefix(s, "\t") {
		// "[New LWP 12]", "[Thread debugging using libthread_db enabled]",
		// the tab-indented commands of the auto-load advice.
		return true
	}
	for _, p := range []string{"Using host libthread_db", "warning:", "Reading symbols", "Attaching to",
		"Download", "(No debugging symbols", "Missing separate debuginfo", "Debuginfod", "Enable debuginfod",
		// The auto-load safe-path advice gdb prints for a helper script.
		"To enable execution of", "To completely disable", "For more information about", "line to your configuration",
		"\"Auto-loading safe path\""} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	// The stop location: "0x00007f… in clock_nanosleep () from /lib/…" or
	// "clock_nanosleep (clock_id=0, …) at ../clock_nanosleep.c:71", and the
	// source line gdb echoes after it ("71\t../file.c: No such file…").
	if strings.HasPrefix(s, "0x") && strings.Contains(s, " in ") {
		return true
	}
	if strings.Contains(s, ") at ") || strings.Contains(s, ") from ") {
		_, ok := gdbFunction("#0  " + s)
		return ok
	}
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	return digits > 0 && digits < len(s) && s[digits] == '\t'
}

// isGdbThread matches "Thread 2 (Thread 0x7f… (LWP 12) "name"):".
func isGdbThread(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("Thread "))
	if !ok {
		return false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	return i > 0 && bytes.HasPrefix(rest[i:], []byte(" ("))
}

// gdbFunction returns the function of a "#N ..." frame line.
func gdbFunction(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "#")
	if !ok {
		return "", false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i == len(rest) || rest[i] != ' ' {
		return "", false
	}
	rest = strings.TrimLeft(rest[i:], " ")
	if strings.HasPrefix(rest, "0x") {
		_, after, found := strings.Cut(rest, " in ")
		if !found {
			return "", false
		}
		rest = after
	}
	if strings.HasPrefix(rest, "<") { // <signal handler called>, <function called from gdb>
		return rest, true
	}
	for _, end := range []string{" (", " at ", " from "} {
		if j := strings.Index(rest, end); j >= 0 {
			rest = rest[:j]
		}
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return "", false
	}
	return strings.ReplaceAll(rest, ";", ":"), true
}

// gdbCollapser holds the backtrace being read.
type gdbCollapser struct {
	p      *flame.Profile
	in     Input
	frames []string // leaf (#0) first
	join   strings.Builder
}

func collapseGdb(in Input, _ Options, p *flame.Profile) error {
	c := gdbCollapser{p: p, in: in}
	err := txtEachLine(in, c.line)
	c.flush()
	return err
}

func (c *gdbCollapser) line(l txtLine) {
	text := string(l.text)
	if strings.HasPrefix(text, "#0 ") {
		c.flush() // a new backtrace even without a line between the two
	}
	if strings.HasPrefix(text, "#") {
		if fn, ok := gdbFunction(text); ok {
			c.frames = append(c.frames, fn)
			return
		}
		c.in.Diag.Malformed(c.in.Name, l.n, "frame line without a function name: skipped")
		return
	}
	if len(c.frames) > 0 && txtIsIndented(l.text) && !txtIsBlank(l.text) {
		return // the rest of a frame gdb wrapped
	}
	c.flush()
}

// flush counts the backtrace read so far as one sample.
func (c *gdbCollapser) flush() {
	if len(c.frames) == 0 {
		return
	}
	c.join.Reset()
	for i := len(c.frames) - 1; i >= 0; i-- {
		c.join.WriteString(c.frames[i])
		if i > 0 {
			c.join.WriteByte(';')
		}
	}
	c.p.Add(c.join.String(), 1)
	c.frames = c.frames[:0]
}
