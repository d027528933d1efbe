package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/latscope/latscope/scripts/benchkit"
)

// infernoVersion is the inferno release installed when it is missing (the
// version docs/benchmarks.md quotes).
const infernoVersion = "0.12.8"

// renderCases are the renders compared, all from the same folded input.
// inferno 0.12 measures --minwidth in percent of the total (default
// 0.01 %), latscope in pixels (default 0.1, flamegraph.pl's) or, with a
// '%', in percent. "defaults" are the two commands as users type them:
// their frames can differ (which frames inferno's 0.01 % drops depends on
// the recording: one-sample frames fall just under or just over it at
// about 10 000 samples). "all frames" (--minwidth 0) and "pruned at
// 0.1 %" draw the same frames in both, a large SVG and an overview.
var renderCases = []renderCase{
	{Name: "defaults"},
	{Name: "all frames", Latscope: []string{"--minwidth", "0"}, Inferno: []string{"--minwidth", "0"}},
	{Name: "pruned at 0.1 %", Latscope: []string{"--minwidth", "0.1%"}, Inferno: []string{"--minwidth", "0.1"}},
}

// renderCase is one like-for-like render: the extra arguments each tool
// gets.
type renderCase struct {
	Name     string   `json:"name"`
	Latscope []string `json:"latscope_args"`
	Inferno  []string `json:"inferno_args"`
}

// Tool names in runs and tables.
const (
	toolLatscope = "latscope"
	toolInferno  = "inferno"
)

// renderTool names a render run: the tool and its case.
func renderTool(tool string, c renderCase) string { return tool + ", " + c.Name }

// report is the JSON written to -out.
type report struct {
	Machine  machineFacts  `json:"machine"`
	Input    inputFacts    `json:"input"`
	Runs     int           `json:"runs_per_tool"`
	Collapse []collapseRow `json:"collapse"`
	Render   []renderRow   `json:"render"`
	Memory   []memoryRow   `json:"memory"`
	Outputs  *outputCheck  `json:"outputs,omitempty"`
	Verdicts []verdict     `json:"verdicts"`
	Pass     bool          `json:"pass"`
	RawRuns  []runResult   `json:"raw_runs"`
}

type machineFacts struct {
	benchkit.Machine
	Latscope string `json:"latscope"`
	Inferno  string `json:"inferno,omitempty"`
	Perf     string `json:"perf,omitempty"`
}

// tools are the binaries measured; the inferno ones are "" when missing.
type tools struct {
	latscope, collapse, flamegraph string
}

func (t tools) haveInferno() bool { return t.collapse != "" && t.flamegraph != "" }

// bench prepares the input and the tools, runs everything, writes the
// table and the JSON and reports whether no claim failed.
func bench(ctx context.Context, c config, stdout, stderr io.Writer) (bool, error) {
	rep := report{Runs: c.runs}
	scratch, err := os.MkdirTemp("", "flamebench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(scratch)
	dir := c.dir
	if dir == "" {
		dir = scratch
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	if !benchkit.PeakRSSMeasured() {
		fmt.Fprintf(stderr, "flamebench: /usr/bin/time missing (apt-get install time): peak RSS from rusage, which includes the harness's own\n")
	}
	t, err := findTools(ctx, c, scratch, stderr)
	if err != nil {
		return false, err
	}
	rep.Machine = machineFacts{
		Machine:  benchkit.GatherMachine(ctx),
		Latscope: benchkit.LatscopeVersion(ctx, t.latscope),
		Perf:     benchkit.CommandLine(ctx, "perf", "--version"),
	}
	if t.haveInferno() {
		rep.Machine.Inferno = installedInferno(ctx, t.collapse)
	}
	if rep.Input, err = prepareInput(ctx, c, dir, stderr); err != nil {
		return false, err
	}
	if err := warmPageCache(rep.Input.Path); err != nil {
		return false, err
	}
	folded := filepath.Join(scratch, "latscope.folded")
	if rep.Outputs, err = checkOutputs(ctx, t, rep.Input.Path, c.threads, scratch, folded); err != nil {
		return false, err
	}
	rep.Input.DistinctStacks = rep.Outputs.LatscopeLines
	writeHeader(stdout, rep, t)
	if err := collapsePhase(ctx, c, t, &rep, stderr); err != nil {
		return false, err
	}
	if err := renderPhase(ctx, c, t, folded, scratch, &rep, stderr); err != nil {
		return false, err
	}
	rep.Verdicts = verdicts(rep)
	rep.Pass = allPass(rep.Verdicts)
	writeSummary(stdout, rep)
	return rep.Pass, benchkit.SaveJSON(stdout, c.Out, "input, raw runs and summary", rep)
}

// findTools finds (or builds) latscope and finds (or installs) inferno.
func findTools(ctx context.Context, c config, scratch string, stderr io.Writer) (tools, error) {
	var t tools
	var err error
	if t.latscope, err = benchkit.FindLatscope(ctx, c.latscope, false, c.Repo, scratch, stderr); err != nil {
		return t, err
	}
	t.collapse, t.flamegraph = findInferno(c.inferno)
	if !t.haveInferno() && c.install && c.inferno == "" {
		if cargo := findCargo(); cargo != "" {
			fmt.Fprintf(stderr, "flamebench: inferno missing: %s install --locked inferno --version %s\n", cargo, infernoVersion)
			cmd := exec.CommandContext(ctx, cargo, "install", "--locked", "inferno", "--version", infernoVersion)
			cmd.Stdout, cmd.Stderr = stderr, stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(stderr, "flamebench: cargo install inferno failed: %v\n", err)
			}
			t.collapse, t.flamegraph = findInferno("")
		}
	}
	if !t.haveInferno() {
		fmt.Fprintf(stderr, "flamebench: inferno-collapse-perf or inferno-flamegraph not found and not installed (no cargo?): the comparison is skipped, latscope alone is measured\n")
		t.collapse, t.flamegraph = "", ""
	}
	return t, nil
}

// findInferno looks in dir, else on PATH then in ~/.cargo/bin.
func findInferno(dir string) (collapse, flamegraph string) {
	look := func(name string) string {
		if dir != "" {
			return executable(filepath.Join(dir, name))
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		if home, err := os.UserHomeDir(); err == nil {
			return executable(filepath.Join(home, ".cargo", "bin", name))
		}
		return ""
	}
	return look("inferno-collapse-perf"), look("inferno-flamegraph")
}

func findCargo() string {
	if p, err := exec.LookPath("cargo"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		return executable(filepath.Join(home, ".cargo", "bin", "cargo"))
	}
	return ""
}

// executable returns path when it is an executable file, else "".
func executable(path string) string {
	if st, err := os.Stat(path); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return path
	}
	return ""
}

// installedInferno is the version cargo installed ("inferno v0.12.8"),
// read from `cargo install --list` (inferno's binaries have no --version);
// "" when unknown.
func installedInferno(ctx context.Context, collapse string) string {
	cargo := executable(filepath.Join(filepath.Dir(collapse), "cargo"))
	if cargo == "" {
		cargo = findCargo()
	}
	if cargo == "" {
		return ""
	}
	out, err := exec.CommandContext(ctx, cargo, "install", "--list").Output()
	if err != nil {
		return ""
	}
	return infernoFromList(string(out))
}

// infernoFromList finds inferno's line in `cargo install --list` output
// ("inferno v0.12.8:") and returns it without the colon.
func infernoFromList(list string) string {
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, "inferno v") {
			return strings.TrimSuffix(strings.TrimSpace(line), ":")
		}
	}
	return ""
}

// warmPageCache reads the input once so that the first timed run does not
// pay for the disk.
func warmPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

func collapseArgv(t tools, tool, file string, threads int) []string {
	if tool == toolInferno {
		return []string{t.collapse, "--nthreads", strconv.Itoa(threads), file}
	}
	return []string{t.latscope, "collapse", "perf", file, "--threads", strconv.Itoa(threads)}
}

// checkOutputs collapses the input once per tool into files and compares
// them: latscope at the largest and the smallest thread count (its output
// must not depend on it), inferno at the largest. latscope's output is
// left in folded for the render phase.
func checkOutputs(ctx context.Context, t tools, input string, threads []int, scratch, folded string) (*outputCheck, error) {
	most, least := threads[0], threads[0]
	for _, n := range threads {
		most, least = max(most, n), min(least, n)
	}
	if _, err := measure(ctx, collapseArgv(t, toolLatscope, input, most), folded); err != nil {
		return nil, err
	}
	mine, err := os.ReadFile(folded)
	if err != nil {
		return nil, err
	}
	check := &outputCheck{LatscopeLines: countLines(mine), ThreadsCompared: []int{least, most}, SameAcrossThreads: true}
	if least != most {
		other := filepath.Join(scratch, "latscope-"+strconv.Itoa(least)+".folded")
		if _, err := measure(ctx, collapseArgv(t, toolLatscope, input, least), other); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(other)
		if err != nil {
			return nil, err
		}
		check.SameAcrossThreads = string(b) == string(mine)
	}
	if !t.haveInferno() {
		return check, nil
	}
	theirs := filepath.Join(scratch, "inferno.folded")
	if _, err := measure(ctx, collapseArgv(t, toolInferno, input, most), theirs); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(theirs)
	if err != nil {
		return nil, err
	}
	compareFolded(check, mine, b)
	return check, nil
}

// alternate runs each command once untimed, then runs times each,
// reversing the order every other run so that a drift in the machine's
// load does not favour one tool.
func alternate(ctx context.Context, phase string, threads int, names []string, argv func(string) []string,
	stdoutPath func(string) string, runs int, stderr io.Writer) ([]runResult, error) {
	for _, name := range names {
		if _, err := measure(ctx, argv(name), stdoutPath(name)); err != nil {
			return nil, err
		}
	}
	return benchkit.Sweep(ctx, []int{threads}, runs, names, func(s benchkit.Step[int]) (runResult, error) {
		p, err := measure(ctx, argv(s.Tool), stdoutPath(s.Tool))
		if err != nil {
			return runResult{}, err
		}
		r := resultOf(phase, s.Tool, threads, s.Run, p)
		fmt.Fprintf(stderr, "%s run %d: %7.3f s  CPU %6.3f s  max RSS %6.1f MiB\n",
			label(phase, s.Tool, threads), r.Run, r.WallS, r.UserS+r.SysS, float64(r.MaxRSSKB)/1024)
		return r, nil
	})
}

// label names a run in the progress lines.
func label(phase, tool string, threads int) string {
	if threads > 0 {
		tool = fmt.Sprintf("%s, %d thread(s)", tool, threads)
	}
	return fmt.Sprintf("%-8s %-30s", phase, tool)
}

func resultOf(phase, tool string, threads, run int, p benchkit.Process) runResult {
	return runResult{
		Phase: phase, Tool: tool, Threads: threads, Run: run,
		WallS: p.Wall.Seconds(), UserS: p.User.Seconds(), SysS: p.Sys.Seconds(), MaxRSSKB: p.MaxRSSKB,
	}
}

// collapsePhase times both collapsers at every thread count, then runs
// each once per thread count on a single copy of the recording for the
// memory check.
func collapsePhase(ctx context.Context, c config, t tools, rep *report, stderr io.Writer) error {
	names := []string{toolLatscope}
	if t.haveInferno() {
		names = append(names, toolInferno)
	}
	devNull := func(string) string { return os.DevNull }
	for _, n := range c.threads {
		argv := func(tool string) []string { return collapseArgv(t, tool, rep.Input.Path, n) }
		runs, err := alternate(ctx, "collapse", n, names, argv, devNull, c.runs, stderr)
		if err != nil {
			return err
		}
		rep.RawRuns = append(rep.RawRuns, runs...)
		rep.Collapse = append(rep.Collapse, compareCollapse(n, runs, rep.Input.Bytes))
	}
	for _, n := range c.threads {
		for _, tool := range names {
			p, err := measure(ctx, collapseArgv(t, tool, rep.Input.RecordingPath, n), os.DevNull)
			if err != nil {
				return err
			}
			r := resultOf("collapse-1x", tool, n, 1, p)
			rep.RawRuns = append(rep.RawRuns, r)
			rep.Memory = append(rep.Memory, memoryOf(tool, n, rep.Input.Copies, r, rep.RawRuns))
		}
	}
	return nil
}

// renderPhase times the SVG renderers on latscope's folded output in
// every case.
func renderPhase(ctx context.Context, c config, t tools, folded, scratch string, rep *report, stderr io.Writer) error {
	commands := map[string][]string{}
	svgs := map[string]string{}
	var names []string
	add := func(name string, argv []string, svg string) {
		names = append(names, name)
		commands[name], svgs[name] = argv, svg
	}
	for i, rc := range renderCases {
		svg := filepath.Join(scratch, fmt.Sprintf("latscope-%d.svg", i))
		add(renderTool(toolLatscope, rc), append(append([]string{t.latscope, "flame", folded}, rc.Latscope...), "-o", svg), svg)
		if t.haveInferno() {
			svg := filepath.Join(scratch, fmt.Sprintf("inferno-%d.svg", i))
			add(renderTool(toolInferno, rc), append(append([]string{t.flamegraph}, rc.Inferno...), folded), svg)
		}
	}
	argv := func(name string) []string { return commands[name] }
	// latscope writes its SVG itself (-o), inferno to stdout.
	stdoutPath := func(name string) string {
		if strings.HasPrefix(name, toolInferno) {
			return svgs[name]
		}
		return os.DevNull
	}
	runs, err := alternate(ctx, "render", 0, names, argv, stdoutPath, 2*c.runs, stderr)
	if err != nil {
		return err
	}
	rep.RawRuns = append(rep.RawRuns, runs...)
	outputs := map[string]renderOutput{}
	for name, path := range svgs {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		outputs[name] = renderOutput{Bytes: int64(len(b)), Frames: countFrames(b)}
	}
	for _, rc := range renderCases {
		rep.Render = append(rep.Render, compareRender(rc, runs, outputs))
	}
	return nil
}
