package collapse

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestDTraceExample collapses FlameGraph's example-dtrace-stacks.txt (a
// real ustack/stack aggregation from illumos) and pins its numbers.
func TestDTraceExample(t *testing.T) {
	data, err := os.ReadFile(testenv.DataFile(t, "flamegraph/example-dtrace-stacks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p, diag, folded := otherCollapse(t, DTraceFormat(), "example-dtrace-stacks.txt", data)
	if probs := otherProblems(diag); len(probs) > 0 {
		t.Errorf("problems: %v", probs)
	}
	// 3411 count lines summing to 57441 after the 3 header lines, merged
	// into 434 distinct stacks once offsets are stripped.
	nCounts, total := otherCountLines(t, data, 3)
	if nCounts != 3411 || total != 57441 {
		t.Fatalf("independent count: %d lines, total %d", nCounts, total)
	}
	if p.Len() != 434 || p.Total() != total {
		t.Errorf("got %d stacks, total %d; want 434, %d", p.Len(), p.Total(), total)
	}
	lines, sum := otherFoldedTotal(t, folded)
	if lines != 434 || sum != total {
		t.Errorf("folded text: %d lines, total %d", lines, sum)
	}
	for _, want := range []string{"genunix`open 17\n", "genunix`syscall_mstate 89\n"} {
		if !bytes.Contains([]byte(folded), []byte(want)) {
			t.Errorf("missing %q", want)
		}
	}
	inferno := filepath.Join(os.Getenv("HOME"), ".cargo", "bin", "inferno-collapse-dtrace")
	if _, err := os.Stat(inferno); err != nil {
		testenv.SkipOrFail(t, "inferno-collapse-dtrace not installed (cargo install inferno)")
	}
	want, err := exec.Command(inferno, testenv.DataFile(t, "flamegraph/example-dtrace-stacks.txt")).Output()
	if err != nil {
		t.Fatalf("inferno-collapse-dtrace: %v", err)
	}
	if folded != string(want) {
		t.Errorf("differs from inferno-collapse-dtrace:\n%s", firstDiff(folded, string(want)))
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want string) string {
	g, w := bytes.Split([]byte(got), []byte("\n")), bytes.Split([]byte(want), []byte("\n"))
	for i := range min(len(g), len(w)) {
		if !bytes.Equal(g[i], w[i]) {
			return "line " + strconv.Itoa(i+1) + ": got  " + string(g[i]) + "\n        want " + string(w[i])
		}
	}
	return "lengths differ"
}

// TestDTraceFrames pins the frame tidying, checked against
// inferno-collapse-dtrace 0.12 on the same frames.
func TestDTraceFrames(t *testing.T) {
	cases := map[string]string{
		"libc.so.1`foo+0x1":                 "libc.so.1`foo",
		"a.out`ns::Cls::meth(int)+0x5":      "a.out`ns::Cls::meth",
		"a.out`ns::Tpl<int>::go+0x5":        "a.out`ns::Tpl",
		"a.out`x;y+0x3":                     "a.out`x:y",
		"a.out`inl->inner+0x3":              "a.out`inl;inner_[i]",
		"0xfeedface":                        "0xfeedface",
		"a.out`plus+1+0x4":                  "a.out`plus+1",
		"a.out`Ljava/lang/Thread;::run+0x4": "a.out`Ljava/lang/Thread:::run",
		"a.out`operator<<+0x1":              "a.out`operator<<",
		"+0x1":                              "-",
		"unix`0xfffffffffb800c91":           "unix`0xfffffffffb800c91",
		"genunix`kmem_cpu_reload+0x20":      "genunix`kmem_cpu_reload",
	}
	for in, want := range cases {
		if got := dtraceFrame(in); got != want {
			t.Errorf("dtraceFrame(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDTraceLayout: synthetic inputs in DTrace's layout (a header, blank
// lines, CRLF, counts with trailing blanks, zero counts), results checked
// against inferno-collapse-dtrace 0.12 except where noted.
func TestDTraceLayout(t *testing.T) {
	in := "CPU     ID                    FUNCTION:NAME\n  0  64091                        :tick-60s \n\n\n" +
		"   a.out`foo+0x1  \n   a.out`main+0x10\n   1  \n\n" +
		"   a.out`bar+0x1\r\n   a.out`main\r\n   2\r\n\n" +
		"   a.out`q+0x1\n   a.out`main\n   0\n"
	p, diag, folded := otherCollapse(t, DTraceFormat(), "synthetic", []byte(in))
	want := "a.out`main;a.out`bar 2\na.out`main;a.out`foo 1\na.out`main;a.out`q 0\n"
	if folded != want || p.Total() != 3 || len(otherProblems(diag)) != 0 {
		t.Errorf("got %q (%v)", folded, otherProblems(diag))
	}
	// Without dtrace's header (dtrace -q), the first stack is kept; the
	// peers drop the first three lines blindly and lose it.
	_, _, folded = otherCollapse(t, DTraceFormat(), "synthetic", []byte("   a.out`foo+0x1\n   a.out`main\n   1\n"))
	if folded != "a.out`main;a.out`foo 1\n" {
		t.Errorf("no header: %q", folded)
	}
}

// TestDTraceBadInput: clear messages with line numbers, the good stacks
// kept.
func TestDTraceBadInput(t *testing.T) {
	in := "CPU ID FUNCTION:NAME\n 0 1 :tick-60s\n\n" +
		"   a.out`foo+0x1\n   a.out`main\n   5\n" + // 4-6 good
		"   7\n" + // 7: count without a stack
		"   a.out`x\x00\xff\n" + // 8: binary
		"   a.out`bar\n   99999999999999999999\n" + // 9-10: count too large
		"   a.out`baz\n   a.out`main\n" // 11-12: truncated
	p, diag, folded := otherCollapse(t, DTraceFormat(), "bad.txt", []byte(in))
	if folded != "a.out`main;a.out`foo 5\n" || p.Len() != 1 {
		t.Errorf("got %q", folded)
	}
	want := []string{
		"7: count 7 without a stack before it: skipped",
		"8: binary data, not text: line skipped",
		"10: count 99999999999999999999 too large: stack skipped",
		"11: stack without a count line at the end of the input (truncated?): skipped",
	}
	if got := otherProblems(diag); !slices.Equal(got, want) {
		t.Errorf("problems:\n%q\nwant\n%q", got, want)
	}
	// Empty input: nothing, no error.
	if p, diag, _ := otherCollapse(t, DTraceFormat(), "empty", nil); p.Len() != 0 || diag.Count("empty") != 0 {
		t.Errorf("empty input: %d stacks", p.Len())
	}
}

func FuzzDTrace(f *testing.F) {
	data, err := os.ReadFile(testenv.DataFile(f, "flamegraph/example-dtrace-stacks.txt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:4000])
	f.Add([]byte("CPU ID FUNCTION:NAME\n\n\n  a`b+0x1\n  a`c->d\n  3\n  4\n"))
	f.Fuzz(func(t *testing.T, in []byte) { otherFuzzCheck(t, DTraceFormat(), in) })
}

// otherFuzzCheck collapses arbitrary input: no panic, no error from a
// bytes.Reader, well-formed stacks.
func otherFuzzCheck(t *testing.T, f Format, in []byte) {
	f.Detect(in)
	p, _, folded := otherCollapse(t, f, "fuzz", in)
	for _, s := range p.InOrder() {
		if s.Frames == "" || bytes.ContainsAny([]byte(s.Frames), "\n") || s.Count < 0 || s.Base < 0 {
			t.Fatalf("bad stack %q %d %d", s.Frames, s.Base, s.Count)
		}
	}
	if n := bytes.Count([]byte(folded), []byte("\n")); n != p.Len() {
		t.Fatalf("%d folded lines for %d stacks", n, p.Len())
	}
}
