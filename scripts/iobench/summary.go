package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

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
	Tool        string   `json:"tool"`
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
	Runs       int     `json:"runs"`
	IOPS       float64 `json:"iops"`
	MeanUS     float64 `json:"mean_us"`
	P50US      float64 `json:"p50_us"`
	P90US      float64 `json:"p90_us"`
	P99US      float64 `json:"p99_us"`
	P999US     float64 `json:"p999_us"`
	MaxUS      float64 `json:"max_us"`
	CPUPerIOUS float64 `json:"cpu_per_io_us"`
	// SelfCPUPerOpUS is the median of what the tool measured itself.
	SelfCPUPerOpUS float64 `json:"self_cpu_per_op_us"`
}

// check is one requirement of the issue at one concurrency.
type check struct {
	Name  string  `json:"name"`
	Ratio float64 `json:"ratio"` // latscope / fio
	Want  string  `json:"want"`
	Pass  bool    `json:"pass"`
}

// comparison is the verdict at one concurrency.
type comparison struct {
	Concurrency int     `json:"concurrency"`
	Fio         medians `json:"fio"`
	Latscope    medians `json:"latscope"`
	// Info ratios are reported but not required: p90, p99.9, max, mean.
	Info   map[string]float64 `json:"info_ratios"`
	Checks []check            `json:"checks"`
	Pass   bool               `json:"pass"`
}

// mediansOf summarizes runs, all of one tool and concurrency.
func mediansOf(runs []runResult) medians {
	of := func(f func(runResult) float64) float64 { return benchkit.MedianOf(runs, f) }
	return medians{
		Runs:           len(runs),
		IOPS:           of(func(r runResult) float64 { return r.IOPS }),
		MeanUS:         of(func(r runResult) float64 { return r.MeanUS }),
		P50US:          of(func(r runResult) float64 { return r.P50US }),
		P90US:          of(func(r runResult) float64 { return r.P90US }),
		P99US:          of(func(r runResult) float64 { return r.P99US }),
		P999US:         of(func(r runResult) float64 { return r.P999US }),
		MaxUS:          of(func(r runResult) float64 { return r.MaxUS }),
		CPUPerIOUS:     of(func(r runResult) float64 { return r.CPUPerIOUS }),
		SelfCPUPerOpUS: of(func(r runResult) float64 { return r.SelfCPUPerOpUS }),
	}
}

// compare builds the verdict at one concurrency from all runs.
func compare(concurrency int, runs []runResult) comparison {
	pick := func(tool string) []runResult {
		var out []runResult
		for _, r := range runs {
			if r.Tool == tool && r.Concurrency == concurrency {
				out = append(out, r)
			}
		}
		return out
	}
	f, l := mediansOf(pick(toolFio)), mediansOf(pick(toolLatscope))
	within := fmt.Sprintf("%.2f–%.2f", 1-latencyTolerance, 1+latencyTolerance)
	latencyOK := func(r float64) bool { return benchkit.Within(r, latencyTolerance) }
	c := comparison{
		Concurrency: concurrency, Fio: f, Latscope: l,
		Info: map[string]float64{
			"mean": benchkit.Ratio(l.MeanUS, f.MeanUS), "p90": benchkit.Ratio(l.P90US, f.P90US),
			"p99.9": benchkit.Ratio(l.P999US, f.P999US), "max": benchkit.Ratio(l.MaxUS, f.MaxUS),
		},
	}
	add := func(name, want string, r float64, ok func(float64) bool) {
		c.Checks = append(c.Checks, check{Name: name, Ratio: r, Want: want, Pass: !math.IsNaN(r) && ok(r)})
	}
	add("p50", within, benchkit.Ratio(l.P50US, f.P50US), latencyOK)
	add("p99", within, benchkit.Ratio(l.P99US, f.P99US), latencyOK)
	add("IOPS", fmt.Sprintf("≥ %.2f", minIOPSRatio), benchkit.Ratio(l.IOPS, f.IOPS), func(r float64) bool { return r >= minIOPSRatio-slack })
	add("CPU per I/O", fmt.Sprintf("≤ %.2f", maxCPURatio), benchkit.Ratio(l.CPUPerIOUS, f.CPUPerIOUS), func(r float64) bool { return r <= maxCPURatio+slack })
	c.Pass = f.Runs > 0 && l.Runs > 0
	for _, ch := range c.Checks {
		c.Pass = c.Pass && ch.Pass
	}
	// NaN cannot be written as JSON; an undefined ratio is written as 0.
	for k, v := range c.Info {
		c.Info[k] = benchkit.JSONRatio(v)
	}
	for i := range c.Checks {
		c.Checks[i].Ratio = benchkit.JSONRatio(c.Checks[i].Ratio)
	}
	return c
}

// writeTable prints the comparisons for people.
func writeTable(w io.Writer, cs []comparison) error {
	const header = "%-30s %10s %10s %7s  %-10s %s\n"
	const line = "  %-28s %10s %10s %7.3f  %-10s %s\n"
	for _, c := range cs {
		fmt.Fprintf(w, header, fmt.Sprintf("concurrency %d (medians)", c.Concurrency), "fio", "latscope", "ratio", "required", "verdict")
		checks := map[string]check{}
		for _, ch := range c.Checks {
			checks[ch.Name] = ch
		}
		row := func(label, name string, f, l float64, format string) {
			ch, required := checks[name]
			verdict, want := "", ""
			if required {
				want, verdict = ch.Want, "ok"
				if !ch.Pass {
					verdict = "FAIL"
				}
			}
			fmt.Fprintf(w, line, label, fmt.Sprintf(format, f), fmt.Sprintf(format, l), benchkit.Ratio(l, f), want, verdict)
		}
		row("IOPS", "IOPS", c.Fio.IOPS, c.Latscope.IOPS, "%.0f")
		row("mean µs", "", c.Fio.MeanUS, c.Latscope.MeanUS, "%.1f")
		row("p50 µs", "p50", c.Fio.P50US, c.Latscope.P50US, "%.1f")
		row("p90 µs", "", c.Fio.P90US, c.Latscope.P90US, "%.1f")
		row("p99 µs", "p99", c.Fio.P99US, c.Latscope.P99US, "%.1f")
		row("p99.9 µs", "", c.Fio.P999US, c.Latscope.P999US, "%.1f")
		row("max µs", "", c.Fio.MaxUS, c.Latscope.MaxUS, "%.0f")
		row("CPU per I/O µs (rusage)", "CPU per I/O", c.Fio.CPUPerIOUS, c.Latscope.CPUPerIOUS, "%.2f")
		row("CPU per I/O µs (tool's own)", "", c.Fio.SelfCPUPerOpUS, c.Latscope.SelfCPUPerOpUS, "%.2f")
		fmt.Fprintf(w, "  %-28s %s (%d fio, %d latscope runs)\n\n", "verdict", benchkit.PassWord(c.Pass), c.Fio.Runs, c.Latscope.Runs)
	}
	var failed []string
	for _, c := range cs {
		for _, ch := range c.Checks {
			if !ch.Pass {
				failed = append(failed, fmt.Sprintf("%s at concurrency %d (%.3f, want %s)", ch.Name, c.Concurrency, ch.Ratio, ch.Want))
			}
		}
	}
	if len(failed) == 0 {
		_, err := fmt.Fprintln(w, "overall: PASS — latscope matches fio within the issue's limits")
		return err
	}
	_, err := fmt.Fprintf(w, "overall: FAIL — %s\n", strings.Join(failed, "; "))
	return err
}

// allPass reports whether every comparison passed.
func allPass(cs []comparison) bool {
	for _, c := range cs {
		if !c.Pass {
			return false
		}
	}
	return len(cs) > 0
}
