package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/scripts/benchkit"
)

// The tools compared.
const (
	toolSockperf = "sockperf"
	toolLatscope = "latscope"
	toolQperf    = "qperf"
)

// runner runs each tool's server and client, pinned alike, on loopback.
type runner struct {
	sockperf, latscope, qperf string
	duration                  time.Duration
	// serverPin and clientPin prefix the commands (taskset -c LIST).
	serverPin, clientPin []string
}

// listenTimeout bounds a server's start-up.
const listenTimeout = 10 * time.Second

// serverArgs is tool's server on 127.0.0.1:port. qperf's server listens
// on every address (it has no option to choose) and runs each test on a
// port it picks.
func (r runner) serverArgs(tool string, port int) []string {
	p := strconv.Itoa(port)
	switch tool {
	case toolSockperf:
		return pinned(r.serverPin, r.sockperf, "server", "--tcp", "-i", "127.0.0.1", "-p", p)
	case toolQperf:
		return pinned(r.serverPin, r.qperf, "--listen_port", p)
	default:
		return pinned(r.serverPin, r.latscope, "nettest", "server", "--listen", "127.0.0.1:"+p)
	}
}

// clientArgs is tool's client: one TCP connection, one message of size
// bytes in flight each way (sockperf's -m and latscope's --size count
// their own headers, qperf's messages have none), full round trips.
// qperf's -vvs adds message counts (for CPU per round trip) without
// changing the test.
func (r runner) clientArgs(tool string, port, size int) []string {
	p, m, secs := strconv.Itoa(port), strconv.Itoa(size), strconv.Itoa(int(r.duration/time.Second))
	switch tool {
	case toolSockperf:
		return pinned(r.clientPin, r.sockperf, "ping-pong", "--tcp", "--full-rtt", "-m", m, "-i", "127.0.0.1", "-p", p, "-t", secs)
	case toolQperf:
		return pinned(r.clientPin, r.qperf, "127.0.0.1", "-lp", p, "-m", m, "-t", secs, "-vvs", "tcp_lat")
	default:
		return pinned(r.clientPin, r.latscope, "nettest", "client", "127.0.0.1:"+p, "--size", m,
			"--duration", r.duration.String(), "--format", "json", "--plain")
	}
}

func pinned(pin []string, tool string, args ...string) []string {
	return append(append(append([]string(nil), pin...), tool), args...)
}

// measure runs one tool's server and client once at size bytes; the
// server is stopped however the run ends.
func (r runner) measure(ctx context.Context, tool string, size int) (runResult, error) {
	res := runResult{Tool: tool, SizeBytes: size}
	srv, port, err := r.startServer(ctx, tool)
	if err != nil {
		return res, err
	}
	defer srv.Stop()
	res.ServerCommand, res.Port = r.serverArgs(tool, port), port
	res.ClientCommand = r.clientArgs(tool, port, size)
	p, err := benchkit.Run(ctx, res.ClientCommand, r.duration+time.Minute)
	serverDied := srv.Exited()
	sp := srv.Stop()
	res.Stderr, res.ServerLog = benchkit.Tail(p.Stderr, 20), benchkit.Tail(sp.Stdout, 20)
	cmd := strings.Join(res.ClientCommand, " ")
	if err != nil {
		server := "server (stopped after the client)"
		if serverDied {
			server = "server (" + sp.State + " during the run)"
		}
		return res, fmt.Errorf("%s: %w%s%s\n  %s %s:%s", cmd, err, benchkit.Indent(res.Stderr),
			benchkit.Indent(benchkit.Tail(p.Stdout, 10)), server, strings.Join(res.ServerCommand, " "), benchkit.Indent(res.ServerLog))
	}
	if res.measurement, err = r.parse(tool, p.Stdout, size); err != nil {
		return res, fmt.Errorf("%s: %w%s", cmd, err, benchkit.Indent(res.Stderr))
	}
	if tool == toolLatscope {
		res.Raw, _ = benchkit.JSONStart(p.Stdout)
	} else {
		res.Output = string(ansiEscape.ReplaceAll(p.Stdout, nil))
	}
	res.ClientCPUUserS, res.ClientCPUSysS = p.User.Seconds(), p.Sys.Seconds()
	res.ServerCPUS = sp.CPU().Seconds()
	if n := float64(res.AllRoundTrips); n > 0 {
		res.ClientCPUPerRoundTripUS = float64(p.CPU().Nanoseconds()) / 1e3 / n
		res.ServerCPUPerRoundTripUS = float64(sp.CPU().Nanoseconds()) / 1e3 / n
	}
	res.WallS, res.ClientMaxRSSKB = p.Wall.Seconds(), p.MaxRSSKB
	res.LoadAverage = loadAverage()
	return res, nil
}

func (r runner) parse(tool string, out []byte, size int) (measurement, error) {
	switch tool {
	case toolSockperf:
		return parseSockperf(out)
	case toolQperf:
		return parseQperf(out, float64(r.duration/time.Second))
	default:
		return parseLatscope(out, size)
	}
}

// startServer starts tool's server on a free port and waits until it
// listens; a port taken in between (another program got it first) is
// retried on another.
func (r runner) startServer(ctx context.Context, tool string) (*benchkit.Server, int, error) {
	var last error
	for range 3 {
		port, err := benchkit.FreePort()
		if err != nil {
			return nil, 0, err
		}
		argv := r.serverArgs(tool, port)
		srv, err := benchkit.StartServer(argv)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
		}
		err = srv.WaitListening(ctx, port, listenTimeout)
		if err == nil {
			return srv, port, nil
		}
		srv.Stop()
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		last = fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return nil, 0, last
}

// runResult is one run of one tool: its server and its client.
type runResult struct {
	Tool          string   `json:"tool"`
	SizeBytes     int      `json:"size_bytes"`
	Run           int      `json:"run"`      // 1..runs for this tool and size
	Sequence      int      `json:"sequence"` // order among all runs
	Port          int      `json:"port"`
	ServerCommand []string `json:"server_command"`
	ClientCommand []string `json:"client_command"`
	measurement
	// CPU of each whole process from its rusage (utime + stime), the same
	// method for every tool: start-up, warm-up and exit included, divided
	// by all the round trips the process made.
	ClientCPUUserS          float64 `json:"client_cpu_user_s"`
	ClientCPUSysS           float64 `json:"client_cpu_sys_s"`
	ClientCPUPerRoundTripUS float64 `json:"client_cpu_per_round_trip_us"`
	ServerCPUS              float64 `json:"server_cpu_s"`
	ServerCPUPerRoundTripUS float64 `json:"server_cpu_per_round_trip_us"`
	WallS                   float64 `json:"wall_s"`
	// LoadAverage is the 1-minute load average as the run ended: the
	// machine is shared, and the figures move with it.
	LoadAverage    float64 `json:"load_average_1m"`
	ClientMaxRSSKB int64   `json:"client_max_rss_kb"`
	// RetriedAfter is the error of a first attempt that failed (the run
	// was repeated once).
	RetriedAfter string `json:"retried_after,omitempty"`
	Stderr       string `json:"stderr,omitempty"`
	ServerLog    string `json:"server_log,omitempty"`
	// Raw is latscope's JSON report, Output a text tool's report (colour
	// codes removed), verbatim.
	Raw    json.RawMessage `json:"raw,omitempty"`
	Output string          `json:"output,omitempty"`
}

// loadAverage is the 1-minute load average (/proc/loadavg), 0 where there
// is none.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
