package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/scripts/benchkit"
)

const (
	toolFio      = "fio"
	toolLatscope = "latscope"
)

// The requirements, as ratios latscope / fio.
const (
	latencyTolerance = 0.10 // p50 and p99 within ±10 %
	minIOPSRatio     = 0.95
	maxCPURatio      = 1.00
	// slack absorbs float rounding at the edges of a requirement.
	slack = 1e-9
)

// runResult is one execution of one tool.
type runResult struct {
	Tool string `json:"tool"`
	// Concurrency is the swept key: readers (psync) or each reader's I/O
	// depth (io_uring, libaio).
	Concurrency int      `json:"concurrency"`
	Run         int      `json:"run"`      // 1..runs for this tool and concurrency
	Sequence    int      `json:"sequence"` // order among all runs
	Command     []string `json:"command"`
	measurement
	// CPU of the whole process from its rusage (utime + stime), the same
	// method for both tools: start-up, set-up and exit included.
	CPUUserS   float64 `json:"cpu_user_s"`
	CPUSysS    float64 `json:"cpu_sys_s"`
	CPUPerIOUS float64 `json:"cpu_per_io_us"`
	WallS      float64 `json:"wall_s"`
	MaxRSSKB   int64   `json:"max_rss_kb"`
	Stderr     string  `json:"stderr,omitempty"`
	// Raw is the tool's own JSON report, verbatim.
	Raw json.RawMessage `json:"raw"`
}

// medians are a tool's medians over its runs at one concurrency; each
// figure is the median of that figure, not the figures of a median run.
type medians struct {
	Runs int     `json:"runs"`
	IOPS float64 `json:"iops"`
	loadtest.Latency
	CPUPerIOUS float64 `json:"cpu_per_io_us"`
	// SelfCPUPerOpUS is the median of what the tool measured itself.
	SelfCPUPerOpUS float64 `json:"self_cpu_per_op_us"`
}

// Figures lists the figures whose medians are taken.
func (m *medians) Figures() []*float64 {
	return []*float64{&m.IOPS, &m.MeanUS, &m.P50US, &m.P90US, &m.P99US, &m.P999US, &m.MaxUS, &m.CPUPerIOUS, &m.SelfCPUPerOpUS}
}

// comparison is the verdict at one concurrency. Its info ratios are
// reported but not required: p90, p99.9, max, mean.
type comparison struct {
	Concurrency int     `json:"concurrency"`
	Fio         medians `json:"fio"`
	Latscope    medians `json:"latscope"`
	benchkit.Verdict
}

// mediansOf summarizes runs, all of one tool and concurrency.
func mediansOf(runs []runResult) medians {
	m := benchkit.Medians(runs, func(r runResult) medians {
		return medians{IOPS: r.IOPS, Latency: r.Latency, CPUPerIOUS: r.CPUPerIOUS, SelfCPUPerOpUS: r.SelfCPUPerOpUS}
	})
	m.Runs = len(runs)
	return m
}

// compare builds the verdict at one concurrency from all runs.
func compare(concurrency int, runs []runResult) comparison {
	of := func(tool string) medians {
		return mediansOf(benchkit.Select(runs, func(r runResult) bool { return r.Tool == tool && r.Concurrency == concurrency }))
	}
	f, l := of(toolFio), of(toolLatscope)
	within := fmt.Sprintf("%.2f–%.2f", 1-latencyTolerance, 1+latencyTolerance)
	latencyOK := func(r float64) bool { return benchkit.Within(r, latencyTolerance) }
	info := map[string]float64{
		"mean": benchkit.Ratio(l.MeanUS, f.MeanUS), "p90": benchkit.Ratio(l.P90US, f.P90US),
		"p99.9": benchkit.Ratio(l.P999US, f.P999US), "max": benchkit.Ratio(l.MaxUS, f.MaxUS),
	}
	return comparison{Concurrency: concurrency, Fio: f, Latscope: l, Verdict: benchkit.NewVerdict(f.Runs > 0 && l.Runs > 0, info,
		benchkit.NewCheck("p50", within, benchkit.Ratio(l.P50US, f.P50US), latencyOK),
		benchkit.NewCheck("p99", within, benchkit.Ratio(l.P99US, f.P99US), latencyOK),
		benchkit.NewCheck("IOPS", fmt.Sprintf("≥ %.2f", minIOPSRatio), benchkit.Ratio(l.IOPS, f.IOPS),
			func(r float64) bool { return r >= minIOPSRatio-slack }),
		benchkit.NewCheck("CPU per I/O", fmt.Sprintf("≤ %.2f", maxCPURatio), benchkit.Ratio(l.CPUPerIOUS, f.CPUPerIOUS),
			func(r float64) bool { return r <= maxCPURatio+slack }),
	)}
}

// writeTable prints the comparisons for people.
// load names the swept key: "concurrency" or "iodepth".
func writeTable(w io.Writer, cs []comparison, load string) error {
	t := benchkit.Table{W: w, LabelWidth: 30, FigureWidth: 10}
	var failed []string
	for _, c := range cs {
		t.Heading(fmt.Sprintf("%s %d (medians)", load, c.Concurrency), "fio", "latscope")
		row := func(label, check string, format string, f, l float64) { t.Row(label, format, c.Check(check), f, l) }
		row("IOPS", "IOPS", "%.0f", c.Fio.IOPS, c.Latscope.IOPS)
		row("mean µs", "", "%.1f", c.Fio.MeanUS, c.Latscope.MeanUS)
		row("p50 µs", "p50", "%.1f", c.Fio.P50US, c.Latscope.P50US)
		row("p90 µs", "", "%.1f", c.Fio.P90US, c.Latscope.P90US)
		row("p99 µs", "p99", "%.1f", c.Fio.P99US, c.Latscope.P99US)
		row("p99.9 µs", "", "%.1f", c.Fio.P999US, c.Latscope.P999US)
		row("max µs", "", "%.0f", c.Fio.MaxUS, c.Latscope.MaxUS)
		row("CPU per I/O µs (rusage)", "CPU per I/O", "%.2f", c.Fio.CPUPerIOUS, c.Latscope.CPUPerIOUS)
		row("CPU per I/O µs (tool's own)", "", "%.2f", c.Fio.SelfCPUPerOpUS, c.Latscope.SelfCPUPerOpUS)
		t.End(c.Pass, fmt.Sprintf("%d fio, %d latscope", c.Fio.Runs, c.Latscope.Runs))
		failed = append(failed, c.Failures(fmt.Sprintf("%s %d", load, c.Concurrency))...)
	}
	return t.Overall(failed, "latscope matches fio within the issue's limits")
}
