package main

import (
	"fmt"
	"io"

	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/scripts/benchkit"
)

// p50Tolerance is the requirement: latscope's p50 round trip
// within ±15 % of sockperf's.
const p50Tolerance = 0.15

// medians are a tool's medians over its runs at one size; each figure is
// the median of that figure, not the figures of a median run.
type medians struct {
	Runs      int     `json:"runs"`
	PerSecond float64 `json:"round_trips_per_s"`
	loadtest.Latency
	ClientCPUPerRoundTripUS float64 `json:"client_cpu_per_round_trip_us"`
	ServerCPUPerRoundTripUS float64 `json:"server_cpu_per_round_trip_us"`
}

// Figures lists the figures whose medians are taken.
func (m *medians) Figures() []*float64 {
	return []*float64{&m.PerSecond, &m.MeanUS, &m.P50US, &m.P90US, &m.P99US, &m.P999US, &m.MaxUS,
		&m.ClientCPUPerRoundTripUS, &m.ServerCPUPerRoundTripUS}
}

func mediansOf(runs []runResult) medians {
	m := benchkit.Medians(runs, func(r runResult) medians {
		return medians{PerSecond: r.PerSecond, Latency: r.Latency,
			ClientCPUPerRoundTripUS: r.ClientCPUPerRoundTripUS, ServerCPUPerRoundTripUS: r.ServerCPUPerRoundTripUS}
	})
	m.Runs = len(runs)
	return m
}

// comparison is the verdict at one message size. Its info ratios are
// latscope / sockperf (and latscope / qperf for the mean), reported but
// not required.
type comparison struct {
	SizeBytes   int     `json:"size_bytes"`
	Connections int     `json:"connections"`
	Sockperf    medians `json:"sockperf"`
	Latscope    medians `json:"latscope"`
	// Qperf holds the mean round trip (twice qperf's one-way latency),
	// the rate and the CPU; qperf has no percentiles.
	Qperf *medians `json:"qperf,omitempty"`
	benchkit.Verdict
}

// compare builds the verdict at one size from all runs.
func compare(size int, runs []runResult) comparison {
	pick := func(tool string) []runResult {
		return benchkit.Select(runs, func(r runResult) bool { return r.Tool == tool && r.SizeBytes == size })
	}
	s, l := mediansOf(pick(toolSockperf)), mediansOf(pick(toolLatscope))
	c := comparison{SizeBytes: size, Connections: 1, Sockperf: s, Latscope: l}
	info := map[string]float64{
		"mean": benchkit.Ratio(l.MeanUS, s.MeanUS), "p90": benchkit.Ratio(l.P90US, s.P90US),
		"p99": benchkit.Ratio(l.P99US, s.P99US), "p99.9": benchkit.Ratio(l.P999US, s.P999US),
		"max": benchkit.Ratio(l.MaxUS, s.MaxUS), "round_trips_per_s": benchkit.Ratio(l.PerSecond, s.PerSecond),
		"client_cpu": benchkit.Ratio(l.ClientCPUPerRoundTripUS, s.ClientCPUPerRoundTripUS),
		"server_cpu": benchkit.Ratio(l.ServerCPUPerRoundTripUS, s.ServerCPUPerRoundTripUS),
	}
	if q := pick(toolQperf); len(q) > 0 {
		qm := mediansOf(q)
		c.Qperf = &qm
		info["mean_vs_qperf"] = benchkit.Ratio(l.MeanUS, qm.MeanUS)
	}
	c.Verdict = benchkit.NewVerdict(s.Runs > 0 && l.Runs > 0, info,
		benchkit.NewCheck("p50", fmt.Sprintf("%.2f–%.2f", 1-p50Tolerance, 1+p50Tolerance), benchkit.Ratio(l.P50US, s.P50US),
			func(r float64) bool { return benchkit.Within(r, p50Tolerance) }))
	return c
}

// writeTable prints the comparisons for people.
func writeTable(w io.Writer, cs []comparison) error {
	t := benchkit.Table{W: w, LabelWidth: 40, FigureWidth: 9, Blank: true}
	for _, c := range cs {
		t.Heading(fmt.Sprintf("%d B each way, %d connection (medians)", c.SizeBytes, c.Connections), "sockperf", "latscope", "qperf")
		q := c.Qperf
		if q == nil {
			q = &medians{}
		}
		p50 := c.Check("p50")
		t.Row("round trips per second", "%.0f", nil, c.Sockperf.PerSecond, c.Latscope.PerSecond, q.PerSecond)
		t.Row("mean round trip µs", "%.1f", nil, c.Sockperf.MeanUS, c.Latscope.MeanUS, q.MeanUS)
		t.Row("p50 µs", "%.1f", p50, c.Sockperf.P50US, c.Latscope.P50US, 0)
		t.Row("p90 µs", "%.1f", nil, c.Sockperf.P90US, c.Latscope.P90US, 0)
		t.Row("p99 µs", "%.1f", nil, c.Sockperf.P99US, c.Latscope.P99US, 0)
		t.Row("p99.9 µs", "%.1f", nil, c.Sockperf.P999US, c.Latscope.P999US, 0)
		t.Row("max µs", "%.0f", nil, c.Sockperf.MaxUS, c.Latscope.MaxUS, 0)
		t.Row("client CPU per round trip µs (rusage)", "%.2f", nil,
			c.Sockperf.ClientCPUPerRoundTripUS, c.Latscope.ClientCPUPerRoundTripUS, q.ClientCPUPerRoundTripUS)
		t.Row("server CPU per round trip µs (rusage)", "%.2f", nil,
			c.Sockperf.ServerCPUPerRoundTripUS, c.Latscope.ServerCPUPerRoundTripUS, q.ServerCPUPerRoundTripUS)
		runs := fmt.Sprintf("%d sockperf, %d latscope", c.Sockperf.Runs, c.Latscope.Runs)
		if c.Qperf != nil {
			runs += fmt.Sprintf(", %d qperf", c.Qperf.Runs)
		}
		t.End(c.Pass, runs)
	}
	fmt.Fprintln(w, "ratio = latscope / sockperf; qperf: mean only (2 × its one-way latency), for reference")
	var failed []string
	for _, c := range cs {
		failed = append(failed, c.Failures(fmt.Sprintf("%d B", c.SizeBytes))...)
		if c.Sockperf.Runs == 0 || c.Latscope.Runs == 0 {
			failed = append(failed, fmt.Sprintf("no runs to compare at %d B", c.SizeBytes))
		}
	}
	return t.Overall(failed, fmt.Sprintf("latscope's p50 round trip is within ±%.0f %% of sockperf's", 100*p50Tolerance))
}
