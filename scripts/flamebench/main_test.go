package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := dedupe([]int{1, runtime.NumCPU()})
	if c.mb != 90 || c.runs != 5 || !slices.Equal(c.threads, want) || c.latscope != "" || c.dir != "" || !c.install {
		t.Errorf("defaults: %+v", c)
	}
	c, err = parseFlags([]string{"-mb", "10", "-runs", "2", "-threads", "4,1,4", "-latscope", "/x/latscope", "-dir", "/tmp/d", "-install=false"}, io.Discard)
	if err != nil || c.mb != 10 || c.runs != 2 || !slices.Equal(c.threads, []int{4, 1}) || c.latscope != "/x/latscope" || c.dir != "/tmp/d" || c.install {
		t.Errorf("parsed %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"-mb", "0"}, {"-runs", "0"}, {"-threads", "0"}, {"-threads", "x"}, {"extra"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestCountSamples counts the samples of FlameGraph's real perf script
// inputs and checks them against an independent count: perf script
// separates samples with blank lines, so the samples are the paragraphs
// holding a line that is not a '#' header comment (the header comments are
// followed by the first sample without a blank line).
func TestCountSamples(t *testing.T) {
	files := testenv.DataFiles(t, "flamegraph/FlameGraph-test/perf-*.txt")
	if len(files) != 13 {
		t.Fatalf("%d perf script inputs, want 13", len(files))
	}
	for _, rel := range files {
		f := testenv.DataFile(t, rel)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := countSamples(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, p := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n") {
			for _, line := range strings.Split(p, "\n") {
				if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
					want++
					break
				}
			}
		}
		if got != want {
			t.Errorf("%s: %d samples, paragraphs say %d", filepath.Base(f), got, want)
		}
	}
	// Exact figures: perf-dd-stacks-01.txt holds 11 samples of dd;
	// perf-java-stacks-02.txt, from an old perf that did not indent the
	// frames, 2 samples (2 "cycles:" headers).
	for name, want := range map[string]int64{"perf-dd-stacks-01.txt": 11, "perf-java-stacks-02.txt": 2} {
		if n, err := countSamplesFile(testenv.DataFile(t, "flamegraph/FlameGraph-test/"+name)); n != want || err != nil {
			t.Errorf("%s: %d samples, %v; want %d", name, n, err, want)
		}
	}
}

// Synthetic: a header comment, a frame longer than the reader's buffer
// (a continuation must not count as a header) and no final newline.
func TestCountSamplesEdges(t *testing.T) {
	long := "\t" + strings.Repeat("x", 3<<20) + " (/bin/x)\n"
	in := "# ========\n# captured on: x\n#\nsh 1 1.0: 1 cpu-clock:\n" + long + "\nsh 1 2.0: 1 cpu-clock:\n\tffff f (/bin/x)"
	if n, err := countSamples(strings.NewReader(in)); n != 2 || err != nil {
		t.Errorf("%d samples, %v; want 2", n, err)
	}
	if n, err := countSamples(strings.NewReader("")); n != 0 || err != nil {
		t.Errorf("empty: %d, %v", n, err)
	}
}

func TestCopiesAndRepeat(t *testing.T) {
	for _, c := range []struct {
		want, size int64
		copies     int
	}{{90 << 20, 14766883, 7}, {100, 100, 1}, {101, 100, 2}, {1, 100, 1}, {100, 0, 1}} {
		if got := copiesFor(c.want, c.size); got != c.copies {
			t.Errorf("copiesFor(%d, %d) = %d, want %d", c.want, c.size, got, c.copies)
		}
	}
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(src, []byte("x 1\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := repeatFile(src, dst, 3); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "x 1\n\nx 1\n\nx 1\n\n" {
		t.Errorf("repeated: %q", b)
	}
}

func TestInfernoFromList(t *testing.T) {
	list := "bat v0.24.0:\n    bat\ninferno v0.12.8:\n    inferno-collapse-dtrace\n    inferno-collapse-perf\n"
	if got := infernoFromList(list); got != "inferno v0.12.8" {
		t.Errorf("%q", got)
	}
	if got := infernoFromList("bat v0.24.0:\n"); got != "" {
		t.Errorf("%q", got)
	}
}

// The difference found on the benchmark's input before latscope's default
// became inferno's reading: stackcollapse-perf.pl (and latscope under
// --compat perl) cut a symbol at its first '(' unless it looks like
// ".(...).", inferno keeps Go's generic instantiation whole.
func TestCompareFolded(t *testing.T) {
	mine := []byte("a;b 3\nc 1\na;f[go.shape.interface { Close 7\n")
	theirs := []byte("c 1\na;f[go.shape.interface { Close() error }].func1 7\na;b 3\n")
	var c outputCheck
	compareFolded(&c, mine, theirs)
	if c.Identical || c.LatscopeLines != 3 || c.InfernoLines != 3 || c.OnlyLatscope != 1 || c.OnlyInferno != 1 ||
		c.LatscopeTotal != 11 || c.InfernoTotal != 11 ||
		c.FirstLatscope != "a;f[go.shape.interface { Close 7" || c.FirstInferno != "a;f[go.shape.interface { Close() error }].func1 7" {
		t.Errorf("%+v", c)
	}
	c = outputCheck{}
	compareFolded(&c, []byte("x 2\ny 1\n"), []byte("y 1\nx 2"))
	if !c.Identical || c.OnlyLatscope != 0 || c.OnlyInferno != 0 || c.LatscopeTotal != 3 {
		t.Errorf("%+v", c)
	}
	// A repeated line is a difference too.
	c = outputCheck{}
	compareFolded(&c, []byte("x 2\nx 2\n"), []byte("x 2\n"))
	if c.Identical || c.OnlyLatscope != 1 {
		t.Errorf("%+v", c)
	}
	if n := countLines([]byte("a\nb")); n != 2 {
		t.Errorf("countLines %d", n)
	}
}

func TestCountFrames(t *testing.T) {
	svg := `<svg><g><rect x="0" fg:x="0" fg:w="7"/></g><g><rect fg:x="7" fg:w="3"/></g><rect fill="url(#background)"/></svg>`
	if n := countFrames([]byte(svg)); n != 2 {
		t.Errorf("%d frames", n)
	}
}

// runsOf builds synthetic timed runs: wall and CPU times per tool.
func runsOf(phase, tool string, threads int, walls ...float64) []runResult {
	var out []runResult
	for i, w := range walls {
		out = append(out, runResult{Phase: phase, Tool: tool, Threads: threads, Run: i + 1, WallS: w, UserS: w / 2, SysS: w / 4, MaxRSSKB: int64(1000 * (i + 1))})
	}
	return out
}

func TestSummaryAndVerdicts(t *testing.T) {
	const size = 100e6
	var runs []runResult
	runs = append(runs, runsOf("collapse", toolLatscope, 1, 0.5, 0.25, 0.4)...)
	runs = append(runs, runsOf("collapse", toolInferno, 1, 0.5, 0.6, 0.7)...)
	runs = append(runs, runsOf("collapse", toolLatscope, 2, 0.2, 0.2, 0.2)...)
	runs = append(runs, runsOf("collapse", toolInferno, 2, 0.22, 0.22, 0.22)...)
	one := compareCollapse(1, runs, size)
	// Best: 0.25 s vs 0.5 s; medians 0.4 vs 0.6; CPU 0.3 vs 0.45.
	if one.Latscope.BestWallS != 0.25 || one.Latscope.MBPerS != 400 || one.Inferno.MBPerS != 200 || one.Ratio != 2 ||
		!near(one.MedianRatio, 1.5) || !near(one.CPURatio, 1.5) || one.Latscope.MaxRSSKB != 2000 || one.Latscope.Runs != 3 {
		t.Errorf("1 thread: %+v %+v", one, *one.Inferno)
	}
	two := compareCollapse(2, runs, size)
	if !near(two.Ratio, 1.1) {
		t.Errorf("2 threads: ratio %v", two.Ratio)
	}
	all, pruned := renderCases[1], renderCases[2]
	renderRuns := append(runsOf("render", renderTool(toolLatscope, all), 0, 0.06, 0.05), runsOf("render", renderTool(toolInferno, all), 0, 0.08, 0.075)...)
	renderRuns = append(renderRuns, runsOf("render", renderTool(toolLatscope, pruned), 0, 0.03, 0.04)...)
	renderRuns = append(renderRuns, runsOf("render", renderTool(toolInferno, pruned), 0, 0.03, 0.031)...)
	outputs := map[string]renderOutput{
		renderTool(toolLatscope, all): {Bytes: 10e6, Frames: 44626}, renderTool(toolInferno, all): {Bytes: 10e6, Frames: 44626},
		renderTool(toolLatscope, pruned): {Bytes: 18e5, Frames: 7483}, renderTool(toolInferno, pruned): {Bytes: 18e5, Frames: 7483},
	}
	render := []renderRow{compareRender(all, renderRuns, outputs), compareRender(pruned, renderRuns, outputs)}
	if r := render[0]; !near(r.Ratio, 1.5) || r.Latscope.Frames != 44626 || r.Latscope.Stats.BestWallS != 0.05 || r.Inferno.Stats.Runs != 2 {
		t.Errorf("render, all frames: %+v", r)
	}
	if r := render[1]; !near(r.Ratio, 1) || !near(r.MedianRatio, 0.0305/0.035) {
		t.Errorf("render, pruned: %+v", r)
	}
	oneCopy := runResult{Phase: "collapse-1x", Tool: toolLatscope, Threads: 2, MaxRSSKB: 1900}
	rep := report{
		Runs: 3, Collapse: []collapseRow{one, two}, Render: render,
		Memory: []memoryRow{memoryOf(toolLatscope, 2, 7, oneCopy, runs)},
	}
	if m := rep.Memory[0]; m.AllKB != 2000 || !near(m.Growth, 2000.0/1900) {
		t.Errorf("memory %+v", m)
	}
	rep.Verdicts = verdicts(rep)
	var words []string
	for _, v := range rep.Verdicts {
		words = append(words, v.word())
	}
	if !slices.Equal(words, []string{"PASS", "FAIL", "FAIL", "PASS", "FAIL", "PASS", "PASS"}) {
		t.Errorf("verdicts %q", words)
	}
	if allPass(rep.Verdicts) {
		t.Error("allPass with a failed claim")
	}
	var out bytes.Buffer
	writeSummary(&out, rep)
	for _, want := range []string{"2.00×", "FAIL         collapse, 2 thread(s)", "7483", "1.50×", "1.00× inferno's speed", "all frames (44626 vs 44626 frames)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}

	// Without inferno nothing is judged against it and nothing fails.
	alone := report{Collapse: []collapseRow{compareCollapse(1, runsOf("collapse", toolLatscope, 1, 0.3), size)}}
	vs := verdicts(alone)
	if len(vs) != 1 || vs[0].Pass != nil || vs[0].word() != "NOT MEASURED" || !allPass(vs) {
		t.Errorf("no inferno: %+v", vs)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
