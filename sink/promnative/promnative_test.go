package promnative

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

var t0 = time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)

func interval(start time.Time, series ...stream.SeriesHist) stream.Interval {
	return stream.Interval{Source: "trace.trc", Start: start, Duration: 10 * time.Second, Series: series}
}

// exactHist records n log-uniform durations in µs between lo and hi.
func exactHist(t *testing.T, r *rand.Rand, n int, lo, hi float64) *hist.Histogram {
	t.Helper()
	h := hist.NewExact(hist.Microsecond, 0)
	for range n {
		v := math.Floor(lo * math.Pow(hi/lo, r.Float64()))
		if err := h.Record(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// oracleHist is a power-of-two millisecond histogram as V$EVENT_HISTOGRAM gives.
func oracleHist(t *testing.T, counts map[float64]float64) *hist.Histogram {
	t.Helper()
	h := hist.NewBuckets(hist.Millisecond)
	for n, c := range counts {
		if err := h.AddBound(hist.UpperBound, n, c); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func series(k string, h *hist.Histogram) stream.SeriesHist {
	return stream.SeriesHist{Key: stream.Key{Event: k, Instance: "orcl1"}, Hist: h}
}

// nativeQuantile is histogram_quantile over native buckets, interpolating
// linearly inside the bucket (as Prometheus 2.42 does).
func nativeQuantile(n Native, q float64) float64 {
	target := q * float64(n.Count)
	cum := float64(n.ZeroCount)
	if cum >= target {
		return n.ZeroThreshold * target / cum
	}
	bs := n.Buckets()
	lo, hi := math.MaxInt, math.MinInt
	for i := range bs {
		lo, hi = min(lo, i), max(hi, i)
	}
	base := math.Exp2(math.Exp2(-float64(n.Schema)))
	for i := lo; i <= hi; i++ {
		c := float64(bs[i])
		if c == 0 {
			continue
		}
		if cum+c >= target {
			upper := math.Exp2(float64(i) * math.Exp2(-float64(n.Schema)))
			lower := upper / base
			return lower + (upper-lower)*(target-cum)/c
		}
		cum += c
	}
	return math.NaN()
}

func TestAddCountsSumsAndDecodes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := NewMapper(Options{Host: "db1"})
	total := hist.NewExact(hist.Microsecond, 0)
	var got []Series
	for k := range 5 {
		h := exactHist(t, r, 5000, 50, 200000)
		total.Merge(h)
		got = m.Add("trace", interval(t0.Add(time.Duration(k)*10*time.Second), series("db file sequential read", h)))
	}
	if len(got) != 1 {
		t.Fatalf("touched %d series, want 1", len(got))
	}
	s := got[0]
	wantLabels := []Label{{"__name__", DefaultMetric}, {"event", "db file sequential read"}, {"host", "db1"},
		{"instance", "orcl1"}, {"job", "trace"}, {"source_kind", "file"}}
	if fmt.Sprint(s.Labels) != fmt.Sprint(wantLabels) {
		t.Errorf("labels %v, want %v", s.Labels, wantLabels)
	}
	if !s.Timestamp.Equal(t0.Add(50 * time.Second)) {
		t.Errorf("timestamp %v", s.Timestamp)
	}
	if s.Native.Count != 25000 || s.Classic.Count != 25000 {
		t.Errorf("counts native %d classic %d, want 25000", s.Native.Count, s.Classic.Count)
	}
	wantSum := total.Sum / 1e6
	if math.Abs(s.Native.Sum-wantSum) > 1e-9*wantSum || s.Classic.Sum != s.Native.Sum {
		t.Errorf("sums native %g classic %g, want %g", s.Native.Sum, s.Classic.Sum, wantSum)
	}
	if s.Native.Schema != hist.ExactScale {
		t.Errorf("schema %d, want %d", s.Native.Schema, hist.ExactScale)
	}
	checkNative(t, s.Native)
	checkClassic(t, s.Classic)
	// Quantiles within one native bucket's width of latscope's own.
	width := math.Exp2(math.Exp2(-float64(s.Native.Schema))) - 1
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := total.Quantile(q) / 1e6
		if got := nativeQuantile(s.Native, q); math.Abs(got-want) > width*want {
			t.Errorf("q%g: native %g s, latscope %g s (more than %.2f %% apart)", q, got, want, 100*width)
		}
	}
}

// checkNative decodes spans and deltas and checks them against the counts.
func checkNative(t *testing.T, n Native) {
	t.Helper()
	var sum uint64
	for _, c := range n.Buckets() {
		sum += c
	}
	if sum+n.ZeroCount != n.Count {
		t.Errorf("buckets add up to %d + zero %d, count %d", sum, n.ZeroCount, n.Count)
	}
	var length uint32
	for i, sp := range n.Spans {
		if sp.Length == 0 || (i > 0 && sp.Offset <= 0) {
			t.Errorf("span %d %+v: empty or not after the previous one", i, sp)
		}
		length += sp.Length
	}
	if int(length) != len(n.Deltas) {
		t.Errorf("spans cover %d buckets, %d deltas", length, len(n.Deltas))
	}
	var c int64
	for i, d := range n.Deltas {
		if c += d; c < 0 {
			t.Errorf("bucket %d decodes to %d", i, c)
		}
	}
}

func checkClassic(t *testing.T, c Classic) {
	t.Helper()
	if len(c.Bounds) != len(c.Cumulative) || !math.IsInf(c.Bounds[len(c.Bounds)-1], 1) {
		t.Fatalf("bounds %v cumulative %v", c.Bounds, c.Cumulative)
	}
	for i := 1; i < len(c.Bounds); i++ {
		if c.Bounds[i] <= c.Bounds[i-1] || c.Cumulative[i] < c.Cumulative[i-1] {
			t.Errorf("bucket %d: le %g count %d after le %g count %d", i, c.Bounds[i], c.Cumulative[i], c.Bounds[i-1], c.Cumulative[i-1])
		}
	}
	if c.Cumulative[len(c.Cumulative)-1] != c.Count {
		t.Errorf("+Inf bucket %d, count %d", c.Cumulative[len(c.Cumulative)-1], c.Count)
	}
}

func TestOracleBucketsSchemaZero(t *testing.T) {
	m := NewMapper(Options{})
	h := oracleHist(t, map[float64]float64{1: 7, 2: 30, 4: 120, 8: 55, 16: 9, 1024: 1})
	got := m.Add("awr", interval(t0, series("log file sync", h)))
	s := got[0]
	if s.Native.Schema != 0 || s.Native.Count != 222 || s.Classic.Count != 222 {
		t.Fatalf("schema %d counts %d/%d, want 0 and 222", s.Native.Schema, s.Native.Count, s.Classic.Count)
	}
	checkNative(t, s.Native)
	checkClassic(t, s.Classic)
	// Classic le are Oracle's own edges in seconds: 1 ms, 2 ms, 4 ms ...
	want := map[float64]uint64{0.001: 7, 0.002: 37, 0.004: 157, 0.008: 212, 0.016: 221, 1.024: 222}
	for i, le := range s.Classic.Bounds {
		if w, ok := want[le]; ok && s.Classic.Cumulative[i] != w {
			t.Errorf("le %g: %d, want %d", le, s.Classic.Cumulative[i], w)
		}
		delete(want, le)
	}
	if len(want) != 0 {
		t.Errorf("missing le %v in %v", want, s.Classic.Bounds)
	}
}

func TestCountersAreCumulativeAndMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m := NewMapper(Options{})
	prev := map[int]uint64{}
	for k := range 20 {
		h := exactHist(t, r, 1+r.IntN(300), 1, 5e6)
		s := m.Add("j", interval(t0.Add(time.Duration(k)*time.Minute), series("e", h)))[0]
		for i, c := range prev {
			if s.Native.Buckets()[i] < c {
				t.Fatalf("interval %d: bucket %d went from %d to %d", k, i, c, s.Native.Buckets()[i])
			}
		}
		prev = s.Native.Buckets()
	}
}

func TestGapTouchesNothing(t *testing.T) {
	m := NewMapper(Options{})
	if got := m.Add("j", stream.Interval{Start: t0, Duration: time.Second, Gap: true}); got != nil {
		t.Errorf("gap touched %v", got)
	}
}

func TestCardinalityGuard(t *testing.T) {
	m := NewMapper(Options{MaxEventsPerJob: 2})
	one := func(event string, waitUs float64, n int) stream.SeriesHist {
		h := hist.NewExact(hist.Microsecond, 0)
		for range n {
			_ = h.Record(waitUs)
		}
		return series(event, h)
	}
	m.Add("j", interval(t0, one("a", 1000, 10), one("b", 500, 10), one("c", 100, 10)))
	names := func() map[string]uint64 {
		out := map[string]uint64{}
		for _, s := range m.Series() {
			for _, l := range s.Labels {
				if l.Name == "event" {
					out[l.Value] = s.Native.Count
				}
			}
		}
		return out
	}
	if got := fmt.Sprint(names()); got != "map[a:10 b:10 other:10]" {
		t.Errorf("after the first interval: %s", got)
	}
	// c now waits more than b: it takes b's place; b's later events go to other.
	m.Add("j", interval(t0.Add(10*time.Second), one("c", 100000, 5), one("b", 500, 3)))
	if got := fmt.Sprint(names()); got != "map[a:10 c:5 other:13]" {
		t.Errorf("after the second interval: %s", got)
	}
	// Another job has its own budget.
	m.Add("k", interval(t0, one("z", 1, 1)))
	var total uint64
	for _, s := range m.Series() {
		total += s.Native.Count
	}
	if total != 10+5+13+1 {
		t.Errorf("series add up to %d events (plus b's stopped 10), want 29", total)
	}
}

func TestSourceKind(t *testing.T) {
	for src, want := range map[string]string{
		"postgres://u@h/db": "postgres", "iotest:/data": "iotest", "nettest:h:7": "nettest",
		"/var/trace.trc": "file", "C:\\x.trc": "file", "-": "stdin", "https://h:7879": "https",
	} {
		if got := SourceKind(src); got != want {
			t.Errorf("SourceKind(%q) = %q, want %q", src, got, want)
		}
	}
}

// TestConcurrentAddAndSeries is for -race: jobs add while scrapes read.
func TestConcurrentAddAndSeries(t *testing.T) {
	m := NewMapper(Options{MaxEventsPerJob: 3})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			for _, s := range m.Series() {
				checkNative(t, s.Native)
			}
		}
	}()
	r := rand.New(rand.NewPCG(5, 6))
	for k := range 200 {
		h := exactHist(t, r, 20, 1, 1e5)
		m.Add(fmt.Sprint("job", k%3), interval(t0.Add(time.Duration(k)*time.Second), series(fmt.Sprint("e", k%7), h)))
	}
	<-done
}

// TestCustomAndMixedLayouts: custom edges map to schema 3; a series whose
// intervals change layout keeps its first schema and every count.
func TestCustomAndMixedLayouts(t *testing.T) {
	m := NewMapper(Options{})
	custom, err := hist.NewCustom(hist.Microsecond, []float64{0, 20, 40, 60, 80, 100, 200, 400, 800, 1000, 2000, 4000, 6000, 8000, 10000, 20000, 40000, 60000, 80000, 100000, 200000, 400000, 800000, 1000000, 2000000, 4000000, 6000000, 8000000, 10000000, 20000000, 40000000, 60000000, 80000000, 120000000, math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []float64{3, 0, 5, 7, 11, 13, 0, 2} {
		if err := custom.AddCustom(i*3, c); err != nil {
			t.Fatal(err)
		}
	}
	s := m.Add("netapp", interval(t0, series("read", custom)))[0]
	if s.Native.Schema != customSchema || s.Native.Count != 41 || s.Classic.Count != 41 {
		t.Errorf("custom: schema %d counts %d/%d, want %d and 41", s.Native.Schema, s.Native.Count, s.Classic.Count, customSchema)
	}
	checkNative(t, s.Native)
	checkClassic(t, s.Classic)

	r := rand.New(rand.NewPCG(7, 8))
	m.Add("mixed", interval(t0, series("e", exactHist(t, r, 100, 10, 1e5))))
	s = m.Add("mixed", interval(t0.Add(10*time.Second), series("e", oracleHist(t, map[float64]float64{1: 4, 8: 6}))))[0]
	if s.Native.Schema != hist.ExactScale || s.Native.Count != 110 || s.Classic.Count != 110 {
		t.Errorf("mixed: schema %d counts %d/%d, want %d and 110", s.Native.Schema, s.Native.Count, s.Classic.Count, hist.ExactScale)
	}
	checkNative(t, s.Native)
	checkClassic(t, s.Classic)
}
