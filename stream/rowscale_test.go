package stream

import (
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
)

// TestGridRowScaleSplitsExactDurations: at row scale 2 an exact histogram's
// events land in quarter-octave rows: 100 µs in row ⌊4·log2 100⌋ = 26,
// 120 µs in 27, 0.5 µs in the zero row ZeroPow·4 − 1.
func TestGridRowScaleSplitsExactDurations(t *testing.T) {
	g := NewGrid(time.Second)
	g.RowScale = 2
	k := Key{Event: "db file sequential read"}
	t0 := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	g.Add(exactInterval("trace", t0, time.Second, k, 0.5, 100, 120, 120))
	s := g.Series()[0]
	if s.RowScale() != 2 {
		t.Fatalf("row scale %d, want 2", s.RowScale())
	}
	lo, hi, _ := s.RowRange()
	if lo != -1 || hi != 27 {
		t.Fatalf("rows %d..%d, want -1..27", lo, hi)
	}
	freq, inten := make([]float64, hi-lo+1), make([]float64, hi-lo+1)
	g.Rates(s, 0, lo, freq, inten)
	if freq[0] != 1 || freq[26-lo] != 1 || freq[27-lo] != 2 {
		t.Errorf("rates %v", freq)
	}
}

// TestGridRowScaleCoarsensBucketed: once a power-of-two bucketed histogram
// joins a series, its finer rows fold back into octaves, keeping every
// event: splitting the bucket would invent where its events fell.
func TestGridRowScaleCoarsensBucketed(t *testing.T) {
	g := NewGrid(time.Second)
	g.RowScale = 3
	k := Key{Event: "db file sequential read"}
	t0 := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	g.Add(exactInterval("trace", t0, time.Second, k, 0.5, 100, 120))
	b := hist.NewBuckets(hist.Microsecond)
	if err := b.AddBound(hist.UpperBound, 128, 4); err != nil { // [64, 128) µs
		t.Fatal(err)
	}
	g.Add(Interval{Source: "histogram", Start: t0, Duration: time.Second, Series: []SeriesHist{{k, b}}})
	s := g.Series()[0]
	lo, hi, _ := s.RowRange()
	if s.RowScale() != 0 || lo != -1 || hi != 6 {
		t.Fatalf("row scale %d, rows %d..%d, want 0 and -1..6", s.RowScale(), lo, hi)
	}
	freq, inten := make([]float64, hi-lo+1), make([]float64, hi-lo+1)
	g.Rates(s, 0, lo, freq, inten)
	if freq[0] != 1 || freq[6-lo] != 6 {
		t.Errorf("rates %v, want 1 in the zero row and 6 in [64, 128) µs", freq)
	}
}

// TestGridOrigin starts column 0 at the origin asked for, before the first
// interval: columns before it are unobserved, and Shares gives an interval's
// columns the fractions the grid spread its events by.
func TestGridOrigin(t *testing.T) {
	t0 := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	g := NewGrid(2 * time.Second)
	g.Origin = t0.Add(-3 * time.Second)
	if !g.ColumnStart(1).Equal(t0.Add(-time.Second)) {
		t.Errorf("column 1 starts at %v before any interval", g.ColumnStart(1))
	}
	k := Key{Event: "db file sequential read"}
	iv := exactInterval("trace", t0, 2*time.Second, k, 100, 200)
	g.Add(iv)
	shares := map[int]float64{}
	g.Shares(iv, func(c int, frac float64) { shares[c] = frac })
	if len(shares) != 2 || shares[1] != 0.5 || shares[2] != 0.5 {
		t.Errorf("shares %v, want half in columns 1 and 2", shares)
	}
	s := g.Series()[0]
	if g.Observed(s, 0) != 0 || g.Observed(s, 1) != 1 || g.SourceObserved("trace", 2) != 1 || g.SourceObserved("other", 2) != 0 {
		t.Errorf("observed %v %v %v", g.Observed(s, 0), g.Observed(s, 1), g.SourceObserved("trace", 2))
	}
}
