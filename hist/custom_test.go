package hist

import (
	"math"
	"testing"
)

// netappBounds are ONTAP's nfs_protocol_read_latency edges in µs (<20us,
// <40us, <60us, <80us, <100us, <200us, <400us, <600us, <800us, <1ms, <2ms,
// ... >120s), a shape no power-of-two grid holds.
var netappBounds = []float64{20, 40, 60, 80, 100, 200, 400, 600, 800, 1000, 2000, 4000, 6000, 8000, 10000, 20000, 40000, 60000, 80000, 100000, 200000, 400000, 600000, 800000, 1e6, 2e6, 4e6, 6e6, 8e6, 10e6, 20e6, 30e6, 60e6, 90e6, 120e6, math.Inf(1)}

func TestCustomBucketsKeepTheSourceEdges(t *testing.T) {
	h, err := NewCustom(Microsecond, netappBounds)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddCustom(-1, 5); err != nil { // <20us
		t.Fatal(err)
	}
	_ = h.AddCustom(0, 10)                  // [20, 40)
	_ = h.AddCustom(5, 2)                   // [200, 400)
	_ = h.AddCustom(len(netappBounds)-2, 1) // >120s, open
	b := h.Buckets()
	want := []Bucket{{0, 20, 5, false}, {20, 40, 10, false}, {200, 400, 2, false}, {120e6, 240e6, 1, true}}
	if len(b) != len(want) {
		t.Fatalf("buckets %+v", b)
	}
	for i := range want {
		if b[i] != want[i] {
			t.Errorf("bucket %d: %+v, want %+v", i, b[i], want[i])
		}
	}
	if wantSum := 5*10.0 + 10*30 + 2*300 + 180e6; h.Sum != wantSum || h.SumExact || !h.TopOpen {
		t.Errorf("sum %g (want %g) exact=%v top=%v", h.Sum, wantSum, h.SumExact, h.TopOpen)
	}
	if err := h.Validate(); err != nil {
		t.Error(err)
	}
	if q := h.Quantile(0.25); q <= 0 || q >= 40 {
		t.Errorf("q25 %g, want inside [0, 40)", q)
	}
}

func TestCustomRecordAndEdges(t *testing.T) {
	h, _ := NewCustom(Microsecond, []float64{10, 20, 50})
	for _, v := range []float64{0, 9.99, 10, 19.9, 20, 49, 50, 1000} {
		_ = h.Record(v)
	}
	if h.ZeroCount != 2 || h.Counts[0] != 2 || h.Counts[1] != 4 || !h.SumExact {
		t.Errorf("zero %g counts %v exact %v (values ≥ the finite top go to the last bucket)", h.ZeroCount, h.Counts, h.SumExact)
	}
}

func TestCustomSubAndReset(t *testing.T) {
	a, _ := NewCustom(Microsecond, netappBounds)
	_ = a.AddCustom(3, 100)
	b := a.Clone()
	_ = b.AddCustom(3, 7)
	d, reset, err := b.Sub(a)
	if err != nil || reset || d.Count() != 7 || d.Sum != 7*90 {
		t.Errorf("delta %+v reset %v err %v", d, reset, err)
	}
	if _, reset, _ := a.Sub(b); !reset {
		t.Error("counter going backwards not seen")
	}
	other, _ := NewCustom(Microsecond, []float64{1, 2})
	if _, _, err := a.Sub(other); err == nil {
		t.Error("different edges subtracted")
	}
}

func TestMergeCustomWithGridBothWays(t *testing.T) {
	c, _ := NewCustom(Microsecond, []float64{100, 300})
	_ = c.AddCustom(0, 10) // [100, 300)
	g := NewExact(Microsecond, 0)
	_ = g.Record(150)
	for _, pair := range [][2]*Histogram{{c, g}, {g, c}} {
		x := pair[0].Clone()
		x.Merge(pair[1])
		if !near(x.Count(), 11, 1e-12) || x.SumExact {
			t.Errorf("merged count %g exact %v", x.Count(), x.SumExact)
		}
	}
	same := c.Clone()
	same.Merge(c)
	if same.Counts[0] != 20 || same.Sum != 2*c.Sum {
		t.Errorf("same edges: %v sum %g", same.Counts, same.Sum)
	}
}

func TestCustomRowsSplitByLogWidthAndKeepTheSum(t *testing.T) {
	c, _ := NewCustom(Microsecond, []float64{100, 400})
	_ = c.AddCustom(0, 90) // [100, 400): rows [64,128) [128,256) [256,512)
	r := c.Rows()
	total, time := r.ZeroCount, r.ZeroTime
	for i := range r.Counts {
		total += r.Counts[i]
		time += r.Times[i]
	}
	if !near(total, 90, 1e-12) || !near(time, c.Sum, 1e-12) {
		t.Errorf("rows hold %g events %g µs; want 90 and %g", total, time, c.Sum)
	}
	// log2(128/100) : log2(256/128) : log2(400/256) of the events.
	share := math.Log2(256.0/128) / math.Log2(4)
	if got := r.Counts[7-r.First]; !near(got, 90*share, 1e-9) {
		t.Errorf("[128,256) row %g, want %g", got, 90*share)
	}
}

func TestRebinLikeOntoCustomEdges(t *testing.T) {
	g := NewBuckets(Microsecond)
	_ = g.AddBound(LowerBound, 64, 8) // [64, 128)
	like, _ := NewCustom(Microsecond, []float64{50, 100, 200})
	r := RebinLike(g, like)
	lowShare := math.Log(100.0/64) / math.Log(2)
	if !near(r.Counts[0], 8*lowShare, 1e-9) || !near(r.Counts[1], 8*(1-lowShare), 1e-9) || r.Sum != g.Sum {
		t.Errorf("rebinned %v sum %g", r.Counts, r.Sum)
	}
}

func TestCustomValidation(t *testing.T) {
	for _, b := range [][]float64{nil, {1}, {2, 1}, {1, 1}, {-1, 2}, {1, math.Inf(1), 5}, {math.NaN(), 1}} {
		if _, err := NewCustom(Microsecond, b); err == nil {
			t.Errorf("edges %v accepted", b)
		}
	}
	h, _ := NewCustom(Microsecond, []float64{1, 2, 3})
	h.Counts = h.Counts[:1]
	if h.Validate() == nil {
		t.Error("counts/edges mismatch accepted")
	}
	if err := h.AddBound(UpperBound, 4, 1); err == nil {
		t.Error("AddBound on custom edges accepted")
	}
}

func TestCustomZeroBucketIsNotTheOpenTop(t *testing.T) {
	h, _ := NewCustom(Microsecond, []float64{10, math.Inf(1)})
	_ = h.AddCustom(-1, 3)
	if b := h.Buckets(); len(b) != 1 || b[0].Capped || b[0].Upper != 10 {
		t.Errorf("buckets %+v: only the last custom bucket is the open top", b)
	}
}

func TestSubIgnoresRoundingNoiseOfFractionalCounts(t *testing.T) {
	a, _ := NewCustom(Microsecond, []float64{1, 2, 4})
	a.Counts[0], a.Counts[1] = 0.1+0.2, 5
	b := a.Clone()
	b.Counts = []float64{0.3, 6} // 0.1+0.2 > 0.3 by 5.5e-17
	d, reset, err := b.Sub(a)
	if err != nil || reset || d.Counts[0] != 0 || d.Counts[1] != 1 {
		t.Errorf("delta %v reset %v err %v", d, reset, err)
	}
	if e := a.EmptyLike(); e.Count() != 0 || len(e.Counts) != 2 || e.Bounds == nil {
		t.Errorf("EmptyLike %+v", e)
	}
}

// TestRebinOpenTopFromZero is a regression test (found by fuzzing
// loadtest.FindModes): one open bucket [0, +Inf) has no finite edge to put
// the zero bucket at, and rebinning it used to index out of range.
func TestRebinOpenTopFromZero(t *testing.T) {
	h, err := NewCustom(Nanosecond, []float64{0, math.Inf(1)})
	if err != nil {
		t.Skipf("NewCustom refuses [0, +Inf): %v", err)
	}
	if err := h.AddCustom(0, 5); err != nil {
		t.Fatal(err)
	}
	r := Rebin(h, Microsecond, 3)
	if math.Abs(r.Count()-5) > 1e-9 {
		t.Errorf("rebinned count %g, want 5", r.Count())
	}
}

func TestCustomEdgesReadAnOpenTopAsDouble(t *testing.T) {
	for _, c := range []struct {
		bounds []float64
		i      int
		lo, hi float64
	}{
		{[]float64{0, 20, 40}, 1, 20, 40},
		{[]float64{0, 20, math.Inf(1)}, 1, 20, 40},
		{[]float64{0, math.Inf(1)}, 0, 0, 1},
	} {
		if lo, hi := CustomEdges(c.bounds, c.i); lo != c.lo || hi != c.hi {
			t.Errorf("CustomEdges(%v, %d) = [%g, %g), want [%g, %g)", c.bounds, c.i, lo, hi, c.lo, c.hi)
		}
	}
}
