package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// result is what one Run produced.
type result struct{ sourcetest.Result }

// total merges every histogram of one series (nil when it never appears).
func (r result) total(event string) *hist.Histogram {
	var h *hist.Histogram
	for _, iv := range r.Intervals {
		for _, s := range iv.Series {
			if s.Key.Event != event {
				continue
			}
			if h == nil {
				h = s.Hist.Clone()
			} else {
				h.Merge(s.Hist)
			}
		}
	}
	return h
}

// events lists the series names in order of first appearance.
func (r result) events() []string {
	var out []string
	seen := map[string]bool{}
	for _, iv := range r.Intervals {
		for _, s := range iv.Series {
			if !seen[s.Key.Event] {
				seen[s.Key.Event] = true
				out = append(out, s.Key.Event)
			}
		}
	}
	return out
}

// run reads r through format f as source.RunAll would check it.
func run(t testing.TB, f source.Format, name string, r io.Reader, mod time.Time, opts source.Options) result {
	t.Helper()
	return result{sourcetest.Run(t, f, source.Input{Name: name, Reader: r, ModTime: mod}, opts)}
}

// runFile reads a file with its modification time.
func runFile(t testing.TB, f source.Format, path string, opts source.Options) result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, f, path, bytes.NewReader(data), st.ModTime(), opts)
}

// needFio returns fio's path, or skips (fails under CI) when it is missing.
func needFio(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("fio")
	if err != nil {
		testenv.SkipOrFail(t, "fio is not installed (apt-get install fio)")
	}
	return path
}

// runFio runs fio in dir on a small scratch file and returns its standard
// output.
func runFio(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	fio := needFio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, fio, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// fioReport is fio's JSON as the tests read it, independently of the
// package: the reference values latscope must reproduce.
type fioReport struct {
	TimestampMs int64    `json:"timestamp_ms"`
	Jobs        []fioJob `json:"jobs"`
	ClientStats []fioJob `json:"client_stats"`
}

type fioJob struct {
	Name     string `json:"jobname"`
	Hostname string `json:"hostname"`
	Read     fioDir `json:"read"`
	Write    fioDir `json:"write"`
	Sync     fioDir `json:"sync"`
}

type fioDir struct {
	Runtime  int64  `json:"runtime"`
	TotalIOs int64  `json:"total_ios"`
	Clat     fioLat `json:"clat_ns"`
	Lat      fioLat `json:"lat_ns"`
}

type fioLat struct {
	N          int64              `json:"N"`
	Mean       float64            `json:"mean"`
	Percentile map[string]float64 `json:"percentile"`
	Bins       map[string]int64   `json:"bins"`
}

// binsTotal adds up a bins object.
func (l fioLat) binsTotal() int64 {
	var n int64
	for _, c := range l.Bins {
		n += c
	}
	return n
}

// readReport decodes fio's JSON, skipping any preamble.
func readReport(t testing.TB, data []byte) fioReport {
	t.Helper()
	i := bytes.Index(data, []byte("{\n"))
	if i < 0 {
		t.Fatalf("no JSON object in fio's output")
	}
	var r fioReport
	if err := json.NewDecoder(bytes.NewReader(data[i:])).Decode(&r); err != nil {
		t.Fatalf("decoding fio's JSON: %v", err)
	}
	return r
}

// histLogLine is one histogram log line as the tests read it.
type histLogLine struct {
	ms, ddir int64
	counts   []int64
}

func (l histLogLine) total() int64 {
	var n int64
	for _, c := range l.counts {
		n += c
	}
	return n
}

// readHistLog splits a histogram log with strings and strconv only.
func readHistLog(t testing.TB, path string) []histLogLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []histLogLine
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		fields := strings.Split(line, ", ")
		var vals []int64
		for _, f := range fields {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, line[:min(len(line), 40)], err)
			}
			vals = append(vals, v)
		}
		out = append(out, histLogLine{ms: vals[0], ddir: vals[1], counts: vals[3:]})
	}
	return out
}

// checkPercentiles compares latscope's percentiles with fio's own table:
// both pick the bin where the running count reaches p·N, fio printing the
// bin's value, so they differ by at most one bin (1/64 of the value), or
// one coarse bin of stride fine bins for a coarse histogram log.
func checkPercentiles(t *testing.T, what string, h *hist.Histogram, fio map[string]float64, stride float64) {
	t.Helper()
	if len(fio) == 0 {
		t.Fatalf("%s: fio printed no percentiles", what)
	}
	for k, want := range fio {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil {
			t.Fatal(err)
		}
		got := h.Quantile(p / 100)
		if math.Abs(got-want) > stride*(want/64+1) {
			t.Errorf("%s: p%s = %.0f ns, fio says %.0f ns (more than one bin apart)", what, k, got, want)
		}
	}
}

// testdata returns the path of a file in testdata/.
func testdata(name string) string { return filepath.Join("testdata", name) }

// eventCount adds up an interval's events.
func eventCount(iv stream.Interval) float64 {
	n := 0.0
	for _, s := range iv.Series {
		n += s.Hist.Count()
	}
	return n
}
