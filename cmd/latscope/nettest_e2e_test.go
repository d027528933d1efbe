package main

// End-to-end tests of `latscope nettest`: a real server process and real
// clients on loopback, through the built binary.

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// netReport mirrors the fields of `latscope nettest client --format json`
// the issue names.
type netReport struct {
	RequestBytes int     `json:"request_bytes"`
	ReplyBytes   int     `json:"reply_bytes"`
	Connections  int     `json:"connections"`
	RoundTrips   int64   `json:"round_trips"`
	P50US        float64 `json:"p50_us"`
	P90US        float64 `json:"p90_us"`
	P99US        float64 `json:"p99_us"`
	P999US       float64 `json:"p999_us"`
	MaxUS        float64 `json:"max_us"`
	Mode         string  `json:"mode"`
	Intervals    []struct {
		Start      time.Time `json:"start"`
		Seconds    float64   `json:"seconds"`
		RoundTrips int64     `json:"round_trips"`
		MBs        *float64  `json:"mb_s"`
		P50US      float64   `json:"p50_us"`
		P99US      float64   `json:"p99_us"`
	} `json:"intervals"`
	WhatIf *struct {
		ServerTimeUS float64 `json:"server_time_us"`
		Rows         []struct {
			Label string  `json:"label"`
			TPS   float64 `json:"tps"`
		} `json:"rows"`
	} `json:"what_if"`
}

// freePort returns a loopback address nobody listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startNetServer runs `latscope nettest server` and waits until it
// listens; its stderr is returned when the test stops it.
func startNetServer(t *testing.T) (addr string, stop func() (string, int)) {
	t.Helper()
	addr = freePort(t)
	cmd := exec.Command(binary, "nettest", "server", "--listen", addr)
	var log strings.Builder
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(pipe)
	if !lines.Scan() || !strings.Contains(lines.Text(), "listening on "+addr) {
		cmd.Process.Kill()
		t.Fatalf("server did not start: %q", lines.Text())
	}
	log.WriteString(lines.Text() + "\n")
	done := make(chan struct{})
	go func() {
		for lines.Scan() {
			log.WriteString(lines.Text() + "\n")
		}
		close(done)
	}()
	stopped := false
	stop = func() (string, int) {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(syscall.SIGINT)
			<-done
			_ = cmd.Wait()
		}
		return log.String(), cmd.ProcessState.ExitCode()
	}
	t.Cleanup(func() { stop() })
	return addr, stop
}

func TestNetTestClientJSONAndOutputs(t *testing.T) {
	addr, stop := startNetServer(t)
	dir := t.TempDir()
	html, lsr := filepath.Join(dir, "net.html"), filepath.Join(dir, "net.lsr")
	r := run(t, "", "nettest", "client", addr, "--size", "250", "--duration", "2s", "--interval", "500ms",
		"--tps", "2356", "--format", "json", "-o", html, "--record", lsr)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep netReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.RequestBytes != 250 || rep.ReplyBytes != 250 || rep.Connections != 1 || rep.Mode != "sync" || rep.RoundTrips < 100 ||
		!(rep.P50US > 0 && rep.P50US <= rep.P90US && rep.P90US <= rep.P99US && rep.P99US <= rep.P999US && rep.P999US <= rep.MaxUS) {
		t.Errorf("report %+v", rep)
	}
	var sum int64
	for _, iv := range rep.Intervals {
		if iv.MBs == nil || iv.Start.IsZero() || iv.Seconds <= 0 || iv.Seconds > 0.6 {
			t.Errorf("interval %+v", iv)
		}
		sum += iv.RoundTrips
	}
	if len(rep.Intervals) < 4 || sum != rep.RoundTrips {
		t.Errorf("%d intervals holding %d round trips, the total is %d", len(rep.Intervals), sum, rep.RoundTrips)
	}
	if rep.WhatIf == nil || rep.WhatIf.ServerTimeUS <= 0 || len(rep.WhatIf.Rows) < 5 {
		t.Errorf("what-if %+v", rep.WhatIf)
	}
	for _, f := range []string{html, lsr} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	replay := reportJSON(t, lsr)
	if len(replay.Series) != 1 || int64(replay.Series[0].Count) != rep.RoundTrips {
		t.Errorf("the recording holds %+v, want %d round trips", replay.Series, rep.RoundTrips)
	}
	log, code := stop()
	if code != 130 || !strings.Contains(log, "sync test, 250-byte requests, 250-byte replies") || !strings.Contains(log, "served 1 tests") {
		t.Errorf("server exit %d, log:\n%s", code, log)
	}
}

func TestNetTestClientPlainLines(t *testing.T) {
	addr, _ := startNetServer(t)
	r := run(t, "", "nettest", "client", addr, "--duration", "1500ms", "--interval", "500ms", "--connections", "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if !strings.HasPrefix(lines[0], "time") || !strings.Contains(lines[0], "p99") || len(lines) < 6 {
		t.Fatalf("per-interval lines missing:\n%s", r.stdout)
	}
	for _, want := range []string{"2 connection(s)", "round trips in", "latency: mean", "p99.9"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestNetTestBadInputs(t *testing.T) {
	addr, _ := startNetServer(t)
	closed := freePort(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"client"}, 2, "HOST:PORT"},
		{[]string{"client", closed, "--duration", "1s"}, 1, "is `latscope nettest server` running there?"},
		{[]string{"client", addr, "--size", "4"}, 1, "at least 8"},
		{[]string{"client", addr, "--size", "2m"}, 1, "at most"},
		{[]string{"client", addr, "--size", "lots"}, 2, "--size"},
		{[]string{"client", addr, "--mode", "udp"}, 2, "sync, stream or connect"},
		{[]string{"client", addr, "--tps", "100", "--server-time", "1ms"}, 2, "not both"},
		{[]string{"client", addr, "--duration", "1s", "--tps", "1000000"}, 1, "cannot reach"},
		{[]string{"server", "--listen", addr}, 1, "address already in use"},
		{[]string{"server", "--max-message", "4"}, 2, "--max-message"},
	} {
		r := run(t, "", append([]string{"nettest"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("nettest %v: exit %d, stderr %q; want exit %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

// TestNetTestLiveHeatMapInATerminal runs the client in a real terminal
// (tmux): the live heat map, then the report with the interval lines.
func TestNetTestLiveHeatMapInATerminal(t *testing.T) {
	addr, _ := startNetServer(t)
	status := filepath.Join(t.TempDir(), "status")
	waitFor := startTerminal(t, binary+" nettest client "+addr+" --duration 2s --interval 250ms; echo $? > "+status).waitFor
	waitFor("the live heat map", func(s string) bool { return strings.Contains(s, "tcp round trip 256/256 B") })
	final := waitFor("the report", func(s string) bool { return strings.Contains(s, "latency: mean") })
	if !strings.Contains(final, "per second") {
		t.Errorf("interval lines missing from the report:\n%s", final)
	}
	waitFor("exit 0", func(string) bool {
		b, err := os.ReadFile(status)
		return err == nil && strings.TrimSpace(string(b)) == "0"
	})
}
