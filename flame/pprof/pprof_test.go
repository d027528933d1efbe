package pprof_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	runtimepprof "runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/flame/collapse"
	"github.com/latscope/latscope/flame/load"
	"github.com/latscope/latscope/flame/pprof"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// perfProfiles collapses every real perf script input (kernel frames
// marked, so annotations travel too).
func perfProfiles(t *testing.T) map[string]*flame.Profile {
	t.Helper()
	out := map[string]*flame.Profile{}
	for _, rel := range testenv.DataFiles(t, "flamegraph/FlameGraph-test/*.txt") {
		p, err := load.Profile(context.Background(), load.Input{
			Files: []string{testenv.DataFile(t, rel)}, Format: "perf", Options: collapse.Options{Kernel: true, JIT: true},
		}, input.NewDiagnostics(nil, 0), load.Progress{})
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		out[filepath.Base(rel)] = p
	}
	if len(out) == 0 {
		t.Fatal("no perf script inputs in testdata/flamegraph/FlameGraph-test")
	}
	return out
}

func folded(t *testing.T, p *flame.Profile) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRoundTrip: folded → pprof (compressed and bare) → folded gives the
// same stacks and counts.
func TestRoundTrip(t *testing.T) {
	for name, p := range perfProfiles(t) {
		for _, bare := range []bool{false, true} {
			var b bytes.Buffer
			if err := pprof.Write(&b, p, pprof.WriteOptions{}, bare); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !pprof.LooksLikePprof(b.Bytes(), true) && bare {
				t.Errorf("%s: the bare protobuf is not detected as pprof", name)
			}
			back := flame.New()
			if err := pprof.Read(name+".pb", b.Bytes(), pprof.ReadOptions{}, back); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got, want := folded(t, back), folded(t, p); got != want {
				t.Errorf("%s (bare %v): round trip differs:\n%.2000s\nwant\n%.2000s", name, bare, got, want)
			}
		}
	}
}

// topRow is a line of `go tool pprof -top`: flat flat% sum% cum cum% name.
var topRow = regexp.MustCompile(`^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$`)
var topTotal = regexp.MustCompile(`Showing nodes accounting for \d+, [\d.]+% of (\d+) total`)

// TestGoToolPprof: the written profiles open with `go tool pprof -top`,
// whose total equals the folded total and whose rows' self and total
// samples equal latscope's function table.
func TestGoToolPprof(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		testenv.SkipOrFail(t, "no go toolchain for go tool pprof: %v", err)
	}
	dir := t.TempDir()
	for name, p := range perfProfiles(t) {
		file := filepath.Join(dir, name+".pb.gz")
		writeFile(t, file, p)
		cmd := exec.Command(goTool, "tool", "pprof", "-top", "-nodecount=1000", file)
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir, "PPROF_BINARY_PATH="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: go tool pprof: %v\n%s", name, err, out)
		}
		m := topTotal.FindSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no total in go tool pprof's output:\n%s", name, out)
		}
		if total, _ := strconv.ParseInt(string(m[1]), 10, 64); total != p.Total() {
			t.Errorf("%s: go tool pprof total %d, folded total %d", name, total, p.Total())
		}
		funcs := map[string]flame.FunctionStat{}
		for _, f := range flame.Functions(p) {
			funcs[f.Name] = f
		}
		rows := 0
		for _, line := range strings.Split(string(out), "\n") {
			r := topRow.FindStringSubmatch(line)
			if r == nil {
				continue
			}
			rows++
			flat, _ := strconv.ParseInt(r[1], 10, 64)
			cum, _ := strconv.ParseInt(r[2], 10, 64)
			f, ok := funcs[r[3]]
			if !ok {
				t.Errorf("%s: go tool pprof shows %q, not a function of the folded stacks", name, r[3])
				continue
			}
			if flat != f.Self || cum != f.Total {
				t.Errorf("%s: %s: go tool pprof flat %d cum %d, latscope self %d total %d", name, r[3], flat, cum, f.Self, f.Total)
			}
		}
		if rows == 0 {
			t.Errorf("%s: no rows in go tool pprof's output:\n%s", name, out)
		}
	}
}

func writeFile(t *testing.T, name string, p *flame.Profile) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Write(f, p, pprof.WriteOptions{}, false); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

//go:noinline
func busy(n int) int {
	s := 0
	for i := range n {
		s += i * i % 7
	}
	return s
}

// goCPUProfile profiles a busy loop with runtime/pprof until it has
// samples.
func goCPUProfile(t *testing.T) []byte {
	t.Helper()
	for range 5 {
		var b bytes.Buffer
		if err := runtimepprof.StartCPUProfile(&b); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
			busy(1 << 16)
		}
		runtimepprof.StopCPUProfile()
		if pp, err := profile.ParseData(b.Bytes()); err == nil && len(pp.Sample) > 0 {
			return b.Bytes()
		}
	}
	t.Fatal("runtime/pprof took no samples of a busy loop in 1.5 s")
	return nil
}

// TestGoCPUProfile reads a real Go CPU profile: its default type (cpu
// nanoseconds), stacks root first ending in the busy loop, the total equal
// to the profile's own; --sample-index picks the sample count instead.
func TestGoCPUProfile(t *testing.T) {
	data := goCPUProfile(t)
	pp, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	var wantNanos, wantSamples int64
	for _, s := range pp.Sample {
		wantSamples += s.Value[0]
		wantNanos += s.Value[1]
	}
	p := flame.New()
	if err := pprof.Read("cpu.pb.gz", data, pprof.ReadOptions{}, p); err != nil {
		t.Fatal(err)
	}
	if p.Total() != wantNanos {
		t.Errorf("default sample type: total %d, want the cpu nanoseconds %d", p.Total(), wantNanos)
	}
	busyLeaf := false
	for _, s := range p.InOrder() {
		frames := strings.Split(s.Frames, ";")
		if strings.HasSuffix(frames[len(frames)-1], "pprof_test.busy") {
			busyLeaf = true
			if !strings.Contains(s.Frames, "testing.tRunner;") || !strings.Contains(s.Frames, "TestGoCPUProfile;") {
				t.Errorf("busy's stack is not root first through the test: %s", s.Frames)
			}
		}
	}
	if !busyLeaf {
		t.Errorf("no stack ends in the busy loop:\n%s", folded(t, p))
	}
	for _, idx := range []string{"0", "samples", "sample_index=samples"} {
		n := flame.New()
		if err := pprof.Read("cpu.pb.gz", data, pprof.ReadOptions{SampleIndex: idx}, n); err != nil {
			t.Fatal(err)
		}
		if n.Total() != wantSamples {
			t.Errorf("--sample-index %s: total %d, want %d samples", idx, n.Total(), wantSamples)
		}
	}
}

// TestBadInput: malformed pprof input is an error naming the file; so is a
// sample type it does not have.
func TestBadInput(t *testing.T) {
	good := goCPUProfile(t)
	for _, c := range []struct {
		name string
		data []byte
		idx  string
		want string
	}{
		{"empty.pb", nil, "", "empty.pb: "},
		{"cut.pb.gz", good[:len(good)/2], "", "cut.pb.gz: not a valid pprof profile"},
		{"junk.pb", []byte("\x0a\x05\x08\x01\x10\xff\xff\xff"), "", "junk.pb: not a valid pprof profile"},
		{"cpu.pb.gz", good, "7", "cpu.pb.gz: --sample-index 7: the profile has sample types 0 to 1 (0 samples/count, 1 cpu/nanoseconds)"},
		{"cpu.pb.gz", good, "alloc_space", `cpu.pb.gz: --sample-index "alloc_space": no such sample type`},
	} {
		err := pprof.Read(c.name, c.data, pprof.ReadOptions{SampleIndex: c.idx}, flame.New())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want %q", c.name, c.idx, err, c.want)
		}
	}
}

// TestDiffRefused: a differential has two counts per stack; pprof output
// says so instead of dropping one.
func TestDiffRefused(t *testing.T) {
	a, b := flame.New(), flame.New()
	a.Add("main;f", 1)
	b.Add("main;g", 2)
	err := pprof.Write(&bytes.Buffer{}, flame.Differential(a, b), pprof.WriteOptions{}, false)
	if err == nil || !strings.Contains(err.Error(), "differential") {
		t.Errorf("error %v, want one about the differential", err)
	}
}

// FuzzRead: no input panics the reader; whatever it reads writes back to
// pprof and reads again to the same stacks.
func FuzzRead(f *testing.F) {
	p := flame.New()
	p.Add("main;f_[k];g", 3)
	p.Add("main;h", 1)
	var b bytes.Buffer
	if err := pprof.Write(&b, p, pprof.WriteOptions{}, true); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes(), "")
	f.Add(b.Bytes(), "0")
	f.Add([]byte("\x0a\x05\x08\x01\x10\x02"), "")
	f.Add([]byte("main;f 1\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, idx string) {
		pprof.LooksLikePprof(data, true)
		pprof.LooksLikePprof(data, false)
		got := flame.New()
		if err := pprof.Read("fuzz.pb", data, pprof.ReadOptions{SampleIndex: idx}, got); err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.pb: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if err := pprof.Write(&out, got, pprof.WriteOptions{}, true); err != nil {
			t.Fatalf("writing what was read: %v", err)
		}
		again := flame.New()
		if err := pprof.Read("again.pb", out.Bytes(), pprof.ReadOptions{}, again); err != nil {
			t.Fatalf("reading what was written: %v", err)
		}
		if a, b := folded(t, again), folded(t, got); a != b {
			t.Fatalf("second round trip differs:\n%s\nwant\n%s", a, b)
		}
	})
}

// TestDetection: pprof protobufs (latscope's, Go's, cut short) are told
// from every stack text input in testdata.
func TestDetection(t *testing.T) {
	goCPU, err := profile.ParseData(goCPUProfile(t))
	if err != nil {
		t.Fatal(err)
	}
	var goBare bytes.Buffer
	if err := goCPU.WriteUncompressed(&goBare); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"go cpu", goBare.Bytes()}, {"go cpu, first 64 bytes", goBare.Bytes()[:64]}} {
		if !pprof.LooksLikePprof(c.data, false) {
			t.Errorf("%s: not detected as pprof", c.name)
		}
	}
	if cut := goBare.Bytes()[:len(goBare.Bytes())-3]; pprof.LooksLikePprof(cut, true) || !pprof.StartsLikePprof(cut) {
		t.Errorf("a cut profile: detected as whole, or not as starting like pprof")
	}
	var texts []string
	for _, pattern := range []string{"flamegraph/FlameGraph-test/*.txt", "flamegraph/FlameGraph-test/results/*.txt", "flamegraph/example-dtrace-stacks.txt"} {
		texts = append(texts, testenv.DataFiles(t, pattern)...)
	}
	for _, rel := range texts {
		data, err := os.ReadFile(testenv.DataFile(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		if pprof.LooksLikePprof(data[:min(len(data), 64<<10)], len(data) <= 64<<10) || pprof.StartsLikePprof(data) {
			t.Errorf("%s: stack text detected as pprof", rel)
		}
	}
}

// handmade builds a profile of one sample: main calls f, in which g is
// inlined, then an unsymbolized address in libc; value v.
func handmade(t *testing.T, v int64) []byte {
	t.Helper()
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	mainFn, f, g := fn(1, "main"), fn(2, "f;x"), fn(3, "g")
	libc := &profile.Mapping{ID: 1, File: "/lib/x86_64-linux-gnu/libc.so.6"}
	locs := []*profile.Location{
		{ID: 1, Mapping: libc, Address: 0x1a2b},
		{ID: 2, Line: []profile.Line{{Function: g}, {Function: f}}},
		{ID: 3, Line: []profile.Line{{Function: mainFn}}},
	}
	pp := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Sample:     []*profile.Sample{{Location: locs, Value: []int64{v}}},
		Mapping:    []*profile.Mapping{libc}, Location: locs, Function: []*profile.Function{mainFn, f, g},
	}
	var b bytes.Buffer
	if err := pp.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFrames: inlined calls are frames outermost first, an unsymbolized
// location is binary+address, and ';' in a name cannot split a frame.
func TestFrames(t *testing.T) {
	p := flame.New()
	if err := pprof.Read("hand.pb.gz", handmade(t, 4), pprof.ReadOptions{}, p); err != nil {
		t.Fatal(err)
	}
	if got, want := folded(t, p), "main;f:x;g;libc.so.6+0x1a2b 4\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	p = flame.New()
	err := pprof.Read("diff.pb.gz", handmade(t, -4), pprof.ReadOptions{}, p)
	if err == nil || !strings.Contains(err.Error(), "diff.pb.gz: sample 1 has a negative samples (-4)") || p.Len() != 0 {
		t.Errorf("negative value: error %v, %d stacks added", err, p.Len())
	}
}
