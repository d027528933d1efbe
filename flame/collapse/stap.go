package collapse

import (
	"bytes"
	"strings"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

// StapFormat collapses SystemTap print_backtrace()/print_ubacktrace() (or
// print_stack()) output, each stack followed by its count, as FlameGraph's
// stackcollapse-stap.pl does: " 0xffffffff8103ce3b : native_safe_halt+0xb/0x10
// [kernel]" becomes "native_safe_halt" (the "+off/size [module]" tail and
// the "address : " head are cut; an address alone stays).
func StapFormat() Format {
	return Format{
		Name: "stap",
		Description: "SystemTap backtraces (print_backtrace/print_ubacktrace/print_stack), frames leaf first as " +
			"\"0xADDR : func+off/size [module]\", each stack followed by a count line; recognised by its " +
			"first frame line; counts are per-stack totals",
		Detect:   detectStap,
		Collapse: collapseStap,
	}
}

// detectStap says Yes when the first non-blank line is a SystemTap frame.
func detectStap(prefix []byte) input.Verdict {
	for l := range txtDetectScan().Lines(prefix) {
		if l.Blank() {
			continue
		}
		if isStapFrame(bytes.TrimSpace(l.Text)) {
			return input.Yes
		}
		return input.No
	}
	return input.NeedMore
}

// isStapFrame matches "0x<hex> : <something>".
func isStapFrame(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("0x")) {
		return false
	}
	i := 2
	for i < len(line) && stapHexDigit(line[i]) {
		i++
	}
	return i > 2 && bytes.HasPrefix(line[i:], []byte(" : ")) && len(line) > i+3
}

func stapHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func collapseStap(in Input, _ Options, p *flame.Profile) error {
	c := stackCounter{in: in, p: p}
	err := txtEachLine(in, func(l txtLine) { c.line(l, stapFrame) })
	c.finish()
	return err
}

// stapFrame applies stackcollapse-stap.pl's s/\+[^+]*$//; s/.* : //.
func stapFrame(frame string) string {
	if i := strings.LastIndexByte(frame, '+'); i >= 0 {
		frame = frame[:i]
	}
	if i := strings.LastIndex(frame, " : "); i >= 0 {
		frame = frame[i+3:]
	}
	if frame == "" {
		return "-"
	}
	return strings.ReplaceAll(frame, ";", ":")
}
