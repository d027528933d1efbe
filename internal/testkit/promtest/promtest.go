// Package promtest starts real Prometheus-compatible stores for tests
// (Debian's prometheus 2.42 and victoria-metrics 1.79): in a temporary
// directory, on a free loopback port, with the configuration the test
// gives, stoppable and restartable on the same port (outages), stopped
// when the test ends; and queries their HTTP API. Without the binary the
// test skips, or fails under LATSCOPE_REQUIRE_INTEGRATION=1
// (testenv.SkipOrFail).
package promtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/dbtest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// Options choose Prometheus' features and configuration.
type Options struct {
	// NativeHistograms enables --enable-feature=native-histograms: the
	// scrapes ask for the protobuf exposition and keep native histograms.
	NativeHistograms bool
	// RemoteWriteReceiver enables --web.enable-remote-write-receiver
	// (POST /api/v1/write).
	RemoteWriteReceiver bool
	// Config is prometheus.yml; "" keeps only a global section.
	Config string
}

// Server is a running (or stopped) store.
type Server struct {
	// URL is its base URL (http://127.0.0.1:PORT).
	URL string
	// Dir is its working directory (configuration, TSDB, log).
	Dir string

	t      testing.TB
	name   string
	argv   []string
	ready  string // the path that answers 200 once it serves
	cmd    *exec.Cmd
	exited chan error
}

// WriteURL is the store's remote-write endpoint.
func (s *Server) WriteURL() string { return s.URL + "/api/v1/write" }

// Binary returns a store's executable, or skips (fails when integration
// tests are required).
func Binary(t testing.TB, name ...string) string {
	t.Helper()
	bin := "prometheus"
	if len(name) > 0 {
		bin = name[0]
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		testenv.SkipOrFail(t, "%s is not installed (Debian package %s): %v", bin, bin, err)
	}
	return path
}

// Start starts Prometheus and waits until it is ready.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	cfg := opts.Config
	if cfg == "" {
		cfg = "global:\n  scrape_interval: 1s\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(dbtest.FreePort(t))
	args := []string{bin, "--config.file=" + filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}
	if opts.NativeHistograms {
		args = append(args, "--enable-feature=native-histograms")
	}
	if opts.RemoteWriteReceiver {
		args = append(args, "--web.enable-remote-write-receiver")
	}
	return launch(t, &Server{URL: "http://" + addr, Dir: dir, name: "prometheus", argv: args, ready: "/-/ready"})
}

// StartVictoriaMetrics starts VictoriaMetrics (remote write at
// /api/v1/write, PromQL at /api/v1/query), answering about samples up to
// a second old (its default hides the last 30 s).
func StartVictoriaMetrics(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t, "victoria-metrics")
	dir := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(dbtest.FreePort(t))
	args := []string{bin, "-storageDataPath=" + filepath.Join(dir, "data"), "-httpListenAddr=" + addr,
		"-search.latencyOffset=1s", "-search.disableCache", "-retentionPeriod=100y", "-loggerLevel=WARN"}
	return launch(t, &Server{URL: "http://" + addr, Dir: dir, name: "victoria-metrics", argv: args, ready: "/health"})
}

// launch starts the store and stops it when the test ends.
func launch(t testing.TB, s *Server) *Server {
	t.Helper()
	s.t = t
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			if b, err := os.ReadFile(s.logPath()); err == nil {
				t.Logf("%s log:\n%s", s.name, b)
			}
		}
	})
	s.Restart()
	return s
}

// PID is the running store's process id (0 when stopped), for reading
// its CPU time and memory from /proc.
func (s *Server) PID() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *Server) logPath() string { return filepath.Join(s.Dir, s.name+".log") }

// Restart starts the store (again after Stop: the same port and data) and
// waits until it is ready.
func (s *Server) Restart() {
	t := s.t
	t.Helper()
	logFile, err := os.OpenFile(s.logPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", s.name, err)
	}
	s.cmd, s.exited = cmd, make(chan error, 1)
	go func(exited chan error) { exited <- cmd.Wait() }(s.exited)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.URL + s.ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-s.exited:
			b, _ := os.ReadFile(s.logPath())
			s.cmd = nil
			t.Fatalf("%s exited: %v\n%s", s.name, err, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready on %s after 30s: %v", s.name, s.URL, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops the store cleanly (SIGINT: both flush what they hold),
// killing it after 20 s; a stopped store is left alone.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.t.Errorf("%s did not stop within 20 s", s.name)
	}
	s.cmd = nil
}

// Sample is one element of a query's answer: its labels and its float
// value (a native histogram sample is left out of an instant vector:
// query a function of it, histogram_count or histogram_quantile). Values
// are the raw samples of a range selector (expr[5m]) by timestamp in ms
// (a native histogram's: its count); a timestamp answered twice, a
// duplicate, has the value -1.
type Sample struct {
	Metric map[string]string
	Value  float64
	Values map[int64]float64
}

// Query runs an instant query now.
func (s *Server) Query(expr string) ([]Sample, error) { return s.query(expr, nil) }

// QueryAt runs an instant query at a time, failing the test on error.
func (s *Server) QueryAt(t testing.TB, expr string, at time.Time) []Sample {
	t.Helper()
	got, err := s.query(expr, url.Values{"time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (s *Server) query(expr string, params url.Values) ([]Sample, error) {
	if params == nil {
		params = url.Values{}
	}
	params.Set("query", expr)
	resp, err := http.Get(s.URL + "/api/v1/query?" + params.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric     map[string]string `json:"metric"`
				Value      []any             `json:"value"`
				Values     [][]any           `json:"values"`
				Histograms [][]any           `json:"histograms"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %s: %w: %s", expr, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", expr, r.Error)
	}
	var out []Sample
	for _, e := range r.Data.Result {
		smp := Sample{Metric: e.Metric}
		switch {
		case len(e.Value) == 2:
			if smp.Value, err = parseValue(e.Value[1]); err != nil {
				return nil, fmt.Errorf("query %s: %w", expr, err)
			}
		case e.Values != nil || e.Histograms != nil:
			if smp.Values, err = rawSamples(append(e.Values, e.Histograms...)); err != nil {
				return nil, fmt.Errorf("query %s: %w", expr, err)
			}
		default:
			continue
		}
		out = append(out, smp)
	}
	return out, nil
}

// rawSamples reads [timestamp, value] pairs, a native histogram's value
// being an object with its count.
func rawSamples(pairs [][]any) (map[int64]float64, error) {
	out := map[int64]float64{}
	for _, p := range pairs {
		ts, _ := p[0].(float64)
		ms := int64(math.Round(ts * 1000))
		if _, dup := out[ms]; dup {
			out[ms] = -1
			continue
		}
		v := p[1]
		if h, ok := v.(map[string]any); ok {
			v = h["count"]
		}
		f, err := parseValue(v)
		if err != nil {
			return nil, err
		}
		out[ms] = f
	}
	return out, nil
}

func parseValue(v any) (float64, error) {
	str, _ := v.(string)
	f, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q: %w", str, err)
	}
	return f, nil
}

// WaitFor queries expr until done accepts its answer or timeout passes,
// and returns the last answer; it fails the test on timeout.
func (s *Server) WaitFor(t testing.TB, expr string, timeout time.Duration, done func([]Sample) bool) []Sample {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got, err := s.Query(expr)
		if err == nil && done(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %s: %v %v", expr, timeout, got, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// CPU is the store process's CPU time so far (user and system).
func (s *Server) CPU(t testing.TB) time.Duration {
	t.Helper()
	return ProcessCPU(t, s.PID())
}

// ProcessCPU is a process's CPU time so far (user and system), from
// /proc/PID/stat.
func ProcessCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name (which may hold spaces): state is
	// field 3, utime 14, stime 15, in clock ticks (USER_HZ, 100).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// Appended is Prometheus' prometheus_tsdb_head_samples_appended_total
// (floats and native histograms summed), read from its /metrics.
func (s *Server) Appended(t testing.TB) float64 {
	t.Helper()
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "prometheus_tsdb_head_samples_appended_total") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		sum += v
	}
	return sum
}
