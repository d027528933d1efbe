// Package promtest starts a real Prometheus (Debian's prometheus package,
// 2.42) for tests: in a temporary directory, on a free loopback port,
// with the configuration the test gives, stopped when the test ends; and
// queries its HTTP API. Without the binary the test skips, or fails
// under LATSCOPE_REQUIRE_INTEGRATION=1 (testenv.SkipOrFail).
package promtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// Server is a running Prometheus.
type Server struct {
	// URL is its base URL (http://127.0.0.1:PORT).
	URL string
	// Dir is its working directory (configuration, TSDB, log).
	Dir string
}

// Binary returns the prometheus executable, or skips (fails when
// integration tests are required).
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		testenv.SkipOrFail(t, "prometheus is not installed (Debian package prometheus): %v", err)
	}
	return bin
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
	args := []string{"--config.file=" + filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}
	if opts.NativeHistograms {
		args = append(args, "--enable-feature=native-histograms")
	}
	if opts.RemoteWriteReceiver {
		args = append(args, "--web.enable-remote-write-receiver")
	}
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("prometheus log:\n%s", b)
			}
		}
	})
	s := &Server{URL: "http://" + addr, Dir: dir}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logFile.Name())
			t.Fatalf("prometheus exited: %v\n%s", err, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready on %s after 30s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Sample is one element of an instant vector: its labels and its float
// value (a native histogram sample is left out: query a function of it,
// histogram_count or histogram_quantile).
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query runs an instant query now.
func (s *Server) Query(expr string) ([]Sample, error) {
	resp, err := http.Get(s.URL + "/api/v1/query?query=" + url.QueryEscape(expr))
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
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
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
		if len(e.Value) != 2 {
			continue
		}
		str, _ := e.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %q: %w", expr, str, err)
		}
		out = append(out, Sample{Metric: e.Metric, Value: v})
	}
	return out, nil
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
