package collapse

// Differential tests against inferno (inferno-collapse-perf and
// inferno-collapse-dtrace 0.12.8, which CI installs): the default
// collapse must give inferno's folded lines, as a set, on real profiles
// from the test data, on profiles recorded here with perf, and on
// generated input with awkward names. The differences that remain by
// design are in docs/flamegraphs.md; the inputs avoid them.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// infernoTool finds an inferno binary (PATH or ~/.cargo/bin).
func infernoTool(t testing.TB, tool string) string {
	t.Helper()
	if p, err := exec.LookPath(tool); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cargo", "bin", tool)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	testenv.SkipOrFail(t, "%s not installed (cargo install inferno --version 0.12.8 --locked)", tool)
	return ""
}

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
	tool := infernoTool(t, "inferno-collapse-perf")
	runs, same := 0, 0
	for _, in := range perfInputs {
		r, s := differential(t, tool, PerfFormat(), in, mustRead(t, perfTestFile(t, in+".txt")), infernoPerfCases)
		runs, same = runs+r, same+s
	}
	t.Logf("%d of %d comparisons identical", same, runs)
}

// TestInfernoDTraceRealProfile: FlameGraph's DTrace example.
func TestInfernoDTraceRealProfile(t *testing.T) {
	tool := infernoTool(t, "inferno-collapse-dtrace")
	data := mustRead(t, testenv.DataFile(t, "flamegraph/example-dtrace-stacks.txt"))
	differential(t, tool, DTraceFormat(), "example-dtrace-stacks", data, []infernoCase{{"default", Options{}, nil}})
}
