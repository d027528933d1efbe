package collapse

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// otherGdbThreads counts "Thread N (" headers independently.
func otherGdbThreads(data []byte) int {
	return len(regexp.MustCompile(`(?m)^Thread \d+ \(`).FindAll(data, -1))
}

// TestGdbPythonThreads: two real gdb runs on a 4-thread python3 process:
// 8 backtraces, one sample each; the 3 sleeping workers share a stack.
func TestGdbPythonThreads(t *testing.T) {
	data := otherRead(t, "gdb-python-threads.txt")
	p, diag, folded := otherCollapse(t, GdbFormat(), "gdb", data)
	if n := otherGdbThreads(data); n != 8 || p.Total() != int64(n) {
		t.Errorf("%d thread headers, total %d", n, p.Total())
	}
	if p.Len() != 2 || len(otherProblems(diag)) != 0 {
		t.Errorf("%d stacks, %v\n%s", p.Len(), otherProblems(diag), folded)
	}
	worker := "clone3;start_thread;pythread_wrapper;thread_run;method_vectorcall;_PyObject_VectorcallTstate;" +
		"_PyEval_Vector;_PyEval_EvalFrame;_PyEval_EvalFrameDefault;do_call_core;_PyEval_Vector;_PyEval_EvalFrame;" +
		"_PyEval_EvalFrameDefault;PyObject_Vectorcall;_PyObject_VectorcallTstate;cfunction_vectorcall_O;" +
		"time_sleep;pysleep;__GI___clock_nanosleep 6\n"
	if !strings.Contains(folded, worker) {
		t.Errorf("worker stack missing:\n%s", folded)
	}
}

// TestPstackOracle: Linux pstack layout (no blank lines between threads;
// synthetic, Oracle-like names).
func TestPstackOracle(t *testing.T) {
	_, diag, folded := otherCollapse(t, GdbFormat(), "pstack", otherRead(t, "pstack-oracle-synthetic.txt"))
	want := "clone;start_thread;skgpwwait;poll 2\n" +
		"main;opiodr;opifch2;qerhnFetch;qertbFetch;kdstf000010100001km 1\n" +
		"main;opiodr;opifch2;qerjotFetch;qertbFetchByRowID;kcbgtcr 1\n"
	if folded != want || len(otherProblems(diag)) != 0 {
		t.Errorf("got\n%s", folded)
	}
}

func TestGdbFrames(t *testing.T) {
	cases := map[string]string{
		"#0  0x00007f in __GI___wait4 (pid=-1, stat_loc=0x7ffd) at ../wait4.c:30": "__GI___wait4",
		"#1  0x00005633407ee3f2 in ?? ()":                                         "??",
		"#2  time_sleep (self=<optimized out>) at ./Modules/timemodule.c:383":     "time_sleep",
		"#3  0x00007f in poll () from /lib64/libc.so.6":                           "poll",
		"#4  <signal handler called>":                                             "<signal handler called>",
		"#5  0x0000 in std::vector<std::pair<int, int> >::push_back (this=0x1)":   "std::vector<std::pair<int, int> >::push_back",
		"#6  0x0000 in ns::f;g ()":                                                "ns::f:g",
		"#12 0x0000 in main ()":                                                   "main",
	}
	for in, want := range cases {
		if got, ok := gdbFunction(in); !ok || got != want {
			t.Errorf("gdbFunction(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"#", "#x", "#0", "#0  0x1234", "# comment"} {
		if got, ok := gdbFunction(bad); ok {
			t.Errorf("gdbFunction(%q) = %q", bad, got)
		}
	}
}

func TestGdbBadInput(t *testing.T) {
	in := "#0  0x1 in a ()\n#1  0x2 in main ()\n#2  0x3\n#0  0x1 in b (x=1,\n    y=2) at f.c:3\n#1  main ()\n" +
		"\x00\x01\x02\n#0  c ()\n"
	_, diag, folded := otherCollapse(t, GdbFormat(), "bad", []byte(in))
	if folded != "c 1\nmain;a 1\nmain;b 1\n" {
		t.Errorf("got %q", folded)
	}
	want := []string{"3: frame line without a function name: skipped", "7: binary data, not text: line skipped"}
	if got := otherProblems(diag); !slices.Equal(got, want) {
		t.Errorf("problems %q", got)
	}
}

// TestGdbLive attaches gdb to a sleeping process started here.
func TestGdbLive(t *testing.T) {
	if testing.Short() {
		t.Skip("attaches gdb")
	}
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		testenv.SkipOrFail(t, "gdb not installed (apt-get install gdb)")
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	time.Sleep(100 * time.Millisecond)
	out, err := exec.Command(gdb, "-batch", "-ex", "thread apply all bt", "-p",
		strconv.Itoa(sleeper.Process.Pid)).Output()
	if err != nil || !bytes.Contains(out, []byte("#0 ")) {
		testenv.SkipOrFail(t, "gdb cannot attach here: %v", err)
	}
	if f, _ := Detect(OtherFormats(), out); f.Name != "gdb" {
		t.Errorf("live output detected as %q:\n%s", f.Name, out)
	}
	p, diag, folded := otherCollapse(t, GdbFormat(), "live", out)
	if p.Len() != 1 || p.Total() != int64(otherGdbThreads(out)) || len(otherProblems(diag)) != 0 {
		t.Errorf("%d stacks, total %d:\n%s\nfrom\n%s", p.Len(), p.Total(), folded, out)
	}
	if !strings.Contains(folded, "nanosleep") {
		t.Errorf("no nanosleep frame: %s", folded)
	}
}

func FuzzGdb(f *testing.F) {
	data, err := os.ReadFile("testdata/others/gdb-python-threads.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:4000])
	f.Add([]byte("Thread 1 (x):\n#0  0x1 in a ()\n#1  <signal handler called>\n\n#0  b\n"))
	f.Fuzz(func(t *testing.T, in []byte) { otherFuzzCheck(t, GdbFormat(), in) })
}
