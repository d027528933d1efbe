package prometheus

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// The inputs here are REAL exposition text: client_golang's classic
// histograms, observed in the test, scraped over HTTP from a loopback
// promhttp handler, next to the Go and process collectors' metrics (which
// latscope must pass over).

const metric = "latscope_test_request_duration_seconds"

var les = []float64{0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1}

// batches are the observations between scrapes, per label value op.
var batches = []map[string][]float64{
	{"read": {0.0004, 0.0011, 0.003, 0.003, 0.02}, "write": {0.06, 0.2}},
	{"read": {0.0009, 0.001, 0.0025, 0.0049, 0.7, 0.0001}, "write": {0.004}},
	{"read": {1.5, 0.01}}, // one read above every finite edge; no writes
}

// newRegistry returns a registry with the latency histogram, a size
// histogram in bytes, and the standard Go and process collectors.
func newRegistry() (*prometheus.Registry, *prometheus.HistogramVec, prometheus.Histogram) {
	reg := prometheus.NewRegistry()
	lat := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metric, Help: "Request latency.", Buckets: les}, []string{"op", "disk"})
	size := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "latscope_test_response_size_bytes", Help: "Sizes.", Buckets: []float64{100, 1000}})
	reg.MustRegister(lat, size, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg, lat, size
}

// scrapes observes each batch and scrapes after it, plus a first scrape
// before any observation: four scrapes, three intervals.
func scrapes(t testing.TB) string {
	reg, lat, size := newRegistry()
	srv := serve(t, reg)
	var all strings.Builder
	lat.WithLabelValues("read", "sda").Observe(0.002) // before the baseline: never counted
	all.WriteString(srv.scrape())
	for _, b := range batches {
		for op, vs := range b {
			for _, v := range vs {
				lat.WithLabelValues(op, "sda").Observe(v)
			}
		}
		size.Observe(512)
		all.WriteString(srv.scrape())
	}
	return all.String()
}

func TestClientGolangScrapes(t *testing.T) {
	text := scrapes(t)
	if got := Detect([]byte(text)); got != input.Yes {
		t.Fatalf("Detect = %v", got)
	}
	res := runString(t, text, source.Options{Interval: 10 * time.Second})
	if p := res.Malformed(); len(p) > 0 {
		t.Fatalf("problems %q", p)
	}
	w := res.Diag.Warnings()
	want := []string{
		"scrape.prom: histogram latscope_test_response_size_bytes is not in a time unit; skipped (name it with --event to read it as latency in --unit)",
		"scrape.prom: scrapes carry no sample timestamps; assuming 10s between them (set --interval)",
	}
	if !slices.Equal(w, want) {
		t.Errorf("warnings\n%q\nwant\n%q", w, want)
	}
	if len(res.Intervals) != len(batches) {
		t.Fatalf("%d intervals, want %d (4 scrapes, the first the baseline)", len(res.Intervals), len(batches))
	}
	for i, iv := range res.Intervals {
		if !iv.Relative || iv.Duration != 10*time.Second || !iv.Start.Equal(stream.RelativeStart.Add(time.Duration(i)*10*time.Second)) {
			t.Errorf("interval %d at %s for %s (relative %v)", i, iv.Start, iv.Duration, iv.Relative)
		}
		for _, op := range []string{"read", "write"} {
			h := find(iv, metric, "disk=sda,op="+op)
			values := batches[i][op]
			if got, want := bucketCounts(t, h, les), expectedBuckets(values, les); !slices.Equal(got, want) {
				t.Errorf("interval %d %s buckets %v, observed %v", i, op, got, want)
			}
			if len(values) == 0 {
				if h != nil {
					t.Errorf("interval %d: %s series without observations", i, op)
				}
				continue
			}
			if h.Unit != hist.Second || !h.SumExact || math.Abs(h.Sum-sum(values)) > 1e-12 {
				t.Errorf("interval %d %s: unit %s sum %v (exact %v), observed %v", i, op, h.Unit, h.Sum, h.SumExact, sum(values))
			}
		}
		for _, s := range iv.Series {
			if s.Key.Event != metric {
				t.Errorf("series %s read from a scrape", s.Key)
			}
		}
	}
	// The 1.5 s read lies above every finite edge: the top is then open.
	top := find(res.Intervals[2], metric, "disk=sda,op=read")
	if !top.TopOpen || top.Bounds[len(top.Bounds)-1] != math.Inf(1) {
		t.Errorf("last read histogram edges %v, want +Inf on top", top.Bounds)
	}
	if first := find(res.Intervals[0], metric, "disk=sda,op=read"); first.TopOpen {
		t.Errorf("a histogram whose +Inf bucket is empty must not be open at the top")
	}
}

// TestClientGolangTimestamps: a collector relaying histograms with their
// own time (prometheus.NewMetricWithTimestamp) writes sample timestamps;
// scrapes are timed by them, on the wall clock.
func TestClientGolangTimestamps(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := &relay{desc: prometheus.NewDesc("db_wait_milliseconds", "Waits.", []string{"event"}, nil)}
	reg.MustRegister(c)
	srv := serve(t, reg)
	t0 := time.Date(2024, 3, 14, 12, 0, 0, 0, time.UTC)
	var text strings.Builder
	steps := []struct {
		at      time.Duration
		buckets map[float64]uint64
		count   uint64
		sum     float64
	}{
		{0, map[float64]uint64{1: 2, 2: 3, 4: 3}, 3, 3.5},
		{5 * time.Second, map[float64]uint64{1: 2, 2: 7, 4: 9}, 10, 27.5},
		{15 * time.Second, map[float64]uint64{1: 2, 2: 7, 4: 9}, 12, 47.5},
	}
	for _, s := range steps {
		c.at, c.buckets, c.count, c.sum = t0.Add(s.at), s.buckets, s.count, s.sum
		text.WriteString(srv.scrape())
	}
	res := runString(t, text.String(), source.Options{Location: time.UTC})
	if p, w := res.Malformed(), res.Diag.Warnings(); len(p) > 0 || len(w) > 0 {
		t.Fatalf("problems %q warnings %q", p, w)
	}
	if len(res.Intervals) != 2 {
		t.Fatalf("%d intervals, want 2", len(res.Intervals))
	}
	want := []struct {
		start   time.Time
		d       time.Duration
		buckets []float64 // [0,1) [1,2) [2,4) [4,+Inf)
		sum     float64
	}{
		{t0, 5 * time.Second, []float64{0, 4, 2, 1}, 24},
		{t0.Add(5 * time.Second), 10 * time.Second, []float64{0, 0, 0, 2}, 20},
	}
	for i, w := range want {
		iv := res.Intervals[i]
		h := find(iv, "db_wait_milliseconds", "event=log file sync")
		if iv.Relative || !iv.Start.Equal(w.start) || iv.Duration != w.d {
			t.Errorf("interval %d at %s for %s (relative %v), want %s for %s", i, iv.Start, iv.Duration, iv.Relative, w.start, w.d)
		}
		if h == nil || h.Unit != hist.Millisecond || !slices.Equal(bucketCounts(t, h, []float64{1, 2, 4}), w.buckets) || h.Sum != w.sum {
			t.Errorf("interval %d histogram %+v, want ms buckets %v sum %g", i, h, w.buckets, w.sum)
		}
	}
}

// relay is a collector that exports a histogram kept elsewhere, with the
// time it was read (as exporters relaying a database's counters do).
type relay struct {
	desc    *prometheus.Desc
	at      time.Time
	buckets map[float64]uint64
	count   uint64
	sum     float64
}

func (r *relay) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

func (r *relay) Collect(ch chan<- prometheus.Metric) {
	h := prometheus.MustNewConstHistogram(r.desc, r.count, r.sum, r.buckets, "log file sync")
	ch <- prometheus.NewMetricWithTimestamp(r.at, h)
}

// TestClientGolangRestart: the process restarts between scrapes (a new
// registry, counters from zero): that interval is a gap, the next one is
// counted from the new baseline.
func TestClientGolangRestart(t *testing.T) {
	var text strings.Builder
	reg, lat, _ := newRegistry()
	srv := serve(t, reg)
	lat.WithLabelValues("read", "sda").Observe(0.003)
	text.WriteString(srv.scrape())
	lat.WithLabelValues("read", "sda").Observe(0.003)
	text.WriteString(srv.scrape())
	reg2, lat2, _ := newRegistry()
	srv2 := serve(t, reg2)
	lat2.WithLabelValues("read", "sda").Observe(0.2)
	text.WriteString(srv2.scrape())
	lat2.WithLabelValues("read", "sda").Observe(0.02)
	text.WriteString(srv2.scrape())
	res := runString(t, text.String(), source.Options{})
	if len(res.Intervals) != 3 || res.Intervals[0].Gap || !res.Intervals[1].Gap || res.Intervals[2].Gap {
		t.Fatalf("intervals %+v, want data, gap, data", res.Intervals)
	}
	h := find(res.Intervals[2], metric, "disk=sda,op=read")
	if got := bucketCounts(t, h, les); !slices.Equal(got, expectedBuckets([]float64{0.02}, les)) || math.Abs(h.Sum-0.02) > 1e-15 {
		t.Errorf("after the restart %v sum %g, want the one 20 ms read", got, h.Sum)
	}
	if res.Intervals[0].Duration != defaultInterval {
		t.Errorf("interval %s, want the default %s", res.Intervals[0].Duration, defaultInterval)
	}
}

// TestCountsInterval: with --counts interval each scrape is its own
// interval's counts, the first one included.
func TestCountsInterval(t *testing.T) {
	res := runString(t, scrapes(t), source.Options{Counts: source.CountsInterval, Interval: time.Second})
	if len(res.Intervals) != 4 {
		t.Fatalf("%d intervals, want 4", len(res.Intervals))
	}
	h := find(res.Intervals[1], metric, "disk=sda,op=read")
	if h.Count() != 6 { // the read before the first scrape plus batch 0
		t.Errorf("second scrape holds %g reads, want 6", h.Count())
	}
}
