package collapse

import (
	"bytes"
	"os"
	"regexp"
	"testing"
)

// The regexps of stackcollapse-perf.pl, written for Go's RE2 (which
// returns the same leftmost-first captures as perl's backtracking): \s is
// spelled out because Go's lacks \v.
const perfWS = `[\t\n\v\f\r ]`

var (
	perfHeaderRE = regexp.MustCompile(`^([^\t\n\v\f\r ].+?)` + perfWS + `+(\d+)/*(\d+)*` + perfWS + `+`)
	perfEventRE  = regexp.MustCompile(`:` + perfWS + `*(\d+)*` + perfWS + `+([^\t\n\v\f\r ]+):` + perfWS + `*$`)
	perfFrameRE  = regexp.MustCompile(`^` + perfWS + `*(\w+)` + perfWS + `*(.+) \(([^\t\n\v\f\r ]*)\)`)
)

// checkPerfMatchers compares the hand-written matchers with the regexps on
// one ASCII line (perl counts bytes, Go runes: only ASCII agrees by
// construction).
func checkPerfMatchers(t *testing.T, line []byte) {
	t.Helper()
	h, ok := perfMatchHeader(line)
	m := perfHeaderRE.FindSubmatch(line)
	if ok != (m != nil) || ok && (!bytes.Equal(h.comm, m[1]) || !bytes.Equal(h.pid, m[2]) || !bytes.Equal(h.tid, m[3])) {
		t.Fatalf("header %q: got %v %q %q %q, regexp %q", line, ok, h.comm, h.pid, h.tid, m)
	}
	ev, per, ok := perfMatchEvent(line)
	m = perfEventRE.FindSubmatch(line)
	if ok != (m != nil) || ok && (!bytes.Equal(per, m[1]) || !bytes.Equal(ev, m[2])) {
		t.Fatalf("event %q: got %v %q %q, regexp %q", line, ok, per, ev, m)
	}
	f, ok := perfMatchFrame(line)
	m = perfFrameRE.FindSubmatch(line)
	if ok != (m != nil) || ok && (!bytes.Equal(f.pc, m[1]) || !bytes.Equal(f.rawfunc, m[2]) || !bytes.Equal(f.module, m[3])) {
		t.Fatalf("frame %q: got %v %q %q %q, regexp %q", line, ok, f.pc, f.rawfunc, f.module, m)
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// TestPerfMatchersRealLines runs every line of the 13 real inputs, and
// edge cases of the regexps' backtracking, through both implementations.
func TestPerfMatchersRealLines(t *testing.T) {
	n := 0
	for _, in := range perfInputs {
		data, err := os.ReadFile(perfTestFile(t, in+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if isASCII(line) {
				checkPerfMatchers(t, line)
				n++
			}
		}
	}
	if n < 20000 {
		t.Fatalf("only %d lines checked", n)
	}
	for _, line := range []string{ // synthetic: the backtracking corner cases
		"a  123 x", "X 1234 [000] 5678.123: 1 cycles:", "java 25607/ 4794564.109216: cycles:",
		"java 1//2 3: 4 ev:", "java 0/0 1.0: 00 cycles:u:  ", "  abc (x)", "ab  (x)", "a (x)", " 7f foo (bar) (/lib/x.so)",
		"\t7f sym (/tmp/x.so (deleted))", "\t7f sym (a)b) tail", "\t7f s ( ) (", "comm 12 t: : ev:", "c 1 :ev:", "c 1 : 12 :",
		"\v7f\vsym\v(m)", "V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:",
	} {
		checkPerfMatchers(t, []byte(line))
	}
}

// FuzzPerfMatchers: the hand-written matchers agree with the regexps on
// any ASCII line.
func FuzzPerfMatchers(f *testing.F) {
	for _, s := range []string{"java 25607 4794564.109216: 1 cycles:", "\t7f1e2215d058  (/lib/libc.so)", "  abc (x)", "a  123 x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !isASCII(line) || bytes.IndexByte(line, '\n') >= 0 || len(line) > 4096 {
			return
		}
		checkPerfMatchers(t, line)
	})
}
