package collapse

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

func TestDetectPerf(t *testing.T) {
	for _, in := range perfInputs {
		data, err := os.ReadFile(perfTestFile(t, in+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if v := DetectPerf(data[:min(len(data), 4096)]); v != input.Yes {
			t.Errorf("%s: Detect = %v, want Yes", in, v)
		}
		if v := DetectPerf(data[:20]); v != input.NeedMore {
			t.Errorf("%s: Detect of 20 bytes = %v, want NeedMore", in, v)
		}
	}
	// perf script of a recording without call graphs: one line per sample.
	flat := "            prog 22359 13782.682223:    1001001 cpu-clock:      562b444fb236 std::_Function_handler<long (long, long), " +
		"main::{lambda(long, long)#1}>::_M_invoke+0x1a (/tmp/rec/prog)\n"
	if v := DetectPerf([]byte(flat)); v != input.Yes {
		t.Errorf("one-line samples: Detect = %v, want Yes", v)
	}
	folded, _ := collapsePerfBytes(t, mustRead(t, perfTestFile(t, "perf-vertx-stacks-01.txt")), Options{})
	dtrace := mustRead(t, perfTestFile(t, "../example-dtrace-stacks.txt"))
	for name, data := range map[string][]byte{
		"folded stacks": []byte(folded),
		"dtrace":        dtrace,
		// synthetic gdb backtrace, as gdb prints "thread apply all bt"
		"gdb":     []byte("Thread 2 (Thread 0x7f3c1f7fe700 (LWP 4242)):\n#0  0x00007f3c2e1d3d3d in poll () from /lib64/libc.so.6\n#1  0x000000000040123b in main ()\n\n"),
		"garbage": bytes.Repeat([]byte{0, 1, 2, 0xff, '\n'}, 100),
	} {
		if v := DetectPerf(data[:min(len(data), 8192)]); v != input.No {
			t.Errorf("%s: Detect = %v, want No", name, v)
		}
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPerfTruncated: the real dd input ends without the blank line after
// its last sample. By default that sample counts (as in inferno); under
// --compat perl it does not (as in the script and its golden), and a
// warning names its line. Cutting the input anywhere keeps every sample
// closed before the cut.
func TestPerfTruncated(t *testing.T) {
	data := mustRead(t, perfTestFile(t, "perf-dd-stacks-01.txt"))
	perl, d := collapsePerfBytes(t, data, Options{Perl: true})
	w := strings.Join(d.Warnings(), "\n")
	if !strings.Contains(w, "sample that starts at line 71") || !strings.Contains(w, "not counted") {
		t.Errorf("warnings %q", w)
	}
	full, d := collapsePerfBytes(t, data, Options{})
	if len(d.Warnings()) != 0 || full == perl || !strings.Contains(full, "dd;[unknown];") {
		t.Errorf("default: warnings %q, output %q", d.Warnings(), full)
	}
	cut := bytes.LastIndex(data[:len(data)/2], []byte("\n\n")) + 2
	half, _ := collapsePerfBytes(t, append(data[:cut:cut], "dd 29776 1.0: 5 cpu-clock:\n\tabc read (/lib/x.so)"...), Options{Perl: true})
	for _, l := range strings.Split(strings.TrimSpace(half), "\n") {
		if !strings.Contains(full, l[:strings.LastIndexByte(l, ' ')]) {
			t.Errorf("stack %q of the cut input is not in the full output", l)
		}
	}
	// A one-sample file without a final blank line.
	one := "a 1 1.0: 3 cpu-clock:\n\tabc f (/bin/a)"
	if got, _ := collapsePerfBytes(t, []byte(one), Options{}); got != "a;f 3\n" {
		t.Errorf("one sample: %q", got)
	}
}

// TestPerfEvents: with two events the first seen is kept, with one
// warning naming the kept event and the skipped ones (the real
// cycles/instructions input: 333 instructions then 111 cycles samples).
func TestPerfEvents(t *testing.T) {
	data := mustRead(t, perfTestFile(t, "perf-cycles-instructions-01.txt"))
	got, d := collapsePerfBytes(t, data, Options{})
	w := d.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], `kept only "instructions" samples`) || !strings.Contains(w[0], "cycles (111 samples)") {
		t.Errorf("warnings %q", w)
	}
	p := flame.New()
	CollapsePerf(Input{Name: "x", Reader: bytes.NewReader(data)}, Options{EventFilter: "cycles"}, p)
	if p.Total() != 111 {
		t.Errorf("--event-filter cycles: total %d, want 111", p.Total())
	}
	if !strings.Contains(got, "noploop;") {
		t.Errorf("output %q", got)
	}
	p = flame.New()
	CollapsePerf(Input{Name: "x", Reader: bytes.NewReader(data)}, Options{EventFilter: "nosuch"}, p)
	if p.Len() != 0 {
		t.Errorf("unknown event kept %d stacks", p.Len())
	}
}

// TestPerfOddInput: synthetic lines in the documented perf script layout
// exercising the script's odd cases, and bad lines reported as file:line.
func TestPerfOddInput(t *testing.T) {
	in := "# comment\n" +
		"my comm 12/34 [001] 1.5: 7 cpu-clock:\n" +
		"\t1 inner->in2 (/bin/a)\n" +
		"\t2 f;semi(int) (/bin/a)\n" +
		"\t3 \"quoted's\"+0x1f (/bin/a)\n" +
		"\t4 [unknown] (/usr/lib/libz.so)\n" +
		"\t5 [unknown] ([unknown])\n" +
		"\t6 (skipped-process-name) (/bin/a)\n" +
		"\t7 net/http.(*Client).Do (/bin/a)\n" +
		"\t8 ns::(anonymous namespace)::f(int) (/bin/a)\n" +
		"this is not perf\n" +
		"\n" +
		"\n" +
		"comm 9 1.6: cpu-clock:\n\n" // a sample without frames is not counted
	// stack lines come leaf first: the last one is the root; quotes
	// stay by default, go under --compat perl
	for perl, want := range map[bool]string{
		false: "my_comm-12/34;ns::(anonymous namespace)::f;net/http.(*Client).Do;[unknown <5>];[libz.so <4>];\"quoted's\";f:semi;inner;in2_[i] 7\n",
		true:  "my_comm-12/34;ns::(anonymous namespace)::f;net/http.(*Client).Do;[unknown <5>];[libz.so <4>];quoteds;f:semi;inner;in2_[i] 7\n",
	} {
		got, d := collapsePerfBytes(t, []byte(in), Options{Perl: perl, TID: true, Addrs: true})
		if got != want {
			t.Errorf("perl %v: got  %q\nwant %q", perl, got, want)
		}
		p := d.Problems()
		if len(p) != 1 || p[0].Count != 1 || p[0].First[0].Line != 11 || !strings.Contains(p[0].First[0].Reason, "this is not perf") {
			t.Errorf("perl %v: problems %+v", perl, p)
		}
	}
}

// TestPerfGarbage: binary garbage and empty input give no stacks, no
// panic, no error.
func TestPerfGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 3<<20)
	for i := range junk {
		junk[i] = byte(r.UintN(256))
	}
	for name, data := range map[string][]byte{"garbage": junk, "empty": nil, "blank lines": []byte("\n\n\n")} {
		for _, threads := range []int{1, 3} {
			got, d := collapsePerfBytes(t, data, Options{Threads: threads})
			if got != "" {
				t.Errorf("%s: output %q", name, got[:min(len(got), 100)])
			}
			if name == "garbage" && d.Count("in.txt") == 0 {
				t.Errorf("%s: no malformed lines counted", name)
			}
		}
	}
}

// TestPerfNoBlankLines: a sample longer than the chunk size forces the
// sequential path; the result equals the one-chunk parse.
func TestPerfNoBlankLines(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("big 1 1.0: 3 cpu-clock:\n")
	for i := range 5000 {
		b.WriteString("\tabc f" + strings.Repeat("x", i%7) + " (/bin/a)\n")
	}
	b.WriteString("\nsmall 2 1.0: 1 cpu-clock:\n\tabc g (/bin/a)\n\n")
	data := b.Bytes()
	want, _ := collapsePerfBytes(t, data, Options{Threads: 1})
	for _, threads := range []int{1, 2} {
		p := flame.New()
		r := &perfRun{in: Input{Name: "x", Reader: bytes.NewReader(data)}, set: perfSettings{}, threads: threads}
		if err := r.runWith(4096, 16384); err != nil {
			t.Fatal(err)
		}
		r.finish(p)
		var out bytes.Buffer
		p.WriteFolded(&out)
		if out.String() != want || !strings.HasPrefix(want, "big;") {
			t.Errorf("%d threads: got %.200q want %.200q", threads, out.String(), want)
		}
	}
}
