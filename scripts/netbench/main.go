// Command netbench runs `latscope nettest` and sockperf side by side on
// loopback (TCP, one connection, the same message size each way, both
// pinned alike with taskset), alternating runs, and compares their medians
// against issue 20's requirements: latscope's p50, p90 and p99 round trips
// at most 5 % above sockperf's (and p50 not 15 % below, issue 5), its
// server's CPU per round trip (rusage) at most 1.1× sockperf server's.
// qperf's tcp_lat (a mean; twice its one-way latency) is shown for
// reference, the clients' CPU for information, and beside the medians the
// lowest and highest figures and the load average of the runs.
//
//	go run ./scripts/netbench -out bench-out/nettest-vs-sockperf.json
//
// It exits non-zero on harness errors only; a failed requirement is shown
// as FAIL in the table (and exits 3 with -strict).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/latscope/latscope/scripts/benchkit"
)

// Message sizes: sockperf refuses messages smaller than its own 14-byte
// header; latscope's largest message is 1 MiB.
const (
	minSize = 14
	maxSize = 1 << 20
)

func main() {
	os.Exit(benchkit.Main("netbench", os.Args[1:], os.Stdout, os.Stderr, parseFlags, bench))
}

// config is the parsed command line.
type config struct {
	benchkit.Options
	sizes                     []int
	runs                      int
	duration                  time.Duration
	serverCPUs, clientCPUs    string
	latscope, sockperf, qperf string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{Options: benchkit.NewOptions()}
	fs := benchkit.NewFlagSet("netbench", "latscope nettest vs sockperf (and qperf) on loopback: TCP round trips, one connection.", stderr)
	c.Define(fs, "nettest-vs-sockperf.json", "the raw runs and the summary", "a requirement")
	sizes := fs.String("sizes", "64,1024", fmt.Sprintf("comma-separated message sizes in bytes, each way, headers included (%d to %d)", minSize, maxSize))
	fs.IntVar(&c.runs, "runs", 3, "runs per tool and size (medians are compared)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "length of each run, whole seconds (sockperf measures after a 0.4 s warm-up)")
	fs.StringVar(&c.serverCPUs, "server-cpus", "0", "taskset -c list for every server (\"\": not pinned)")
	fs.StringVar(&c.clientCPUs, "client-cpus", "1", "taskset -c list for every client (\"\": not pinned)")
	fs.StringVar(&c.latscope, "latscope", "", "latscope binary (default: bin/latscope, else built from this repository)")
	fs.StringVar(&c.sockperf, "sockperf", "sockperf", "sockperf binary")
	fs.StringVar(&c.qperf, "qperf", "qperf", "qperf binary (\"\": no qperf runs); skipped with a warning when missing")
	if err := benchkit.Parse(fs, args); err != nil {
		return c, err
	}
	var err error
	if c.sizes, err = benchkit.ParseInts(*sizes, minSize, maxSize); err != nil {
		return c, fmt.Errorf("-sizes %q: %w", *sizes, err)
	}
	if c.runs < 1 {
		return c, errors.New("-runs must be at least 1")
	}
	// sockperf and qperf take whole seconds; sockperf's warm-up takes 0.4 s.
	if c.duration < 2*time.Second || c.duration%time.Second != 0 {
		return c, fmt.Errorf("-duration %s: want whole seconds, at least 2s", c.duration)
	}
	return c, nil
}

// report is the JSON written to -out.
type report struct {
	Machine     machineFacts `json:"machine"`
	Sizes       []int        `json:"sizes_bytes"`
	Connections int          `json:"connections"`
	DurationS   float64      `json:"duration_s"`
	RunsPerTool int          `json:"runs_per_tool"`
	Runs        []runResult  `json:"runs"`
	Summary     []comparison `json:"summary"`
	Pass        bool         `json:"pass"`
}

// machineFacts are the machine, the tools' versions and the pinning.
type machineFacts struct {
	benchkit.Machine
	Sockperf        string `json:"sockperf"`
	SockperfPackage string `json:"sockperf_package,omitempty"`
	Qperf           string `json:"qperf,omitempty"`
	QperfPackage    string `json:"qperf_package,omitempty"`
	Latscope        string `json:"latscope"`
	ServerCPUs      string `json:"server_cpus,omitempty"`
	ClientCPUs      string `json:"client_cpus,omitempty"`
}

// bench finds the tools, runs everything, writes the table and the JSON
// and reports whether every requirement passed.
func bench(ctx context.Context, c config, stdout, stderr io.Writer) (bool, error) {
	scratch, err := os.MkdirTemp("", "netbench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(scratch)
	r, err := prepare(ctx, c, scratch, stderr)
	if err != nil {
		return false, err
	}
	rep := report{
		Machine: gatherMachine(ctx, r, c), Sizes: c.sizes, Connections: 1,
		DurationS: c.duration.Seconds(), RunsPerTool: c.runs,
	}
	writeHeader(stdout, rep, r)
	if rep.Runs, err = runAll(ctx, r, c, stderr); err != nil {
		return false, err
	}
	rep.Summary, rep.Pass = benchkit.Judge(c.sizes, rep.Runs, compare)
	if err := writeTable(stdout, rep.Summary); err != nil {
		return false, err
	}
	return rep.Pass, benchkit.SaveJSON(stdout, c.Out, "raw runs and summary", rep)
}

// prepare finds the tools: sockperf is required, qperf optional, latscope
// built into scratch when bin/latscope is missing.
func prepare(ctx context.Context, c config, scratch string, stderr io.Writer) (runner, error) {
	r := runner{duration: c.duration}
	var err error
	if r.sockperf, err = exec.LookPath(c.sockperf); err != nil {
		return r, fmt.Errorf("sockperf not found (%v): install it (apt-get install sockperf)", err)
	}
	if c.qperf != "" {
		if r.qperf, err = exec.LookPath(c.qperf); err != nil {
			fmt.Fprintf(stderr, "netbench: qperf not found (%v): no qperf reference (apt-get install qperf)\n", err)
			r.qperf = ""
		}
	}
	if c.serverCPUs != "" || c.clientCPUs != "" {
		if _, err := exec.LookPath("taskset"); err != nil {
			return r, fmt.Errorf("taskset not found (%v): install util-linux, or run unpinned with -server-cpus '' -client-cpus ''", err)
		}
	}
	if c.serverCPUs != "" {
		r.serverPin = []string{"taskset", "-c", c.serverCPUs}
	}
	if c.clientCPUs != "" {
		r.clientPin = []string{"taskset", "-c", c.clientCPUs}
	}
	r.latscope, err = benchkit.FindLatscope(ctx, c.latscope, true, c.Repo, scratch, stderr)
	if err != nil {
		return r, err
	}
	return r, nil
}

// tools are the tools to run: sockperf and latscope side by side, and
// qperf when there is one; benchkit.RunOrder reverses them every other
// run, so that the first of the two alternates and qperf is at either end.
func (r runner) tools() []string {
	tools := []string{toolSockperf, toolLatscope}
	if r.qperf != "" {
		tools = append(tools, toolQperf)
	}
	return tools
}

// runAll runs every tool at every size, alternating the order so that a
// drift in the machine's load does not favour one tool.
func runAll(ctx context.Context, r runner, c config, stderr io.Writer) ([]runResult, error) {
	return benchkit.Sweep(ctx, c.sizes, c.runs, r.tools(), func(s benchkit.Step[int]) (runResult, error) {
		res, err := r.measure(ctx, s.Tool, s.Key)
		if err != nil && ctx.Err() == nil {
			// A run can fail for a reason outside the tools (a stranger
			// killing a server on a shared machine): once.
			fmt.Fprintf(stderr, "netbench: %v\nnetbench: repeating this run once\n", err)
			first := err.Error()
			res, err = r.measure(ctx, s.Tool, s.Key)
			res.RetriedAfter = first
		}
		if err != nil {
			return res, err
		}
		res.Run, res.Sequence = s.Run, s.Seq
		fmt.Fprintf(stderr, "[%2d/%d] %s\n", res.Sequence, s.Total, progressLine(res))
		return res, nil
	})
}

// progressLine sums up a run on stderr while the harness works.
func progressLine(r runResult) string {
	us := func(v float64) string { return benchkit.Figure("%.1f µs", v) }
	return fmt.Sprintf("%-8s %5d B run %d: %6.0f RT/s  mean %8s  p50 %8s  p90 %8s  p99 %9s  CPU/RT client %5.2f server %5.2f µs  load %.2f",
		r.Tool, r.SizeBytes, r.Run, r.PerSecond, us(r.MeanUS), us(r.P50US), us(r.P90US), us(r.P99US),
		r.ClientCPUPerRoundTripUS, r.ServerCPUPerRoundTripUS, r.LoadAverage)
}

func gatherMachine(ctx context.Context, r runner, c config) machineFacts {
	m := machineFacts{
		Machine:         benchkit.GatherMachine(ctx),
		Sockperf:        benchkit.CommandLine(ctx, r.sockperf, "--version"),
		SockperfPackage: benchkit.DebianVersion(ctx, "sockperf"),
		Latscope:        benchkit.LatscopeVersion(ctx, r.latscope),
		ServerCPUs:      c.serverCPUs, ClientCPUs: c.clientCPUs,
	}
	if r.qperf != "" {
		m.Qperf = benchkit.CommandLine(ctx, r.qperf, "--version")
		m.QperfPackage = benchkit.DebianVersion(ctx, "qperf")
	}
	return m
}

func writeHeader(w io.Writer, rep report, r runner) {
	m := rep.Machine
	tools := "sockperf"
	if r.qperf != "" {
		tools = "sockperf and qperf"
	}
	fmt.Fprintf(w, "latscope nettest vs %s: TCP round trips on loopback, %d connection, %s per run, %d run(s) of each tool, alternating\n",
		tools, rep.Connections, time.Duration(rep.DurationS*float64(time.Second)), rep.RunsPerTool)
	fmt.Fprintf(w, "machine: %s; %s (%s); %s (%s); latscope %s (commit %s)\n",
		m.Summary(), m.Sockperf, m.SockperfPackage, m.Qperf, m.QperfPackage, m.Latscope, m.Commit)
	pin := func(s string) string {
		if s == "" {
			return "not pinned"
		}
		return "taskset -c " + s
	}
	fmt.Fprintf(w, "servers: %s; clients: %s\n\n", pin(m.ServerCPUs), pin(m.ClientCPUs))
}
