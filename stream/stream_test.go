package stream

import (
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
)

var t0 = time.Date(2013, 8, 26, 16, 26, 51, 0, time.FixedZone("", 2*3600))

func oracleSnap(counts map[float64]float64) *hist.Histogram {
	h := hist.NewBuckets(hist.Millisecond)
	for n, c := range counts {
		_ = h.AddBound(hist.UpperBound, n, c)
	}
	return h
}

func TestDifferBaselineDeltaAndReset(t *testing.T) {
	k := Key{Event: "db file sequential read"}
	d := NewDiffer("f")
	snaps := []map[float64]float64{
		{1: 100, 8: 10},
		{1: 130, 8: 12},
		{1: 5},             // restart: counters went backwards
		{1: 9, 8: 1},       // new baseline diffed
		{1: 9, 8: 1, 2: 0}, // idle interval
	}
	var got []Interval
	for i, s := range snaps {
		iv, ok, err := d.Next(t0.Add(time.Duration(i)*3*time.Second), 3*time.Second, false, []SeriesHist{{k, oracleSnap(s)}})
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = append(got, iv)
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d intervals, want 4 (first snapshot is the baseline)", len(got))
	}
	if c := got[0].Series[0].Hist.Count(); c != 32 {
		t.Errorf("first delta %g, want 32", c)
	}
	if !got[1].Gap || len(got[1].Series) != 0 {
		t.Errorf("reset interval %+v, want a gap", got[1])
	}
	if c := got[2].Series[0].Hist.Count(); c != 5 {
		t.Errorf("after reset %g, want 5 (9+1 − 5)", c)
	}
	if len(got[3].Series) != 0 || got[3].Gap {
		t.Errorf("idle interval %+v, want observed with no events", got[3])
	}
	if !got[0].Start.Equal(t0) || got[0].Duration != 3*time.Second {
		t.Errorf("interval window %v +%v", got[0].Start, got[0].Duration)
	}
}

func TestDifferNewSeriesDiffsAgainstZero(t *testing.T) {
	d := NewDiffer("f")
	a, b := Key{Event: "a"}, Key{Event: "b"}
	_, _, _ = d.Next(t0, time.Second, false, []SeriesHist{{a, oracleSnap(map[float64]float64{1: 1})}})
	iv, ok, _ := d.Next(t0.Add(time.Second), time.Second, false, []SeriesHist{
		{a, oracleSnap(map[float64]float64{1: 1})},
		{b, oracleSnap(map[float64]float64{4: 7})},
	})
	if !ok || len(iv.Series) != 1 || iv.Series[0].Key != b || iv.Series[0].Hist.Count() != 7 {
		t.Errorf("new series: %+v", iv.Series)
	}
}

func exactInterval(src string, start time.Time, d time.Duration, k Key, values ...float64) Interval {
	h := hist.NewExact(hist.Microsecond, 0)
	for _, v := range values {
		_ = h.Record(v)
	}
	iv := Interval{Source: src, Start: start, Duration: d}
	if len(values) > 0 {
		iv.Series = []SeriesHist{{k, h}}
	}
	return iv
}

func TestRecordingMergesSourcesByTime(t *testing.T) {
	k := Key{Event: "log file sync"}
	var r Recording
	r.Add(exactInterval("b.trc", t0, 3*time.Second, k, 100, 200))
	r.Add(exactInterval("a.trc", t0, 3*time.Second, k, 50))
	r.Add(exactInterval("a.trc", t0.Add(3*time.Second), 3*time.Second, k))
	r.Add(exactInterval("a.trc", t0.Add(6*time.Second), 3*time.Second, k, 7))
	ss := r.Series()
	if len(ss) != 1 {
		t.Fatalf("%d series", len(ss))
	}
	s := ss[0]
	if s.Total.Count() != 4 || s.Total.Sum != 357 || !s.Total.SumExact {
		t.Errorf("total %g events %g µs exact=%v", s.Total.Count(), s.Total.Sum, s.Total.SumExact)
	}
	if len(s.Points) != 3 {
		t.Fatalf("%d points, want 3 (coinciding windows summed)", len(s.Points))
	}
	if s.Points[0].Count() != 3 || s.Points[1].Count() != 0 || s.Points[1].Gap || s.Points[2].Count() != 1 {
		t.Errorf("points %+v", s.Points)
	}
}

func TestSeriesOrderPutsIdleLast(t *testing.T) {
	var r Recording
	r.Add(exactInterval("t", t0, time.Second, Key{Event: "SQL*Net message from client"}, 1e9))
	r.Add(exactInterval("t", t0, time.Second, Key{Event: "db file sequential read"}, 10))
	r.Add(exactInterval("t", t0, time.Second, Key{Event: "log file sync"}, 1000))
	ss := r.Series()
	want := []string{"log file sync", "db file sequential read", "SQL*Net message from client"}
	for i, w := range want {
		if ss[i].Key.Event != w {
			t.Errorf("series %d = %q, want %q", i, ss[i].Key.Event, w)
		}
	}
}

func TestGridRatesAndGaps(t *testing.T) {
	k := Key{Event: "e"}
	g := NewGrid(time.Second)
	g.Add(exactInterval("s", t0, time.Second, k, 3, 3, 3, 3)) // 4 events in [2,4) µs
	g.Add(exactInterval("s", t0.Add(time.Second), time.Second, k))
	g.Add(exactInterval("s", t0.Add(3*time.Second), time.Second, k, 1000))
	s := g.Series()[0]
	lo, hi, _ := s.RowRange()
	if lo != 1 || hi != 9 {
		t.Errorf("rows %d..%d, want 1..9", lo, hi)
	}
	freq, inten := make([]float64, hi-lo+1), make([]float64, hi-lo+1)
	if !g.Rates(s, 0, lo, freq, inten) || freq[0] != 4 || math.Abs(inten[0]-12e-6) > 1e-12 {
		t.Errorf("column 0: freq %v inten %v", freq, inten)
	}
	if !g.Rates(s, 1, lo, freq, inten) || freq[0] != 0 {
		t.Errorf("column 1 should be observed and empty: %v", freq)
	}
	if g.Rates(s, 2, lo, freq, inten) {
		t.Errorf("column 2 was never observed: want a gap")
	}
	if !g.Rates(s, 3, lo, freq, inten) || freq[8] != 1 {
		t.Errorf("column 3: %v", freq)
	}
}

func TestGridJitteredIntervalsLeaveNoSpuriousGap(t *testing.T) {
	// PyLatencyMap records arrive about 3.02 s apart; a fixed 3 s grid must
	// still show every column observed and the rate unchanged.
	k := Key{Event: "e"}
	g := NewGrid(3 * time.Second)
	start := t0
	for i := 0; i < 200; i++ {
		d := 3020 * time.Millisecond
		vals := make([]float64, 302) // 100 events/s
		for j := range vals {
			vals[j] = 500
		}
		g.Add(exactInterval("s", start, d, k, vals...))
		start = start.Add(d)
	}
	s := g.Series()[0]
	first, last, _ := g.Columns()
	lo, _, _ := s.RowRange()
	f, in := make([]float64, 1), make([]float64, 1)
	for c := first; c < last; c++ { // the last column is partly observed
		if !g.Rates(s, c, lo, f, in) {
			t.Fatalf("column %d reported as a gap", c)
		}
		if math.Abs(f[0]-100) > 1e-6 {
			t.Fatalf("column %d: %g events/s, want 100", c, f[0])
		}
	}
}

func TestGridFoldsEdgeRows(t *testing.T) {
	k := Key{Event: "e"}
	g := NewGrid(time.Second)
	g.Add(exactInterval("s", t0, time.Second, k, 0, 1, 2, 100, 5000))
	s := g.Series()[0]
	f, in := make([]float64, 3), make([]float64, 3)
	g.Rates(s, 0, 1, f, in) // rows 2^1..2^3, everything else folded
	if f[0] != 3 || f[1] != 0 || f[2] != 2 {
		t.Errorf("folded rows %v, want [3 0 2]", f)
	}
}

func TestGridSumsTwoSourcesByTheirOwnCoverage(t *testing.T) {
	k := Key{Event: "e"}
	g := NewGrid(2 * time.Second)
	g.Add(exactInterval("a", t0, 2*time.Second, k, 10, 10)) // 1/s
	g.Add(exactInterval("b", t0, time.Second, k, 10))       // 1/s over its 1 s
	s := g.Series()[0]
	lo, _, _ := s.RowRange()
	f, in := make([]float64, 1), make([]float64, 1)
	g.Rates(s, 0, lo, f, in)
	if f[0] != 2 {
		t.Errorf("summed rate %g, want 2", f[0])
	}
}

func TestInferWidthIsMedian(t *testing.T) {
	ivs := []Interval{{Duration: 3 * time.Second}, {Duration: 30 * time.Second}, {Duration: 3 * time.Second}, {Duration: time.Second, Gap: true}}
	if w := InferWidth(ivs); w != 3*time.Second {
		t.Errorf("width %v", w)
	}
}

func TestValidate(t *testing.T) {
	if (Interval{Source: "x", Start: t0}).Validate() == nil {
		t.Error("zero duration accepted")
	}
	if (Interval{Source: "x", Duration: time.Second}).Validate() == nil {
		t.Error("zero start accepted")
	}
	bad := Interval{Source: "x", Start: t0, Duration: time.Second, Series: []SeriesHist{{Key{Event: "e"}, &hist.Histogram{Unit: 3}}}}
	if bad.Validate() == nil {
		t.Error("invalid histogram accepted")
	}
}

func TestGridSumsTheSameWindowReportedTwiceByOneSource(t *testing.T) {
	// Two sessions' traces concatenated into one file report the same
	// window twice: their events add up, the observed time does not.
	k := Key{Event: "e"}
	g := NewGrid(time.Second)
	g.Add(exactInterval("all.trc", t0, time.Second, k, 10, 10))
	g.Add(exactInterval("all.trc", t0, time.Second, k, 10, 10, 10))
	g.Add(exactInterval("all.trc", t0.Add(time.Second), 500*time.Millisecond, k, 10))
	g.Add(exactInterval("all.trc", t0.Add(1500*time.Millisecond), 500*time.Millisecond, k, 10))
	s := g.Series()[0]
	lo, _, _ := s.RowRange()
	f, in := make([]float64, 1), make([]float64, 1)
	if g.Rates(s, 0, lo, f, in); f[0] != 5 {
		t.Errorf("column 0: %g events/s, want 5", f[0])
	}
	if g.Rates(s, 1, lo, f, in); f[0] != 2 || g.Observed(s, 1) != 1 {
		t.Errorf("column 1: %g events/s over %g s, want 2 over 1", f[0], g.Observed(s, 1))
	}
}

func TestRecordingSumsARepeatedWindowInPlace(t *testing.T) {
	k := Key{Event: "e"}
	var r Recording
	for i := 0; i < 100; i++ {
		r.Add(exactInterval("cat.trc", t0, 3*time.Second, k, 10, 20))
		r.Add(exactInterval("cat.trc", t0.Add(3*time.Second), 3*time.Second, k, 30))
	}
	if r.Len() != 2 {
		t.Fatalf("%d intervals kept, want 2 distinct windows", r.Len())
	}
	s := r.Series()[0]
	if s.Total.Count() != 300 || s.Points[0].Count() != 200 || s.Points[1].Count() != 100 {
		t.Errorf("total %g, points %g %g", s.Total.Count(), s.Points[0].Count(), s.Points[1].Count())
	}
	gap := Interval{Source: "cat.trc", Start: t0, Duration: 3 * time.Second, Gap: true}
	r.Add(gap)
	if r.Series()[0].Points[0].Gap {
		t.Error("a gap report hid a window that had data")
	}
}

func TestRoundWidth(t *testing.T) {
	cases := map[time.Duration]time.Duration{
		3021 * time.Millisecond: 3 * time.Second, 2990 * time.Millisecond: 3 * time.Second,
		time.Second: time.Second, 61 * time.Second: time.Minute, 7 * time.Second: 7 * time.Second,
		0: 0, 499 * time.Millisecond: 500 * time.Millisecond,
	}
	for in, want := range cases {
		if got := RoundWidth(in); got != want {
			t.Errorf("RoundWidth(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestDifferSeedsNewCustomSeriesWithTheirOwnEdges(t *testing.T) {
	d := NewDiffer("f")
	k := Key{Event: "nfs_protocol_read_latency"}
	custom := func(c float64) *hist.Histogram {
		h, _ := hist.NewCustom(hist.Microsecond, []float64{20, 40, 60})
		_ = h.AddCustom(0, c)
		return h
	}
	_, _, err := d.Next(t0, time.Second, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	iv, ok, err := d.Next(t0.Add(time.Second), time.Second, false, []SeriesHist{{k, custom(4)}})
	if err != nil || !ok || len(iv.Series) != 1 || iv.Series[0].Hist.Count() != 4 {
		t.Fatalf("new custom series: %+v ok=%v err=%v", iv, ok, err)
	}
}
