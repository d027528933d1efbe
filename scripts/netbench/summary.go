package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/latscope/latscope/scripts/benchkit"
)

// p50Tolerance is the requirement: latscope's p50 round trip
// within ±15 % of sockperf's.
const p50Tolerance = 0.15

// medians are a tool's medians over its runs at one size; each figure is
// the median of that figure, not the figures of a median run.
type medians struct {
	Runs                    int     `json:"runs"`
	PerSecond               float64 `json:"round_trips_per_s"`
	MeanUS                  float64 `json:"mean_us"`
	P50US                   float64 `json:"p50_us"`
	P90US                   float64 `json:"p90_us"`
	P99US                   float64 `json:"p99_us"`
	P999US                  float64 `json:"p999_us"`
	MaxUS                   float64 `json:"max_us"`
	ClientCPUPerRoundTripUS float64 `json:"client_cpu_per_round_trip_us"`
	ServerCPUPerRoundTripUS float64 `json:"server_cpu_per_round_trip_us"`
}

func mediansOf(runs []runResult) medians {
	of := func(f func(runResult) float64) float64 { return benchkit.MedianOf(runs, f) }
	return medians{
		Runs:                    len(runs),
		PerSecond:               of(func(r runResult) float64 { return r.PerSecond }),
		MeanUS:                  of(func(r runResult) float64 { return r.MeanUS }),
		P50US:                   of(func(r runResult) float64 { return r.P50US }),
		P90US:                   of(func(r runResult) float64 { return r.P90US }),
		P99US:                   of(func(r runResult) float64 { return r.P99US }),
		P999US:                  of(func(r runResult) float64 { return r.P999US }),
		MaxUS:                   of(func(r runResult) float64 { return r.MaxUS }),
		ClientCPUPerRoundTripUS: of(func(r runResult) float64 { return r.ClientCPUPerRoundTripUS }),
		ServerCPUPerRoundTripUS: of(func(r runResult) float64 { return r.ServerCPUPerRoundTripUS }),
	}
}

// check is one requirement of the issue at one size.
type check struct {
	Name  string  `json:"name"`
	Ratio float64 `json:"ratio"` // latscope / sockperf
	Want  string  `json:"want"`
	Pass  bool    `json:"pass"`
}

// comparison is the verdict at one message size.
type comparison struct {
	SizeBytes   int     `json:"size_bytes"`
	Connections int     `json:"connections"`
	Sockperf    medians `json:"sockperf"`
	Latscope    medians `json:"latscope"`
	// Qperf holds the mean round trip (twice qperf's one-way latency),
	// the rate and the CPU; qperf has no percentiles.
	Qperf *medians `json:"qperf,omitempty"`
	// Info ratios are latscope / sockperf (and latscope / qperf for the
	// mean), reported but not required.
	Info   map[string]float64 `json:"info_ratios"`
	Checks []check            `json:"checks"`
	Pass   bool               `json:"pass"`
}

// compare builds the verdict at one size from all runs.
func compare(size int, runs []runResult) comparison {
	pick := func(tool string) []runResult {
		var out []runResult
		for _, r := range runs {
			if r.Tool == tool && r.SizeBytes == size {
				out = append(out, r)
			}
		}
		return out
	}
	s, l := mediansOf(pick(toolSockperf)), mediansOf(pick(toolLatscope))
	c := comparison{SizeBytes: size, Connections: 1, Sockperf: s, Latscope: l, Info: map[string]float64{
		"mean": benchkit.Ratio(l.MeanUS, s.MeanUS), "p90": benchkit.Ratio(l.P90US, s.P90US),
		"p99": benchkit.Ratio(l.P99US, s.P99US), "p99.9": benchkit.Ratio(l.P999US, s.P999US),
		"max": benchkit.Ratio(l.MaxUS, s.MaxUS), "round_trips_per_s": benchkit.Ratio(l.PerSecond, s.PerSecond),
		"client_cpu": benchkit.Ratio(l.ClientCPUPerRoundTripUS, s.ClientCPUPerRoundTripUS),
		"server_cpu": benchkit.Ratio(l.ServerCPUPerRoundTripUS, s.ServerCPUPerRoundTripUS),
	}}
	if q := pick(toolQperf); len(q) > 0 {
		qm := mediansOf(q)
		c.Qperf = &qm
		c.Info["mean_vs_qperf"] = benchkit.Ratio(l.MeanUS, qm.MeanUS)
	}
	r := benchkit.Ratio(l.P50US, s.P50US)
	c.Checks = []check{{Name: "p50", Ratio: r, Want: fmt.Sprintf("%.2f–%.2f", 1-p50Tolerance, 1+p50Tolerance),
		Pass: benchkit.Within(r, p50Tolerance)}}
	c.Pass = s.Runs > 0 && l.Runs > 0 && c.Checks[0].Pass
	for k, v := range c.Info {
		c.Info[k] = benchkit.JSONRatio(v)
	}
	c.Checks[0].Ratio = benchkit.JSONRatio(r)
	return c
}

// writeTable prints the comparisons for people.
func writeTable(w io.Writer, cs []comparison) error {
	const header = "%-40s %9s %9s %9s %7s  %-10s %s\n"
	for _, c := range cs {
		fmt.Fprintf(w, header, fmt.Sprintf("%d B each way, %d connection (medians)", c.SizeBytes, c.Connections),
			"sockperf", "latscope", "qperf", "ratio", "required", "verdict")
		q := c.Qperf
		if q == nil {
			q = &medians{}
		}
		row := func(label string, s, l, qv float64, format string, required bool) {
			verdict, want := "", ""
			if required {
				want, verdict = c.Checks[0].Want, "ok"
				if !c.Checks[0].Pass {
					verdict = "FAIL"
				}
			}
			fmt.Fprintf(w, "  %-38s %9s %9s %9s %7s  %-10s %s\n", label, figure(format, s), figure(format, l),
				figure(format, qv), figure("%.3f", benchkit.Ratio(l, s)), want, verdict)
		}
		row("round trips per second", c.Sockperf.PerSecond, c.Latscope.PerSecond, q.PerSecond, "%.0f", false)
		row("mean round trip µs", c.Sockperf.MeanUS, c.Latscope.MeanUS, q.MeanUS, "%.1f", false)
		row("p50 µs", c.Sockperf.P50US, c.Latscope.P50US, 0, "%.1f", true)
		row("p90 µs", c.Sockperf.P90US, c.Latscope.P90US, 0, "%.1f", false)
		row("p99 µs", c.Sockperf.P99US, c.Latscope.P99US, 0, "%.1f", false)
		row("p99.9 µs", c.Sockperf.P999US, c.Latscope.P999US, 0, "%.1f", false)
		row("max µs", c.Sockperf.MaxUS, c.Latscope.MaxUS, 0, "%.0f", false)
		row("client CPU per round trip µs (rusage)", c.Sockperf.ClientCPUPerRoundTripUS, c.Latscope.ClientCPUPerRoundTripUS,
			q.ClientCPUPerRoundTripUS, "%.2f", false)
		row("server CPU per round trip µs (rusage)", c.Sockperf.ServerCPUPerRoundTripUS, c.Latscope.ServerCPUPerRoundTripUS,
			q.ServerCPUPerRoundTripUS, "%.2f", false)
		runs := fmt.Sprintf("%d sockperf, %d latscope", c.Sockperf.Runs, c.Latscope.Runs)
		if c.Qperf != nil {
			runs += fmt.Sprintf(", %d qperf", c.Qperf.Runs)
		}
		fmt.Fprintf(w, "  %-38s %s (%s runs)\n\n", "verdict", benchkit.PassWord(c.Pass), runs)
	}
	fmt.Fprintln(w, "ratio = latscope / sockperf; qperf: mean only (2 × its one-way latency), for reference")
	var failed []string
	for _, c := range cs {
		for _, ch := range c.Checks {
			if !ch.Pass {
				failed = append(failed, fmt.Sprintf("%s at %d B (%.3f, want %s)", ch.Name, c.SizeBytes, ch.Ratio, ch.Want))
			}
		}
		if c.Sockperf.Runs == 0 || c.Latscope.Runs == 0 {
			failed = append(failed, fmt.Sprintf("no runs to compare at %d B", c.SizeBytes))
		}
	}
	if len(failed) == 0 {
		_, err := fmt.Fprintf(w, "overall: PASS — latscope's p50 round trip is within ±%.0f %% of sockperf's\n", 100*p50Tolerance)
		return err
	}
	_, err := fmt.Fprintf(w, "overall: FAIL — %s\n", strings.Join(failed, "; "))
	return err
}

// figure formats a figure, "-" for one the tool does not report.
func figure(format string, v float64) string {
	if v == 0 || math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(format, v)
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
