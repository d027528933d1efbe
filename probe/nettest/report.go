package nettest

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/pace"
	"github.com/latscope/latscope/probe/loadtest"
)

// Report is the answer of a network test; its JSON form is `latscope
// nettest client --format json`.
type Report struct {
	Tool         string  `json:"tool"`
	Server       string  `json:"server"`
	Mode         string  `json:"mode"`
	RequestBytes int     `json:"request_bytes"`
	ReplyBytes   int     `json:"reply_bytes"`
	Connections  int     `json:"connections"`
	Rate         float64 `json:"rate,omitempty"`
	Seconds      float64 `json:"seconds"`
	// RoundTrips counts the completed round trips (stream mode:
	// acknowledged messages; connect mode: connections set up).
	RoundTrips int64   `json:"round_trips"`
	PerSecond  float64 `json:"round_trips_per_s"`
	MBs        float64 `json:"mb_s"`
	loadtest.Latency
	CPUPerRoundTripUS float64 `json:"cpu_per_round_trip_us"`
	// Open loop: how late round trips started (actual − intended send).
	IssueDelayP50US float64          `json:"issue_delay_p50_us,omitempty"`
	IssueDelayP99US float64          `json:"issue_delay_p99_us,omitempty"`
	Errors          int              `json:"errors"`
	LostConnections int              `json:"lost_connections"`
	Modes           []loadtest.Mode  `json:"modes"`
	Intervals       []IntervalReport `json:"intervals"`
	WhatIf          *WhatIf          `json:"what_if,omitempty"`
	Placement       pace.Placement   `json:"placement"`
}

// IntervalReport is one interval's line: throughput and latency.
type IntervalReport struct {
	Start      time.Time `json:"start"`
	Seconds    float64   `json:"seconds"`
	RoundTrips int64     `json:"round_trips"`
	PerSecond  float64   `json:"round_trips_per_s"`
	MBs        float64   `json:"mb_s"`
	MeanUS     float64   `json:"mean_us"`
	P50US      float64   `json:"p50_us"`
	P99US      float64   `json:"p99_us"`
	MaxUS      float64   `json:"max_us"`
}

// NewReport summarises a result; whatIf, when not nil, is added.
func NewReport(res Result, whatIf *WhatIf) Report {
	cfg := res.Config
	st := summarize(res.Total, res.Elapsed, cfg, res.CPU)
	r := Report{
		Tool: "latscope nettest", Server: cfg.Addr, Mode: cfg.Mode.String(), RequestBytes: cfg.Request,
		ReplyBytes: cfg.Reply, Connections: cfg.Connections, Rate: cfg.Rate, Seconds: st.Seconds,
		RoundTrips: st.Ops, PerSecond: st.IOPS, MBs: st.MBs, Latency: st.Latency, CPUPerRoundTripUS: st.CPUPerOpUS,
		Errors: res.Errors, LostConnections: res.Lost, Placement: res.Placement, WhatIf: whatIf,
	}
	if cfg.Mode == Connect {
		r.RequestBytes, r.ReplyBytes = 0, 0
	}
	if cfg.Rate > 0 && res.Total != nil && res.Total.Delay.Count() > 0 {
		r.IssueDelayP50US, r.IssueDelayP99US = res.Total.Delay.Quantile(0.5), res.Total.Delay.Quantile(0.99)
	}
	if res.Total != nil {
		r.Modes = loadtest.FindModes(res.Total.Lat, loadtest.ModeOptions{})
	}
	for _, iv := range res.Intervals {
		r.Intervals = append(r.Intervals, intervalReport(iv, cfg))
	}
	return r
}

// summarize computes the figures of a window. MB/s counts the request
// direction (client to server), as oratcptest does.
func summarize(w *loadtest.Window, d time.Duration, cfg Config, cpu time.Duration) loadtest.Stats {
	if w == nil {
		return loadtest.Stats{}
	}
	n := int64(math.Round(w.Lat.Count()))
	bytes := n * int64(cfg.Request)
	if cfg.Mode == Connect {
		bytes = 0
	}
	return loadtest.Summarize(loadtest.Step{
		Concurrency: cfg.Connections, Rate: cfg.Rate, Elapsed: d, Bytes: bytes, Latency: w.Lat, Max: w.Max, CPU: cpu,
	})
}

func intervalReport(iv IntervalResult, cfg Config) IntervalReport {
	st := summarize(iv.Window, iv.Duration, cfg, 0)
	return IntervalReport{
		Start: iv.Start, Seconds: st.Seconds, RoundTrips: st.Ops, PerSecond: st.IOPS, MBs: st.MBs,
		MeanUS: st.MeanUS, P50US: st.P50US, P99US: st.P99US, MaxUS: st.MaxUS,
	}
}

// IntervalHeader and IntervalLine print the per-interval lines, like
// oratcptest's throughput and latency lines, with percentiles.
func IntervalHeader() string {
	return fmt.Sprintf("%-10s %8s %10s %11s %8s %9s %9s %9s %9s",
		"time", "seconds", "round trips", "per second", "MB/s", "mean", "p50", "p99", "max")
}

// IntervalLine formats one interval.
func IntervalLine(iv IntervalReport) string {
	return fmt.Sprintf("%-10s %8.3f %10d %11.0f %8.3f %9s %9s %9s %9s",
		iv.Start.Local().Format("15:04:05"), iv.Seconds, iv.RoundTrips, iv.PerSecond, iv.MBs,
		usText(iv.MeanUS), usText(iv.P50US), usText(iv.P99US), usText(iv.MaxUS))
}

// LiveLine formats an interval of a running test for the live lines.
func LiveLine(iv IntervalResult, cfg Config) string { return IntervalLine(intervalReport(iv, cfg)) }

func usText(us float64) string {
	if us == 0 {
		return "-"
	}
	return hist.FormatDuration(us * 1e3)
}

// WriteTable prints the report for people; withIntervals adds the
// per-interval lines (already shown live when they were printed as they
// came).
func (r Report) WriteTable(out io.Writer, withIntervals bool) error {
	w := bufio.NewWriter(out)
	loop := "closed loop"
	if r.Rate > 0 {
		loop = fmt.Sprintf("open loop at %g per second (Poisson)", r.Rate)
	}
	what := fmt.Sprintf("%s round trips, %d-byte requests, %d-byte replies", r.Mode, r.RequestBytes, r.ReplyBytes)
	switch r.Mode {
	case Stream.String():
		what = fmt.Sprintf("stream of %d-byte messages, %d-byte acks", r.RequestBytes, r.ReplyBytes)
	case Connect.String():
		what = "TCP connection set-up"
	}
	fmt.Fprintf(w, "latscope nettest: %s, %s, %d connection(s), %s\n", r.Server, what, r.Connections, loop)
	fmt.Fprintf(w, "placement: %s\n", r.Placement)
	if withIntervals && len(r.Intervals) > 0 {
		fmt.Fprintf(w, "\n%s\n", IntervalHeader())
		for _, iv := range r.Intervals {
			fmt.Fprintln(w, IntervalLine(iv))
		}
	}
	fmt.Fprintf(w, "\n%d round trips in %.1f s: %.0f per second, %.3f MB/s\n", r.RoundTrips, r.Seconds, r.PerSecond, r.MBs)
	fmt.Fprintf(w, "latency: mean %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		usText(r.MeanUS), usText(r.P50US), usText(r.P90US), usText(r.P99US), usText(r.P999US), usText(r.MaxUS))
	fmt.Fprintf(w, "CPU per round trip (this process): %s\n", usText(r.CPUPerRoundTripUS))
	if r.Rate > 0 {
		fmt.Fprintf(w, "issue delay (actual − intended send): p50 %s, p99 %s\n", usText(r.IssueDelayP50US), usText(r.IssueDelayP99US))
	}
	if len(r.Modes) > 1 {
		parts := make([]string, len(r.Modes))
		for i, m := range r.Modes {
			parts[i] = fmt.Sprintf("%.0f %% at ~%s", 100*m.Fraction, usText(m.CenterUS))
		}
		fmt.Fprintf(w, "latency modes: %s\n", strings.Join(parts, "; "))
	}
	if r.Errors > 0 || r.LostConnections > 0 {
		fmt.Fprintf(w, "errors: %d failed round trips, %d connections lost\n", r.Errors, r.LostConnections)
	}
	if r.WhatIf != nil {
		fmt.Fprintln(w)
		r.WhatIf.write(w)
	}
	return w.Flush()
}
