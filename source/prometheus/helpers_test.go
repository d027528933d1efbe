package prometheus

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// result is what one Run produced.
type result = sourcetest.Result

// runString reads a scrape file; every histogram keeps its le edges.
func runString(t testing.TB, input string, opts source.Options) result {
	t.Helper()
	res := sourcetest.Run(t, Format(), source.Input{Name: "scrape.prom", Reader: strings.NewReader(input)}, opts)
	if res.Err != nil {
		t.Fatalf("Run: %v", res.Err)
	}
	for _, iv := range res.Intervals {
		for _, s := range iv.Series {
			if !s.Hist.IsCustom() {
				t.Fatalf("series %s at %s is not on its le edges", s.Key, iv.Start)
			}
		}
	}
	return res
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
