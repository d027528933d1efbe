package diff

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// layout makes an empty histogram of one source's bucket layout.
type layout func() *hist.Histogram

// Layouts of real sources: Oracle's power-of-two ms and µs
// (V$EVENT_HISTOGRAM, _MICRO), per-event durations (10046, probes:
// ExactScale in µs) and fio's 1856 bins in ns.
var (
	pow2ms  layout = func() *hist.Histogram { return hist.NewBuckets(hist.Millisecond) }
	pow2us  layout = func() *hist.Histogram { return hist.NewBuckets(hist.Microsecond) }
	exactUS layout = func() *hist.Histogram { return hist.NewExact(hist.Microsecond, 0) }
	fioNS   layout = func() *hist.Histogram {
		h, err := hist.NewCustom(hist.Nanosecond, fioBounds)
		if err != nil {
			panic(err)
		}
		return h
	}
)

// fioBounds are fio's bin edges (source/fio: 64 linear bins per power of
// two from 128 ns, 1 ns bins below, top 2^34 ns).
var fioBounds = func() []float64 {
	lower := func(idx int) float64 {
		if idx < 128 {
			return float64(idx)
		}
		e := uint(idx>>6) - 1
		return float64(uint64(1)<<(e+6) + uint64(idx%64)<<e)
	}
	b := make([]float64, 1856)
	for m := 1; m <= 1856; m++ {
		b[m-1] = lower(m)
	}
	return b
}()

// lognormal draws latencies in ms: median exp(mu) ms.
func lognormal(r *rand.Rand, mu, sigma float64) float64 { return math.Exp(mu + sigma*r.NormFloat64()) }

// side builds a side of windows×perWindow latencies (ms, times factor),
// binned in lay, one series "read".
func side(name string, r *rand.Rand, lay layout, windows, perWindow int, factor float64) *Side {
	s := NewSide(name)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for w := range windows {
		h := lay()
		ms := float64(hist.Millisecond) / float64(h.Unit)
		for range perWindow {
			if err := h.Record(factor * lognormal(r, 1.5, 1) * ms); err != nil {
				panic(err)
			}
		}
		s.Add(stream.Interval{Source: name, Start: start.Add(time.Duration(w) * 3 * time.Second), Duration: 3 * time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "read"}, Hist: h}}})
	}
	return s
}

// rejectionBand returns the counts of rejections out of n tests at level
// alpha that a correct test stays within with probability 99.9 %.
func rejectionBand(n int, alpha float64) (lo, hi int) {
	return binomialQuantile(0.0005, n, alpha), binomialQuantile(0.9995, n, alpha)
}

// TestFalsePositiveRate: pairs of sides drawn from one lognormal are
// flagged at the rate alpha, within the binomial band, whether the
// dispersion is estimated from windows (F test) or not (one window a side:
// χ²), and across different bucket layouts.
func TestFalsePositiveRate(t *testing.T) {
	const pairs = 1000
	o := DefaultOptions()
	for _, c := range []struct {
		name         string
		la, lb       layout
		windows, per int
		pairs        int
	}{
		{"pow2 ms, 10 windows of 200", pow2ms, pow2ms, 10, 200, pairs},
		{"pow2 ms, 1 window of 2000", pow2ms, pow2ms, 1, 2000, pairs},
		{"exact µs, 8 windows of 300", exactUS, exactUS, 8, 300, pairs},
		{"pow2 µs vs fio ns (nested)", pow2us, fioNS, 10, 200, 300},
		{"pow2 ms vs fio ns (split)", pow2ms, fioNS, 10, 200, 300},
		{"pow2 ms vs exact µs (split)", pow2ms, exactUS, 10, 200, 300},
	} {
		r := rand.New(rand.NewPCG(1, uint64(len(c.name))))
		rejected := 0
		for range c.pairs {
			res := Compare(side("A", r, c.la, c.windows, c.per, 1), side("B", r, c.lb, c.windows, c.per, 1), o)
			if res.Series[0].Significant {
				rejected++
			}
		}
		lo, hi := rejectionBand(c.pairs, o.Alpha)
		t.Logf("%s: %d of %d pairs flagged at α = %g (band %d..%d)", c.name, rejected, c.pairs, o.Alpha, lo, hi)
		if rejected < lo || rejected > hi {
			t.Errorf("%s: %d of %d stationary pairs flagged, want %d..%d", c.name, rejected, c.pairs, lo, hi)
		}
	}
}

// TestShiftDetected: B ×2 slower is flagged and its factor recovered
// within the bucket resolution, on every layout pair.
func TestShiftDetected(t *testing.T) {
	for _, c := range []struct {
		name   string
		la, lb layout
		factor float64
		tol    float64 // of the factor's log2: a fraction of a bucket
	}{
		{"pow2 ms ×2", pow2ms, pow2ms, 2, 0.15},
		{"exact µs ×1.3", exactUS, exactUS, 1.3, 0.05},
		{"pow2 µs vs fio ×2", pow2us, fioNS, 2, 0.15},
		{"pow2 ms vs exact µs ×0.5", pow2ms, exactUS, 0.5, 0.15},
	} {
		r := rand.New(rand.NewPCG(7, 7))
		res := Compare(side("A", r, c.la, 10, 200, 1), side("B", r, c.lb, 10, 200, c.factor), DefaultOptions())
		s := res.Series[0]
		if !s.Significant {
			t.Errorf("%s: shift not flagged: %+v", c.name, s.Test)
		}
		if got := math.Log2(float64(s.Factor)); math.Abs(got-math.Log2(c.factor)) > c.tol {
			t.Errorf("%s: factor ×%.3f, want ×%g", c.name, float64(s.Factor), c.factor)
		}
	}
}

// TestIntervalCoverage measures how often the percentiles' intervals hold
// the population's percentile: on a fine grid against the true lognormal
// quantile, on power-of-two buckets against the population's quantile
// read from those buckets as a histogram reads it (the estimand at that
// resolution). The intervals must hold it at least at the level (within
// the binomial band of 1000 tries); on the fine grid no more than 2.5
// points above it (the binomial ranks are discrete), on power-of-two
// buckets they are conservative (up to 99 % at p99: linear interpolation
// inside a bucket twice as wide as its lower edge).
func TestIntervalCoverage(t *testing.T) {
	const reps, n = 1000, 400
	o := DefaultOptions()
	for _, c := range []struct {
		name string
		lay  layout
	}{{"exact µs", exactUS}, {"pow2 ms", pow2ms}} {
		r := rand.New(rand.NewPCG(3, 3))
		// The population on this layout: a million draws.
		pop := c.lay()
		ms := float64(hist.Millisecond) / float64(pop.Unit)
		for range 1000000 {
			pop.Record(lognormal(r, 1.5, 1) * ms)
		}
		for _, q := range []float64{0.5, 0.9, 0.99} {
			truth := math.Exp(1.5+normalQuantile(q)) * 1e3 // µs
			if c.lay().Scale == 0 {
				truth = pop.Unit.Nanos(pop.Quantile(q)) / 1e3
			}
			covered := 0
			for range reps {
				s := side("A", r, c.lay, 1, n, 1)
				_, lo, hi := quantileCI(s.series[SeriesKey{Event: "read"}].total, q, 1, o.Level)
				if float64(lo) <= truth && truth <= float64(hi) {
					covered++
				}
			}
			got := float64(covered) / reps
			t.Logf("%s p%g: %.1f %% of %d intervals (n = %d) hold the population's value", c.name, 100*q, 100*got, reps, n)
			_, hi := rejectionBand(reps, 1-o.Level)
			if got < 1-float64(hi)/reps || (c.lay().Scale > 0 && got > o.Level+0.025) {
				t.Errorf("%s p%g: coverage %.3f, want ≈ %.2f", c.name, 100*q, got, o.Level)
			}
		}
	}
}

// TestBadInput: empty sides, series on one side only, one cell, zero
// counts: clear marks, JSON without NaN, never a panic.
func TestBadInput(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	a := side("A", r, pow2ms, 3, 50, 1)
	b := NewSide("B")
	// A series with zero events, one all in the zero bucket, one only in B.
	zero := pow2ms()
	tiny := pow2ms()
	tiny.Record(0.1)
	tiny2 := pow2ms()
	tiny2.Record(0.2)
	only := pow2ms()
	only.Record(3)
	b.Add(stream.Interval{Start: time.Unix(100, 0), Duration: time.Second, Series: []stream.SeriesHist{
		{Key: stream.Key{Event: "read"}, Hist: zero}, {Key: stream.Key{Event: "tiny"}, Hist: tiny}, {Key: stream.Key{Event: "write"}, Hist: only}}})
	a.Add(stream.Interval{Start: time.Unix(0, 0), Duration: time.Second, Series: []stream.SeriesHist{{Key: stream.Key{Event: "tiny"}, Hist: tiny2}}})
	a.Add(stream.Interval{Start: time.Unix(1, 0), Duration: time.Second, Gap: true})
	res := Compare(a, b, DefaultOptions())
	marks := map[string]string{}
	for _, s := range res.Series {
		marks[s.Event] = s.Mark()
	}
	want := map[string]string{"read": "only in A", "tiny": "untested (too few events)", "write": "only in B"}
	for k, v := range want {
		if marks[k] != v {
			t.Errorf("%s marked %q, want %q", k, marks[k], v)
		}
	}
	empty := Compare(NewSide("A"), NewSide("B"), DefaultOptions())
	for _, r := range []*Result{res, empty, Compare(NewSide("A"), a, DefaultOptions())} {
		for _, f := range []string{FormatTable, FormatJSON, FormatCSV, FormatHTML} {
			var buf bytes.Buffer
			if err := Write(&buf, r, f); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			if f == FormatJSON && !json.Valid(buf.Bytes()) {
				t.Errorf("invalid JSON:\n%s", buf.String())
			}
			if f == FormatTable && len(r.Series) > 0 && !strings.Contains(buf.String(), "only in") {
				t.Errorf("table does not say where a series is:\n%s", buf.String())
			}
		}
	}
}

// TestCommonGrid: nested layouts compare exactly on the coarser edges,
// others are split and say so.
func TestCommonGrid(t *testing.T) {
	for _, c := range []struct {
		name   string
		a, b   layout
		exact  bool
		phrase string
	}{
		{"same", pow2ms, pow2ms, true, "both sides' own buckets: powers of two in ms"},
		{"µs in fio", pow2us, fioNS, true, "A's buckets (powers of two in us); B's finer buckets nest in them: exact"},
		{"exact in pow2", exactUS, pow2us, true, "B's buckets (powers of two in us); A's finer buckets nest in them: exact"},
		{"ms vs fio", pow2ms, fioNS, false, "A's buckets (powers of two in ms); B's buckets that straddle their edges are split"},
	} {
		ha, hb := c.a(), c.b()
		for _, v := range []float64{0.3, 1, 2.5, 7, 40, 300} {
			ha.Record(v * float64(hist.Millisecond) / float64(ha.Unit))
			hb.Record(v * float64(hist.Millisecond) / float64(hb.Unit))
		}
		g := commonGrid(ha, hb)
		if g.Exact != c.exact || !strings.Contains(g.Description, c.phrase) {
			t.Errorf("%s: exact %v, %q", c.name, g.Exact, g.Description)
		}
		ca, cb := g.Cells(ha), g.Cells(hb)
		if math.Abs(sum(ca)-6) > 1e-9 || math.Abs(sum(cb)-6) > 1e-9 {
			t.Errorf("%s: cells lose events: %v %v", c.name, ca, cb)
		}
		if c.exact {
			for i := range ca {
				if math.Abs(ca[i]-cb[i]) > 1e-9 {
					t.Errorf("%s: cell %d: %g vs %g for the same values", c.name, i, ca[i], cb[i])
				}
			}
		}
	}
}

// TestFamilyWiseRate: comparing 5 stationary series at once, Holm's
// correction keeps the chance that any is flagged at most α; without it
// that chance is about 1 − (1 − α)^5.
func TestFamilyWiseRate(t *testing.T) {
	const comparisons, series = 300, 5
	build := func(r *rand.Rand, name string) *Side {
		s := NewSide(name)
		for w := range 6 {
			iv := stream.Interval{Start: time.Unix(int64(3*w), 0), Duration: 3 * time.Second}
			for e := range series {
				h := pow2us()
				for range 150 {
					h.Record(lognormal(r, 1.5, 1) * 1e3)
				}
				iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: "event " + strconv.Itoa(e)}, Hist: h})
			}
			s.Add(iv)
		}
		return s
	}
	for _, correction := range []string{CorrectHolm, CorrectNone} {
		r := rand.New(rand.NewPCG(11, 11))
		o := DefaultOptions()
		o.Correction = correction
		flagged := 0
		for range comparisons {
			res := Compare(build(r, "A"), build(r, "B"), o)
			if res.Tests != series {
				t.Fatalf("%d series tested, want %d", res.Tests, series)
			}
			for _, s := range res.Series {
				if s.Significant {
					flagged++
					break
				}
			}
		}
		rate := 1 - math.Pow(1-o.Alpha, series)
		if correction == CorrectHolm {
			rate = o.Alpha
		}
		_, hi := rejectionBand(comparisons, rate)
		t.Logf("%s: %d of %d comparisons of %d stationary series flag one (expected ≤ %.1f, band ..%d)", correction, flagged, comparisons, series, rate*comparisons, hi)
		if flagged > hi {
			t.Errorf("%s: %d of %d comparisons flag a stationary series, want ≤ %d", correction, flagged, comparisons, hi)
		}
	}
}

// TestOddHistograms: layouts and contents no source should send but a
// bad file might (custom edges from 0, open tops, events only in the zero
// bucket, tiny and huge values, one side a single bucket) compare and
// write without a panic, and never lose events on the grid.
func TestOddHistograms(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	makers := []func() *hist.Histogram{
		func() *hist.Histogram { return pow2ms() },
		func() *hist.Histogram { return exactUS() },
		func() *hist.Histogram { return fioNS() },
		func() *hist.Histogram {
			h, _ := hist.NewCustom(hist.Second, []float64{0, 0.001, 0.01, math.Inf(1)})
			return h
		},
		func() *hist.Histogram {
			h := hist.NewBuckets(hist.Microsecond)
			h.AddOpenTop(1024, 3)
			return h
		},
	}
	for range 300 {
		var sides [2]*Side
		for i := range sides {
			sides[i] = NewSide("s")
			for w := range r.IntN(3) + 1 {
				h := makers[r.IntN(len(makers))]()
				for range r.IntN(40) {
					h.Record(math.Exp(r.NormFloat64()*8) * float64(hist.Millisecond) / float64(h.Unit))
				}
				sides[i].Add(stream.Interval{Start: time.Unix(int64(w), 0), Duration: time.Second,
					Series: []stream.SeriesHist{{Key: stream.Key{Event: "x"}, Hist: h}}})
			}
		}
		res := Compare(sides[0], sides[1], DefaultOptions())
		for _, s := range res.Series {
			var cellsA, cellsB float64
			for _, c := range s.Cells {
				cellsA += float64(c.A)
				cellsB += float64(c.B)
			}
			if s.In == InBoth && (math.Abs(cellsA-float64(s.CountA)) > 1e-6*float64(s.CountA) || math.Abs(cellsB-float64(s.CountB)) > 1e-6*float64(s.CountB)) {
				t.Fatalf("grid lost events: %g of %g, %g of %g (%s)", cellsA, float64(s.CountA), cellsB, float64(s.CountB), s.Grid)
			}
		}
		for _, f := range []string{FormatTable, FormatJSON, FormatCSV, FormatHTML} {
			var buf bytes.Buffer
			if err := Write(&buf, res, f); err != nil {
				t.Fatal(err)
			}
		}
	}
}
