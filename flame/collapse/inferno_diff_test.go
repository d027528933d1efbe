package collapse

// Differential tests against inferno (inferno-collapse-perf and
// inferno-collapse-dtrace 0.12.8, which CI installs): the default
// collapse must give inferno's folded lines, as a set, on real profiles
// from the test data, on profiles recorded here with perf, and on
// generated input with awkward names. The differences that remain by
// design are in docs/flamegraphs.md; the inputs avoid them.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// infernoCase is one option set, as latscope Options and inferno flags.
type infernoCase struct {
	name  string
	opts  Options
	flags []string
}

// infernoPerfCases are the perf options both tools have.
var infernoPerfCases = []infernoCase{
	{"default", Options{}, nil},
	{"pid", Options{PID: true}, []string{"--pid"}},
	{"tid", Options{TID: true}, []string{"--tid"}},
	{"kernel", Options{Kernel: true}, []string{"--kernel"}},
	{"jit", Options{JIT: true}, []string{"--jit"}},
	{"all", Options{All: true}, []string{"--all"}},
	{"addrs", Options{Addrs: true}, []string{"--addrs"}},
}

// foldedLines returns the lines of folded text, sorted.
func foldedLines(folded []byte) []string {
	lines := strings.Split(strings.TrimSuffix(string(folded), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	slices.Sort(lines)
	return lines
}

// infernoFolded runs an inferno collapser on data.
func infernoFolded(t testing.TB, tool string, data []byte, flags ...string) []string {
	t.Helper()
	cmd := exec.Command(tool, flags...)
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(tool), flags, err, stderr.Bytes())
	}
	return foldedLines(out)
}

// latscopeFolded collapses data with format f.
func latscopeFolded(t testing.TB, f Format, data []byte, opts Options) []string {
	t.Helper()
	p := flame.New()
	in := Input{Name: "in", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5)}
	if err := f.Collapse(in, opts, p); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.WriteFolded(&out); err != nil {
		t.Fatal(err)
	}
	return foldedLines(out.Bytes())
}

// lineSetDiff describes how two sorted line sets differ (empty: equal).
func lineSetDiff(got, want []string) string {
	var only []string
	for _, l := range got {
		if _, ok := slices.BinarySearch(want, l); !ok {
			only = append(only, "  latscope only: "+l)
		}
	}
	for _, l := range want {
		if _, ok := slices.BinarySearch(got, l); !ok {
			only = append(only, "  inferno only:  "+l)
		}
	}
	if len(only) == 0 && len(got) != len(want) {
		return "duplicate lines differ"
	}
	if len(only) > 8 {
		only = append(only[:8], "  ...")
	}
	return strings.Join(only, "\n")
}

// differential compares one input under every case and returns how many
// comparisons were made and how many were identical.
func differential(t *testing.T, tool string, f Format, label string, data []byte, cases []infernoCase) (runs, same int) {
	t.Helper()
	for _, c := range cases {
		opts := c.opts
		opts.Threads = 2
		want := infernoFolded(t, tool, data, c.flags...)
		got := latscopeFolded(t, f, data, opts)
		runs++
		if d := lineSetDiff(got, want); d != "" {
			t.Errorf("%s, %s: differs from %s:\n%s", label, c.name, filepath.Base(tool), d)
			continue
		}
		same++
	}
	return runs, same
}

// TestInfernoPerfRealProfiles: FlameGraph's 13 real perf inputs, in the
// seven option sets.
func TestInfernoPerfRealProfiles(t *testing.T) {
	tool := testenv.Inferno(t, "inferno-collapse-perf")
	runs, same := 0, 0
	for _, in := range perfInputs {
		r, s := differential(t, tool, PerfFormat(), in, mustRead(t, perfTestFile(t, in+".txt")), infernoPerfCases)
		runs, same = runs+r, same+s
	}
	t.Logf("%d of %d comparisons identical", same, runs)
}

// TestInfernoDTraceRealProfile: FlameGraph's DTrace example.
func TestInfernoDTraceRealProfile(t *testing.T) {
	tool := testenv.Inferno(t, "inferno-collapse-dtrace")
	data := mustRead(t, testenv.DataFile(t, "flamegraph/example-dtrace-stacks.txt"))
	differential(t, tool, DTraceFormat(), "example-dtrace-stacks", data, []infernoCase{{"default", Options{}, nil}})
}

// Awkward names for generated inputs: C++ templates, lambdas,
// std::function, anonymous namespaces and operators; Go methods; Rust
// generics, closures and partly demangled symbols; Java inlining; quotes,
// semicolons, spaces, offsets and LLVM suffixes.
var awkwardNames = []string{
	"main", "std::function<int (int, int)>::operator()(int, int) const",
	"main::{lambda(int)#1}::operator()(int) const", "void std::__invoke_impl<void, main::{lambda()#2}>(std::__invoke_other, main::{lambda()#2}&&)",
	"std::vector<std::pair<int, std::string>, std::allocator<std::pair<int, std::string> > >::push_back(std::pair<int, std::string> const&)",
	"(anonymous namespace)::worker(int)", "ns::(anonymous namespace)::Impl::run()", "std::operator<<(std::ostream&, char const*)",
	"operator new(unsigned long)", "Foo::operator()", "net/http.(*Client).Do", "runtime.goexit.abi0", "main.main.func1",
	"core::ptr::drop_in_place<alloc::vec::Vec<u8>>", "<alloc::vec::Vec<T> as core::ops::Drop>::drop",
	"std::rt::lang_start::{{closure}}", "app::worker::h0123456789abcdef", "_$LT$app..Queue$LT$T$GT$$u20$as$u20$core..ops..Drop$GT$::drop::hfedcba9876543210",
	"Ljava/lang/Thread;::run", "Interpreter", "LFoo;.bar->Lbaz/Qux;.inl->inner2", "a->b", "with;semi", "\"quoted's\"",
	"name with spaces", "foo.llvm.1234567890", "bar+0x1f", "baz+0xABC", "qux+0x", "[unknown]", "(anon-process)",
	"f(int)::{lambda(auto:1)#1}", "std::_Function_handler<void (), main::{lambda()#1}>::_M_invoke(std::_Any_data const&)",
	"Ã©tÃ©::ÃŸ", "x[3]::y", "a)b(c", "a>(b)",
	"slices.pdqsortCmpFunc[go.shape.interface { Info() (io/fs.FileInfo, error) }]", "main.count[go.shape.string]",
}

// awkwardModules are perf's module column variants (kernel, JIT, vdso,
// unknown, .ko, vmlinux images).
var awkwardModules = []string{
	"/usr/bin/app", "/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]", "[unknown]", "/tmp/perf-1234.map",
	"/tmp/jitted-99-7.so", "[vdso]", "/lib/modules/6.1/kernel/fs/ext4.ko", "/boot/vmlinux-6.1.0-18", "[nf_conntrack]",
}

// generatedPerf writes n random samples of perf script text.
func generatedPerf(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	b.WriteString("# ========\n# captured on: synthetic\n# ========\n#\n")
	comms := []string{"app", "V8 WorkerThread", "java", "kworker/0:1", "my app 2", "perf-exec"}
	for i := range n {
		comm := comms[r.IntN(len(comms))]
		pid := strconv.Itoa(100 + r.IntN(5))
		if r.IntN(2) == 0 {
			pid += "/" + strconv.Itoa(200+r.IntN(5))
		}
		cpu := ""
		if r.IntN(2) == 0 {
			cpu = " [00" + strconv.Itoa(r.IntN(4)) + "]"
		}
		period := ""
		if r.IntN(3) > 0 {
			period = " " + strconv.Itoa(1+r.IntN(100000))
		}
		fmt.Fprintf(&b, "%s %s%s %d.%06d:%s cpu-clock:%s\n", comm, pid, cpu, 1000+i, r.IntN(1000000), period, []string{"", " ", "ppp: "}[r.IntN(3)])
		for range 1 + r.IntN(6) {
			fmt.Fprintf(&b, "\t%16x %s (%s)\n", r.Uint64()>>r.IntN(48), awkwardNames[r.IntN(len(awkwardNames))], awkwardModules[r.IntN(len(awkwardModules))])
		}
		if i < n-1 || r.IntN(2) == 0 {
			b.WriteString([]string{"\n", "\n", " \t\n"}[r.IntN(3)]) // a blank line, or one of white space
		}
	}
	return b.Bytes()
}

// generatedPerfFlat writes n samples as perf script prints a recording
// without call graphs: one line per sample, the frame after the event,
// no blank lines.
func generatedPerfFlat(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "app %d/%d %d.%06d: %d cpu-clock:%s  %x %s (%s)\n", 100+r.IntN(3), 200+r.IntN(3), 1000+i, r.IntN(1000000),
			1+r.IntN(1000), []string{"", "u:"}[r.IntN(2)], r.Uint64()>>r.IntN(48), awkwardNames[r.IntN(len(awkwardNames))], awkwardModules[r.IntN(len(awkwardModules))])
	}
	return b.Bytes()
}

// generatedDTrace writes n random DTrace aggregation stacks.
func generatedDTrace(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	b.WriteString("CPU     ID                    FUNCTION:NAME\n  0  64091                        :tick-60s \n\n\n")
	modules := []string{"a.out", "libc.so.1", "genunix", "unix", "libjvm.so"}
	for range n {
		for range 1 + r.IntN(6) {
			name := awkwardNames[r.IntN(len(awkwardNames))]
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, "              0x%x\n", r.Uint64()>>16)
				continue
			case 1:
				name += "+0x" + strconv.FormatUint(r.Uint64()>>52, 16)
			}
			fmt.Fprintf(&b, "              %s`%s\n", modules[r.IntN(len(modules))], name)
		}
		fmt.Fprintf(&b, "             %d\n\n", 1+r.IntN(500))
	}
	return b.Bytes()
}

// TestInfernoGenerated: random perf script (with call graphs, and
// without: one line per sample) and DTrace inputs with awkward names, in
// every option set.
func TestInfernoGenerated(t *testing.T) {
	perf := testenv.Inferno(t, "inferno-collapse-perf")
	dtrace := testenv.Inferno(t, "inferno-collapse-dtrace")
	r := rand.New(rand.NewPCG(13, 2))
	runs, same := 0, 0
	for i := range 20 {
		n, s := differential(t, perf, PerfFormat(), fmt.Sprintf("generated perf %d", i), generatedPerf(r, 1+r.IntN(200)), infernoPerfCases)
		runs, same = runs+n, same+s
		n, s = differential(t, perf, PerfFormat(), fmt.Sprintf("generated flat perf %d", i), generatedPerfFlat(r, 1+r.IntN(200)), infernoPerfCases[:1])
		runs, same = runs+n, same+s
		n, s = differential(t, dtrace, DTraceFormat(), fmt.Sprintf("generated dtrace %d", i), generatedDTrace(r, 1+r.IntN(200)), []infernoCase{{"default", Options{}, nil}})
		runs, same = runs+n, same+s
	}
	t.Logf("%d of %d comparisons identical", same, runs)
}
