package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/latscope/latscope/scripts/benchkit"
)

// runResult is one timed run of one tool.
type runResult struct {
	Phase    string  `json:"phase"` // collapse, collapse-1x (one copy of the recording), render
	Tool     string  `json:"tool"`
	Threads  int     `json:"threads,omitempty"`
	Run      int     `json:"run"`
	WallS    float64 `json:"wall_s"`
	UserS    float64 `json:"user_s"`
	SysS     float64 `json:"sys_s"`
	MaxRSSKB int64   `json:"max_rss_kb"`
}

// toolStats are a tool's figures over its runs: the best (shortest) wall
// time, which the claims are judged on, and medians (each figure the
// median of that figure). On a shared machine other jobs only ever add
// time to a run, so the best of alternating runs is the least disturbed
// estimate of each tool's speed; the medians show the spread.
type toolStats struct {
	Runs       int     `json:"runs"`
	BestWallS  float64 `json:"best_wall_s"`
	WallS      float64 `json:"median_wall_s"`
	CPUS       float64 `json:"median_cpu_s"`
	MBPerS     float64 `json:"mb_per_s,omitempty"`        // input bytes / 1e6 / best wall
	MedianMBPS float64 `json:"median_mb_per_s,omitempty"` // input bytes / 1e6 / median wall
	MaxRSSKB   int64   `json:"median_max_rss_kb"`
}

func statsOf(runs []runResult, inputBytes int64) toolStats {
	if len(runs) == 0 {
		return toolStats{}
	}
	s := toolStats{
		Runs:     len(runs),
		WallS:    benchkit.MedianOf(runs, func(r runResult) float64 { return r.WallS }),
		CPUS:     benchkit.MedianOf(runs, func(r runResult) float64 { return r.UserS + r.SysS }),
		MaxRSSKB: int64(benchkit.MedianOf(runs, func(r runResult) float64 { return float64(r.MaxRSSKB) })),
	}
	s.BestWallS = runs[0].WallS
	for _, r := range runs {
		s.BestWallS = min(s.BestWallS, r.WallS)
	}
	if inputBytes > 0 && s.BestWallS > 0 && s.WallS > 0 {
		s.MBPerS = float64(inputBytes) / 1e6 / s.BestWallS
		s.MedianMBPS = float64(inputBytes) / 1e6 / s.WallS
	}
	return s
}

func pick(runs []runResult, phase, tool string, threads int) []runResult {
	return benchkit.Select(runs, func(r runResult) bool { return r.Phase == phase && r.Tool == tool && r.Threads == threads })
}

// collapseRow compares the collapsers at one thread count.
type collapseRow struct {
	Threads  int        `json:"threads"`
	Latscope toolStats  `json:"latscope"`
	Inferno  *toolStats `json:"inferno,omitempty"`
	// Ratio is latscope's throughput over inferno's (inferno's best wall
	// time over latscope's), MedianRatio the same from the medians and
	// CPURatio from the median CPU times; 0 when inferno was not measured.
	Ratio       float64 `json:"throughput_ratio"`
	MedianRatio float64 `json:"median_throughput_ratio"`
	CPURatio    float64 `json:"cpu_ratio"`
}

func compareCollapse(threads int, runs []runResult, inputBytes int64) collapseRow {
	row := collapseRow{Threads: threads, Latscope: statsOf(pick(runs, "collapse", toolLatscope, threads), inputBytes)}
	if theirs := pick(runs, "collapse", toolInferno, threads); len(theirs) > 0 {
		s := statsOf(theirs, inputBytes)
		row.Inferno = &s
		row.Ratio, row.MedianRatio, row.CPURatio = ratios(s, row.Latscope)
	}
	return row
}

// ratios are theirs over mine: best wall times, median wall times and
// median CPU times (above 1: mine is faster).
func ratios(theirs, mine toolStats) (best, median, cpu float64) {
	r := func(a, b float64) float64 { return benchkit.JSONRatio(benchkit.Ratio(a, b)) }
	return r(theirs.BestWallS, mine.BestWallS), r(theirs.WallS, mine.WallS), r(theirs.CPUS, mine.CPUS)
}

// memoryRow is a collapser's peak RSS on one copy of the recording and on
// the repeated input, at the same thread count.
type memoryRow struct {
	Tool      string  `json:"tool"`
	Threads   int     `json:"threads"`
	Copies    int     `json:"copies"`
	OneCopyKB int64   `json:"one_copy_max_rss_kb"`
	AllKB     int64   `json:"repeated_max_rss_kb"` // median of the timed runs
	Growth    float64 `json:"growth"`              // AllKB / OneCopyKB
}

func memoryOf(tool string, threads, copies int, oneCopy runResult, runs []runResult) memoryRow {
	all := statsOf(pick(runs, "collapse", tool, threads), 0).MaxRSSKB
	return memoryRow{
		Tool: tool, Threads: threads, Copies: copies, OneCopyKB: oneCopy.MaxRSSKB, AllKB: all,
		Growth: benchkit.JSONRatio(benchkit.Ratio(float64(all), float64(oneCopy.MaxRSSKB))),
	}
}

// renderRow compares the SVG renderers in one like-for-like case.
type renderRow struct {
	Case     renderCase    `json:"case"`
	Latscope renderOutput  `json:"latscope"`
	Inferno  *renderOutput `json:"inferno,omitempty"`
	// Ratio is inferno's best time over latscope's (above 1: latscope is
	// faster), MedianRatio and CPURatio from the medians.
	Ratio       float64 `json:"speed_ratio"`
	MedianRatio float64 `json:"median_speed_ratio"`
	CPURatio    float64 `json:"cpu_ratio"`
}

// renderOutput is one renderer's figures and SVG.
type renderOutput struct {
	Stats  toolStats `json:"stats"`
	Bytes  int64     `json:"svg_bytes"`
	Frames int       `json:"frames"`
}

func compareRender(rc renderCase, runs []runResult, outputs map[string]renderOutput) renderRow {
	row := renderRow{Case: rc}
	mine := renderTool(toolLatscope, rc)
	row.Latscope = outputs[mine]
	row.Latscope.Stats = statsOf(pick(runs, "render", mine, 0), 0)
	theirs := renderTool(toolInferno, rc)
	if rs := pick(runs, "render", theirs, 0); len(rs) > 0 {
		o := outputs[theirs]
		o.Stats = statsOf(rs, 0)
		row.Inferno = &o
		row.Ratio, row.MedianRatio, row.CPURatio = ratios(o.Stats, row.Latscope.Stats)
	}
	return row
}

// inferno returns inferno's output, empty when it was not measured.
func (r renderRow) inferno() renderOutput {
	if r.Inferno == nil {
		return renderOutput{}
	}
	return *r.Inferno
}

// countFrames counts an SVG's frames: both renderers give every frame's
// rectangle inferno's fg:w attribute.
func countFrames(svg []byte) int {
	return bytes.Count(svg, []byte(`fg:w="`))
}

// outputCheck compares the folded outputs.
type outputCheck struct {
	LatscopeLines     int   `json:"latscope_lines"`
	ThreadsCompared   []int `json:"latscope_threads_compared"`
	SameAcrossThreads bool  `json:"latscope_same_across_threads"`
	InfernoLines      int   `json:"inferno_lines,omitempty"`
	// Identical: the same lines once sorted. Otherwise the lines only one
	// side has, their counts' sums and the first such pair.
	Identical     bool    `json:"identical"`
	OnlyLatscope  int     `json:"only_latscope,omitempty"`
	OnlyInferno   int     `json:"only_inferno,omitempty"`
	LatscopeTotal float64 `json:"latscope_total"`
	InfernoTotal  float64 `json:"inferno_total,omitempty"`
	FirstLatscope string  `json:"first_only_latscope,omitempty"`
	FirstInferno  string  `json:"first_only_inferno,omitempty"`
}

func countLines(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// compareFolded fills c with the comparison of two folded outputs, line
// order ignored.
func compareFolded(c *outputCheck, mine, theirs []byte) {
	a, b := sortedLines(mine), sortedLines(theirs)
	c.LatscopeLines, c.InfernoLines = len(a), len(b)
	c.LatscopeTotal, c.InfernoTotal = foldedTotal(a), foldedTotal(b)
	onlyA, onlyB := difference(a, b), difference(b, a)
	c.OnlyLatscope, c.OnlyInferno = len(onlyA), len(onlyB)
	c.Identical = len(onlyA) == 0 && len(onlyB) == 0
	if len(onlyA) > 0 {
		c.FirstLatscope = onlyA[0]
	}
	if len(onlyB) > 0 {
		c.FirstInferno = onlyB[0]
	}
}

func sortedLines(b []byte) []string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	slices.Sort(lines)
	return lines
}

// difference returns the lines of sorted a missing from sorted b,
// counting repeats.
func difference(a, b []string) []string {
	var out []string
	j := 0
	for _, s := range a {
		for j < len(b) && b[j] < s {
			j++
		}
		if j < len(b) && b[j] == s {
			j++
			continue
		}
		out = append(out, s)
	}
	return out
}

// foldedTotal sums the last field of every line (the count); lines
// without a number add nothing.
func foldedTotal(lines []string) float64 {
	var total float64
	for _, l := range lines {
		i := strings.LastIndexByte(l, ' ')
		var v float64
		if _, err := fmt.Sscan(l[i+1:], &v); err == nil {
			total += v
		}
	}
	return total
}

// verdict is one claim's result.
type verdict struct {
	Claim    string  `json:"claim"`
	Measured string  `json:"measured"`
	Ratio    float64 `json:"ratio"`
	Want     float64 `json:"want"`
	// Pass is nil when the claim could not be measured (no inferno).
	Pass *bool `json:"pass"`
}

func (v verdict) word() string {
	if v.Pass == nil && strings.HasPrefix(v.Measured, "not judged") {
		return "INFO"
	}
	if v.Pass == nil {
		return "NOT MEASURED"
	}
	return benchkit.PassWord(*v.Pass)
}

func judged(ratio, want float64) *bool {
	ok := !math.IsNaN(ratio) && ratio >= want
	return &ok
}

// verdicts judges the claims from the summary rows.
func verdicts(rep report) []verdict {
	var out []verdict
	for _, row := range rep.Collapse {
		v := verdict{
			Claim: fmt.Sprintf("collapse, %d thread(s): latscope throughput ≥ %.1f× inferno-collapse-perf's", row.Threads, claimCollapseRatio),
			Want:  claimCollapseRatio,
		}
		if row.Inferno != nil {
			v.Ratio, v.Pass = row.Ratio, judged(row.Ratio, claimCollapseRatio)
			v.Measured = fmt.Sprintf("best %.0f vs %.0f MB/s = %.2f× (medians %.2f×, CPU %.2f×)",
				row.Latscope.MBPerS, row.Inferno.MBPerS, row.Ratio, row.MedianRatio, row.CPURatio)
		} else {
			v.Measured = fmt.Sprintf("latscope %.0f MB/s; inferno missing", row.Latscope.MBPerS)
		}
		out = append(out, v)
		if row.Threads >= 2 && row.Inferno != nil {
			out = append(out, target20(fmt.Sprintf("collapse, %d threads", row.Threads), target20CollapseRatio, row.Ratio, row.MedianRatio, row.CPURatio))
		}
	}
	for _, r := range rep.Render {
		v := verdict{
			Claim: fmt.Sprintf("render SVG, %s (%d vs %d frames): no slower than inferno-flamegraph", r.Case.Name, r.Latscope.Frames, r.inferno().Frames),
			Want:  claimRenderRatio,
		}
		mine := r.Latscope.Stats
		switch {
		case r.Inferno != nil && r.Latscope.Frames != r.Inferno.Frames:
			// Different default minimum widths (flamegraph.pl's 0.1 px vs
			// inferno's 0.01 %) draw different graphs: not the same work.
			v.Ratio = r.Ratio
			v.Measured = fmt.Sprintf("not judged: different graphs (%d vs %d frames); best %.1f vs %.1f ms",
				r.Latscope.Frames, r.Inferno.Frames, mine.BestWallS*1e3, r.Inferno.Stats.BestWallS*1e3)
		case r.Inferno != nil:
			v.Ratio, v.Pass = r.Ratio, judged(r.Ratio, claimRenderRatio)
			v.Measured = fmt.Sprintf("best %.1f vs %.1f ms = %.2f× inferno's speed (medians %.2f×, CPU %.2f×)",
				mine.BestWallS*1e3, r.Inferno.Stats.BestWallS*1e3, r.Ratio, r.MedianRatio, r.CPURatio)
		default:
			v.Measured = fmt.Sprintf("latscope %.1f ms; inferno missing", mine.BestWallS*1e3)
		}
		out = append(out, v)
		if v.Pass != nil && r.Case.Name == "all frames" {
			out = append(out, target20("render SVG, all frames", target20RenderRatio, r.Ratio, r.MedianRatio, r.CPURatio))
		}
	}
	for _, m := range rep.Memory {
		if m.Tool != toolLatscope {
			continue
		}
		// Here the ratio is growth, lower is better: the limit is judged
		// on its inverse.
		ok := m.Growth > 0 && m.Growth <= memoryGrowthLimit
		out = append(out, verdict{
			Claim:    fmt.Sprintf("memory bounded by distinct stacks, %d thread(s): peak RSS on %d copies ≤ %.1f× on one", m.Threads, m.Copies, memoryGrowthLimit),
			Measured: fmt.Sprintf("%.1f MiB vs %.1f MiB = %.2f×", float64(m.AllKB)/1024, float64(m.OneCopyKB)/1024, m.Growth),
			Ratio:    m.Growth, Want: memoryGrowthLimit, Pass: &ok,
		})
	}
	return out
}

// target20 judges one of issue 20's targets on the best-time ratio, like
// the claims; the median and CPU ratios beside it show how far the load
// of a shared machine moved it.
func target20(what string, want, best, median, cpu float64) verdict {
	return verdict{
		Claim:    fmt.Sprintf("issue 20 target, %s: ≥ %.1f× inferno", what, want),
		Measured: fmt.Sprintf("best %.2f× (medians %.2f×, CPU %.2f×)", best, median, cpu),
		Ratio:    best, Want: want, Pass: judged(best, want),
	}
}

// allPass is true when no measured claim failed.
func allPass(vs []verdict) bool {
	for _, v := range vs {
		if v.Pass != nil && !*v.Pass {
			return false
		}
	}
	return true
}

func writeHeader(w io.Writer, rep report, t tools) {
	m, in := rep.Machine, rep.Input
	inferno := m.Inferno
	if !t.haveInferno() {
		inferno = "missing"
	}
	fmt.Fprintf(w, "latscope collapse and flame vs inferno (%s): %d timed run(s) per tool, alternating, after one warm-up\n", inferno, rep.Runs)
	fmt.Fprintf(w, "machine: %s; %s; latscope %s (commit %s)\n", m.Summary(), m.Perf, m.Latscope, m.Commit)
	reused := ""
	if in.Reused {
		reused = ", reused"
	}
	fmt.Fprintf(w, "input: %s: %.1f MB of perf script text (%d copies of a %.1f MB recording%s), %d samples, %d distinct stacks\n",
		in.Path, float64(in.Bytes)/1e6, in.Copies, float64(in.RecordingBytes)/1e6, reused, in.Samples, in.DistinctStacks)
	fmt.Fprintf(w, "recorded: perf record -F 999 -g -e cpu-clock -- sh -c '%s'\n", in.Workload)
	if o := rep.Outputs; o != nil {
		fmt.Fprintf(w, "latscope output identical at %d and %d threads: %v\n", o.ThreadsCompared[0], o.ThreadsCompared[1], o.SameAcrossThreads)
		if t.haveInferno() {
			fmt.Fprintf(w, "folded outputs (sorted) identical to inferno's: %v (%d vs %d lines; %d only in latscope's, %d only in inferno's; totals %.0f vs %.0f)\n",
				o.Identical, o.LatscopeLines, o.InfernoLines, o.OnlyLatscope, o.OnlyInferno, o.LatscopeTotal, o.InfernoTotal)
			if !o.Identical {
				fmt.Fprintf(w, "  first only in latscope's: %s\n  first only in inferno's:  %s\n", shorten(o.FirstLatscope, 240), shorten(o.FirstInferno, 240))
			}
		}
	}
	fmt.Fprintln(w)
}

// shorten keeps the end of a long folded line (the leaf frames, where
// symbol tidying differs, and the count).
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func writeSummary(w io.Writer, rep report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "collapse\tthreads\tbest s\tMB/s\tmedian s\tMB/s\tCPU s\tmax RSS MiB\tratio\t")
	for _, row := range rep.Collapse {
		line := func(name string, s toolStats, ratio string) {
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.0f\t%.3f\t%.0f\t%.3f\t%.1f\t%s\t\n", name, row.Threads,
				s.BestWallS, s.MBPerS, s.WallS, s.MedianMBPS, s.CPUS, float64(s.MaxRSSKB)/1024, ratio)
		}
		line(toolLatscope, row.Latscope, "")
		if row.Inferno != nil {
			line("inferno-collapse-perf", *row.Inferno, fmt.Sprintf("%.2f×", row.Ratio))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(rep.Render) > 0 {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "render SVG\tbest ms\tmedian ms\tCPU ms\tmax RSS MiB\tframes\tSVG MB\tratio\t")
		line := func(name string, o renderOutput, ratio string) {
			s := o.Stats
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.2f\t%s\t\n", name, s.BestWallS*1e3, s.WallS*1e3, s.CPUS*1e3,
				float64(s.MaxRSSKB)/1024, o.Frames, float64(o.Bytes)/1e6, ratio)
		}
		for _, r := range rep.Render {
			line(strings.TrimSpace("latscope flame "+strings.Join(r.Case.Latscope, " ")), r.Latscope, "")
			if r.Inferno != nil {
				line(strings.TrimSpace("inferno-flamegraph "+strings.Join(r.Case.Inferno, " ")), *r.Inferno, fmt.Sprintf("%.2f×", r.Ratio))
			}
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	for _, m := range rep.Memory {
		fmt.Fprintf(w, "memory: %s at %d thread(s): max RSS %.1f MiB on one copy, %.1f MiB on %d copies (%.2f×)\n",
			m.Tool, m.Threads, float64(m.OneCopyKB)/1024, float64(m.AllKB)/1024, m.Copies, m.Growth)
	}
	fmt.Fprintln(w)
	for _, v := range rep.Verdicts {
		fmt.Fprintf(w, "%-12s %s: %s\n", v.word(), v.Claim, v.Measured)
	}
}
