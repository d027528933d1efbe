package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/scripts/benchkit"
)

// Synthetic runs (figures chosen to sit on and just past the limits): the
// medians are taken per figure, the ratio is latscope / sockperf, and the
// edges (p50 0.85–1.05, p90 and p99 ≤ 1.05, server CPU ≤ 1.10) pass.
func TestCompare(t *testing.T) {
	run := func(tool string, size int, p50, p99, mean, cpu float64) runResult {
		return runResult{Tool: tool, SizeBytes: size, ClientCPUPerRoundTripUS: cpu, ServerCPUPerRoundTripUS: 2 * cpu, LoadAverage: cpu / 10,
			measurement: measurement{PerSecond: 1e6 / mean,
				Latency: loadtest.Latency{P50US: p50, P99US: p99, MeanUS: mean, P90US: 1.5 * p50, P999US: 3 * p99, MaxUS: 10 * p99}}}
	}
	other := run(toolSockperf, 1024, 1, 1, 1, 1) // another size: ignored
	runs := []runResult{
		run(toolSockperf, 64, 40, 100, 45, 20), run(toolSockperf, 64, 60, 80, 50, 22), run(toolSockperf, 64, 50, 90, 55, 21), other,
		// medians: p50 52.5, p99 94.5, mean 55, CPU 23.1 → ratios 1.05, 1.05, 1.10, 1.10
		run(toolLatscope, 64, 52.5, 94.5, 55, 23.1), run(toolLatscope, 64, 20, 500, 40, 5), run(toolLatscope, 64, 90, 10, 70, 31),
		run(toolQperf, 64, 0, 0, 44, 18), run(toolQperf, 64, 0, 0, 46, 19),
	}
	c := compare(64, runs)
	if c.Sockperf.Runs != 3 || c.Latscope.Runs != 3 || c.Qperf == nil || c.Qperf.Runs != 2 {
		t.Fatalf("runs %d/%d/%v", c.Sockperf.Runs, c.Latscope.Runs, c.Qperf)
	}
	if c.Sockperf.P50US != 50 || c.Sockperf.P99US != 90 || c.Sockperf.MeanUS != 50 || c.Sockperf.ClientCPUPerRoundTripUS != 21 || c.Sockperf.ServerCPUPerRoundTripUS != 42 {
		t.Errorf("sockperf medians %+v", c.Sockperf)
	}
	if c.Latscope.P50US != 52.5 || c.Latscope.P99US != 94.5 || c.Latscope.MeanUS != 55 || c.Latscope.ClientCPUPerRoundTripUS != 23.1 {
		t.Errorf("latscope medians %+v", c.Latscope)
	}
	if s := c.Latscope.Spreads["p99_us"]; s.Min != 10 || s.Max != 500 {
		t.Errorf("latscope p99 spread %+v, want 10–500", s)
	}
	if s := c.Sockperf.Spreads["load_average_1m"]; !near(s.Min, 2) || !near(s.Max, 2.2) || !near(c.Sockperf.LoadAverage, 2.1) {
		t.Errorf("sockperf load average %v, spread %+v; want 2.1 in 2–2.2", c.Sockperf.LoadAverage, s)
	}
	if c.Qperf.MeanUS != 45 || c.Qperf.P50US != 0 {
		t.Errorf("qperf medians %+v", c.Qperf)
	}
	if len(c.Checks) != 4 || !c.Pass {
		t.Errorf("every figure on its limit: %+v", c.Checks)
	}
	for name, ratio := range map[string]float64{"p50": 1.05, "p90": 1.05, "p99": 1.05, "server_cpu": 1.1} {
		if ch := c.Check(name); ch == nil || !near(ch.Ratio, ratio) || !ch.Pass {
			t.Errorf("check %s: %+v, want ratio %v passing", name, ch, ratio)
		}
	}
	for k, want := range map[string]float64{"p99": 1.05, "mean": 1.1, "client_cpu": 1.1, "mean_vs_qperf": 55.0 / 45, "p99.9": 1.05} {
		if !near(c.Info[k], want) {
			t.Errorf("info %s = %v, want %v", k, c.Info[k], want)
		}
	}

	for p50, pass := range map[float64]bool{42.5: true, 42.4: false, 52.6: false, 50: true} {
		c := compare(64, []runResult{run(toolSockperf, 64, 50, 90, 50, 20), run(toolLatscope, 64, p50, 90, 50, 20)})
		if c.Pass != pass || c.Check("p50").Pass != pass {
			t.Errorf("latscope p50 %v against 50: pass %v, want %v", p50, c.Pass, pass)
		}
	}
	// Lower percentiles and CPU than sockperf's pass; 5 % (10 %) above fails.
	for _, c := range []struct {
		p99, cpu float64
		failed   string
	}{{50, 10, ""}, {94.6, 20, "p99"}, {90, 22.1, "server_cpu"}} {
		v := compare(64, []runResult{run(toolSockperf, 64, 50, 90, 50, 20), run(toolLatscope, 64, 50, c.p99, 50, c.cpu)})
		if got := v.Failures("here"); c.failed == "" && len(got) != 0 || c.failed != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.failed+" at here")) {
			t.Errorf("latscope p99 %v, CPU %v against 90 and 20: failures %q, want %q", c.p99, c.cpu, got, c.failed)
		}
	}

	// No sockperf runs, or no qperf: a failed comparison without NaN in
	// the JSON, and no qperf section.
	c = compare(64, []runResult{run(toolLatscope, 64, 50, 90, 50, 20)})
	if c.Pass || c.Qperf != nil || benchkit.AllPass([]comparison{c}) {
		t.Errorf("a comparison without sockperf runs: %+v", c)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Errorf("JSON of an empty comparison: %v", err)
	}
	if benchkit.AllPass[comparison](nil) {
		t.Error("no comparison passed")
	}
}

// Runs pair by number (back to back); a latscope run without its
// sockperf partner is left out; the ratios' median, lowest and highest.
func TestPairedRatios(t *testing.T) {
	run := func(tool string, n int, p50, cpu float64) runResult {
		return runResult{Tool: tool, SizeBytes: 64, Run: n, ServerCPUPerRoundTripUS: cpu,
			measurement: measurement{Latency: loadtest.Latency{P50US: p50, P90US: p50, P99US: p50}}}
	}
	c := compare(64, []runResult{
		run(toolSockperf, 1, 20, 10), run(toolLatscope, 1, 22, 10),
		run(toolSockperf, 2, 30, 10), run(toolLatscope, 2, 27, 12),
		run(toolSockperf, 3, 25, 10), run(toolLatscope, 3, 25, 9),
		run(toolLatscope, 4, 100, 100), // no partner
	})
	p50, cpu := c.Paired["p50_us"], c.Paired["server_cpu_per_round_trip_us"]
	if p50.Pairs != 3 || !near(p50.Median, 1) || !near(p50.Min, 0.9) || !near(p50.Max, 1.1) {
		t.Errorf("p50 pairs %+v, want 3 with median 1 in 0.9–1.1", p50)
	}
	if !near(cpu.Median, 1) || !near(cpu.Min, 0.9) || !near(cpu.Max, 1.2) {
		t.Errorf("server CPU pairs %+v, want median 1 in 0.9–1.2", cpu)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Error(err)
	}
}

func TestWriteTable(t *testing.T) {
	s := runResult{Tool: toolSockperf, SizeBytes: 64, ServerCPUPerRoundTripUS: 20, LoadAverage: 4.5,
		measurement: measurement{Latency: loadtest.Latency{P50US: 50, P90US: 60, P99US: 90, MeanUS: 52}, PerSecond: 19000}}
	l := runResult{Tool: toolLatscope, SizeBytes: 64, ServerCPUPerRoundTripUS: 21, LoadAverage: 5.5,
		measurement: measurement{Latency: loadtest.Latency{P50US: 60, P90US: 61, P99US: 140, MeanUS: 61}, PerSecond: 16000}}
	q := runResult{Tool: toolQperf, SizeBytes: 64, measurement: measurement{Latency: loadtest.Latency{MeanUS: 55}, PerSecond: 18000}}
	var b strings.Builder
	if err := writeTable(&b, []comparison{compare(64, []runResult{s, l, q})}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"64 B each way, 1 connection (medians)", "p50 µs", "1.200  0.85–1.05  FAIL", "p90 µs", "1.017  ≤ 1.05     ok",
		"p99 µs", "1.556  ≤ 1.05     FAIL", "55.0", "1.050  ≤ 1.10     ok", "load average (1 min) at the runs' end       4.50      5.50",
		"latscope lowest–highest: p50 µs 60.0–60.0, p90 µs 61.0–61.0, p99 µs 140.0–140.0, server CPU/RT µs 21.0–21.0, load 5.5–5.5",
		"FAIL (1 sockperf, 1 latscope, 1 qperf runs)",
		"paired runs (1), latscope / sockperf, median (lowest–highest): p50 1.200 (1.20–1.20), p90 1.017 (1.02–1.02), p99 1.556 (1.56–1.56), server CPU/RT 1.050 (1.05–1.05)",
		"overall: FAIL — p50 at 64 B (1.200, want 0.85–1.05); p99 at 64 B (1.556, want ≤ 1.05)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if p := progressLine(q); !strings.Contains(p, "qperf       64 B run 0:") || !strings.Contains(p, "mean  55.0 µs  p50        -") {
		t.Errorf("qperf progress line %q", p)
	}
	b.Reset()
	l.P50US, l.P99US = 52, 94
	if err := writeTable(&b, []comparison{compare(64, []runResult{s, l})}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "overall: PASS") || !strings.Contains(out, "1.040  0.85–1.05  ok") {
		t.Errorf("passing table:\n%s", out)
	}
}

// The commands are the brief's: TCP, full round trips, one connection,
// the same size each way, servers and clients pinned alike, on loopback.
func TestCommands(t *testing.T) {
	r := runner{sockperf: "sockperf", latscope: "latscope", qperf: "qperf", duration: 10 * time.Second,
		serverPin: []string{"taskset", "-c", "0"}, clientPin: []string{"taskset", "-c", "1"}}
	for _, c := range []struct{ got, want []string }{
		{r.serverArgs(toolSockperf, 4000), strings.Fields("taskset -c 0 sockperf server --tcp -i 127.0.0.1 -p 4000")},
		{r.clientArgs(toolSockperf, 4000, 64), strings.Fields("taskset -c 1 sockperf ping-pong --tcp --full-rtt -m 64 -i 127.0.0.1 -p 4000 -t 10")},
		{r.serverArgs(toolLatscope, 4001), strings.Fields("taskset -c 0 latscope nettest server --listen 127.0.0.1:4001")},
		{r.clientArgs(toolLatscope, 4001, 1024), strings.Fields("taskset -c 1 latscope nettest client 127.0.0.1:4001 --size 1024 --duration 10s --format json --plain")},
		{r.serverArgs(toolQperf, 4002), strings.Fields("taskset -c 0 qperf --listen_port 4002")},
		{r.clientArgs(toolQperf, 4002, 64), strings.Fields("taskset -c 1 qperf 127.0.0.1 -lp 4002 -m 64 -t 10 -vvs tcp_lat")},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("command\n %v\nwant\n %v", c.got, c.want)
		}
	}
	r.serverPin, r.clientPin = nil, nil
	if got := r.clientArgs(toolSockperf, 1, 14)[0]; got != "sockperf" {
		t.Errorf("unpinned client starts with %q", got)
	}
}

// sockperf and latscope always run next to each other, first in turn;
// qperf at either end; without qperf the two alternate.
func TestToolOrder(t *testing.T) {
	r := runner{qperf: "qperf"}
	if got := benchkit.RunOrder(r.tools(), 0); !slices.Equal(got, []string{toolSockperf, toolLatscope, toolQperf}) {
		t.Errorf("run 1: %v", got)
	}
	if got := benchkit.RunOrder(r.tools(), 1); !slices.Equal(got, []string{toolQperf, toolLatscope, toolSockperf}) {
		t.Errorf("run 2: %v", got)
	}
	r.qperf = ""
	if got := benchkit.RunOrder(r.tools(), 1); !slices.Equal(got, []string{toolLatscope, toolSockperf}) {
		t.Errorf("run 2 without qperf: %v", got)
	}
}

func TestParseFlags(t *testing.T) {
	var stderr strings.Builder
	c, err := parseFlags([]string{"-sizes", "14, 1024,65536", "-runs", "5", "-duration", "3s", "-server-cpus", "", "-qperf", ""}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.sizes, []int{14, 1024, 65536}) || c.runs != 5 || c.duration != 3*time.Second || c.serverCPUs != "" || c.clientCPUs != "1" || c.qperf != "" {
		t.Errorf("config %+v", c)
	}
	if c, _ := parseFlags(nil, &stderr); !slices.Equal(c.sizes, []int{64, 1024}) || c.runs != 3 || c.duration != 10*time.Second ||
		c.serverCPUs != "0" || c.clientCPUs != "1" || c.latscope != "" || !strings.HasSuffix(c.Out, "bench-out/nettest-vs-sockperf.json") {
		t.Errorf("defaults %+v", c)
	}
	for _, args := range [][]string{
		{"-sizes", "13"}, {"-sizes", "64,x"}, {"-sizes", "2000000"}, {"-runs", "0"}, {"-duration", "1s"}, {"-duration", "2500ms"}, {"extra"},
	} {
		if _, err := parseFlags(args, &stderr); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
