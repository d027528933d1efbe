package prometheus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// result is what one Run produced.
type result struct {
	intervals []stream.Interval
	diag      *source.Diagnostics
	log       *bytes.Buffer
}

func (r result) malformed() []string {
	var out []string
	for _, sp := range r.diag.Problems() {
		for _, p := range sp.First {
			out = append(out, fmt.Sprintf("%d: %s", p.Line, p.Reason))
		}
	}
	return out
}

func runString(t testing.TB, input string, opts source.Options) result {
	t.Helper()
	log := &bytes.Buffer{}
	diag := source.NewDiagnostics(log, 1000)
	src, err := Format().Open(source.Input{Name: "scrape.prom", Reader: strings.NewReader(input), Diag: diag}, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	res := result{diag: diag, log: log}
	if err := src.Run(context.Background(), func(iv stream.Interval) error {
		checkInterval(t, iv)
		res.intervals = append(res.intervals, iv)
		return nil
	}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func checkInterval(t testing.TB, iv stream.Interval) {
	t.Helper()
	if err := iv.Validate(); err != nil {
		t.Fatalf("invalid interval: %v", err)
	}
	if iv.Gap && len(iv.Series) > 0 {
		t.Fatalf("gap interval at %s carries series", iv.Start)
	}
	for _, s := range iv.Series {
		h := s.Hist
		if !h.IsCustom() || h.ZeroCount < 0 || h.Sum < 0 || math.IsNaN(h.Sum) {
			t.Fatalf("series %s at %s: custom %v zero %g sum %g", s.Key, iv.Start, h.IsCustom(), h.ZeroCount, h.Sum)
		}
		for _, c := range h.Counts {
			if c < 0 || math.IsNaN(c) {
				t.Fatalf("negative count in %s at %s", s.Key, iv.Start)
			}
		}
	}
}

// find returns a series of an interval, nil when absent.
func find(iv stream.Interval, event, instance string) *hist.Histogram {
	for _, s := range iv.Series {
		if s.Key.Event == event && s.Key.Instance == instance {
			return s.Hist
		}
	}
	return nil
}

// server serves a registry over HTTP on the loopback interface, the way a
// Prometheus server scrapes it.
type server struct {
	t   testing.TB
	srv *httptest.Server
}

func serve(t testing.TB, reg *prometheus.Registry) *server {
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return &server{t: t, srv: srv}
}

// scrape fetches /metrics once, asking for the text format.
func (s *server) scrape() string {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.srv.URL+"/metrics", nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("scrape: %v, status %d", err, resp.StatusCode)
	}
	return string(body)
}

// expectedBuckets counts values per Prometheus bucket (le[i-1], le[i]] and
// above the last edge, independently of latscope.
func expectedBuckets(values, les []float64) []float64 {
	out := make([]float64, len(les)+1)
	for _, v := range values {
		i := 0
		for i < len(les) && v > les[i] {
			i++
		}
		out[i]++
	}
	return out
}

// bucketCounts reads a histogram on edges les back into the same shape:
// [0, les[0]), [les[0], les[1]) ... [les[n-1], +Inf).
func bucketCounts(t testing.TB, h *hist.Histogram, les []float64) []float64 {
	t.Helper()
	out := make([]float64, len(les)+1)
	if h == nil {
		return out
	}
	for i, e := range les {
		if h.Bounds[i] != e {
			t.Fatalf("edge %d is %g, want %g (edges %v)", i, h.Bounds[i], e, h.Bounds)
		}
	}
	out[0] = h.ZeroCount
	for i, c := range h.Counts {
		out[i+1] = c
	}
	return out
}

func sum(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s
}
