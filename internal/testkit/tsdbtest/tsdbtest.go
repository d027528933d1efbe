// Package tsdbtest starts real Prometheus-compatible stores for tests
// (Prometheus with its remote-write receiver and native histograms,
// VictoriaMetrics), each in a temporary directory on a free loopback
// port, stoppable and restartable on the same port (outages), torn down
// when the test ends; and queries them through PromQL. Stores missing on
// the machine skip the test, or fail it under
// LATSCOPE_REQUIRE_INTEGRATION=1.
package tsdbtest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/dbtest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// Store is a running (or stopped) store.
type Store struct {
	t    testing.TB
	name string
	args []string
	addr string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// URL is the store's base URL (http://127.0.0.1:PORT).
func (s *Store) URL() string { return "http://" + s.addr }

// WriteURL is its remote-write endpoint.
func (s *Store) WriteURL() string { return s.URL() + "/api/v1/write" }

// StartPrometheus starts Prometheus (Debian's prometheus 2.42) with the
// remote-write receiver and native histograms.
func StartPrometheus(t testing.TB) *Store {
	t.Helper()
	bin := lookPath(t, "prometheus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", dbtest.FreePort(t))
	return start(t, bin, addr, dir, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--enable-feature=native-histograms", "--web.enable-remote-write-receiver")
}

// StartVictoriaMetrics starts VictoriaMetrics (Debian's 1.79) answering
// queries about samples up to a second old (its default hides the last 30 s).
func StartVictoriaMetrics(t testing.TB) *Store {
	t.Helper()
	bin := lookPath(t, "victoria-metrics")
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", dbtest.FreePort(t))
	return start(t, bin, addr, dir, "-storageDataPath="+filepath.Join(dir, "data"), "-httpListenAddr="+addr,
		"-search.latencyOffset=1s", "-search.disableCache", "-retentionPeriod=100y")
}

func lookPath(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		testenv.SkipOrFail(t, "%s is not installed (apt-get install %s)", name, name)
	}
	return bin
}

func start(t testing.TB, bin, addr, dir string, args ...string) *Store {
	t.Helper()
	s := &Store{t: t, name: filepath.Base(bin), args: append([]string{bin}, args...), addr: addr, log: filepath.Join(dir, "store.log")}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start starts the store (again, after Stop: same port, same data) and
// waits until it answers.
func (s *Store) Start() {
	s.t.Helper()
	logf, err := os.OpenFile(s.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatal(err)
	}
	defer logf.Close()
	s.cmd = exec.Command(s.args[0], s.args[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("starting %s: %v", s.name, err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.done)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.URL() + "/api/v1/query?query=1")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-s.done:
			b, _ := os.ReadFile(s.log)
			s.t.Fatalf("%s exited at start:\n%s", s.name, b)
		default:
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(s.log)
			s.t.Fatalf("%s does not answer on %s after 30 s:\n%s", s.name, s.addr, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops the store cleanly (SIGTERM: both flush their data), killing
// it after 20 s. Stopping a stopped store does nothing.
func (s *Store) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		s.t.Errorf("%s did not stop within 20 s", s.name)
	}
	s.cmd = nil
}

// Sample is one value of a query's result.
type Sample struct {
	Labels map[string]string
	// Value is the instant value; Values the raw samples of a range
	// selector (query "m[5m]"), as timestamp in ms → value (a native
	// histogram's: its count). A timestamp returned twice (a duplicate)
	// has the value -1.
	Value  float64
	Values map[int64]float64
}

// Query evaluates PromQL at t and returns the vector or matrix.
func (s *Store) Query(t testing.TB, promql string, at time.Time) []Sample {
	t.Helper()
	q := url.Values{"query": {promql}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	resp, err := http.Get(s.URL() + "/api/v1/query?" + q.Encode())
	if err != nil {
		t.Fatalf("query %s: %v", promql, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
				Values [][]any           `json:"values"`
				// Histograms are a native histogram's raw samples.
				Histograms [][]any `json:"histograms"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: %v", promql, err)
	}
	if body.Status != "success" {
		t.Fatalf("query %s: %s", promql, body.Error)
	}
	var out []Sample
	for _, r := range body.Data.Result {
		smp := Sample{Labels: r.Metric}
		if len(r.Value) == 2 {
			smp.Value = parseValue(t, r.Value[1])
		}
		if r.Values != nil || r.Histograms != nil {
			smp.Values = map[int64]float64{}
			for _, v := range append(r.Values, r.Histograms...) {
				ts, _ := v[0].(float64)
				ms := int64(math.Round(ts * 1000))
				if _, dup := smp.Values[ms]; dup {
					smp.Values[ms] = -1
					continue
				}
				if h, ok := v[1].(map[string]any); ok {
					smp.Values[ms] = parseValue(t, h["count"])
				} else {
					smp.Values[ms] = parseValue(t, v[1])
				}
			}
		}
		out = append(out, smp)
	}
	return out
}

func parseValue(t testing.TB, v any) float64 {
	t.Helper()
	str, _ := v.(string)
	f, err := strconv.ParseFloat(str, 64)
	if err != nil {
		t.Fatalf("value %v: %v", v, err)
	}
	return f
}
