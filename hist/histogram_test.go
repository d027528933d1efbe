package hist

import (
	"errors"
	"math"
	"testing"
)

func near(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

func TestGridEdgesAreConsistent(t *testing.T) {
	for s := 0; s <= MaxScale; s++ {
		for i := -300; i <= 300; i++ {
			lo := lowerBound(i, s)
			if got := bucketIndex(lo, s); got != i {
				t.Fatalf("scale %d: lower edge of bucket %d (%g) maps to bucket %d", s, i, lo, got)
			}
			mid := (lo + lowerBound(i+1, s)) / 2
			if got := bucketIndex(mid, s); got != i {
				t.Fatalf("scale %d: midpoint of bucket %d maps to bucket %d", s, i, got)
			}
		}
	}
}

func TestExactScaleRelativeError(t *testing.T) {
	// A bucket midpoint is within 0.55 % of every value in the bucket.
	for i := -64; i < 64*20; i++ {
		lo, hi := lowerBound(i, ExactScale), lowerBound(i+1, ExactScale)
		mid := (lo + hi) / 2
		if (mid-lo)/lo > 0.0055 {
			t.Fatalf("bucket %d [%g, %g): midpoint error %.4f", i, lo, hi, (mid-lo)/lo)
		}
	}
}

func TestPowerOfTwoValuesStartTheirBucket(t *testing.T) {
	h := NewExact(Microsecond, 0)
	for _, v := range []float64{0, 1, 2, 3, 4, 1024, 1023} {
		if err := h.Record(v); err != nil {
			t.Fatal(err)
		}
	}
	r := h.Rows()
	// rows: zero [0,1): {0}; [1,2): {1}; [2,4): {2,3}; [4,8): {4}; [512,1024): {1023}; [1024,2048): {1024}
	want := map[int]float64{0: 1, 1: 2, 2: 1, 9: 1, 10: 1}
	if r.ZeroCount != 1 {
		t.Errorf("zero row: %g, want 1 (ela= 0)", r.ZeroCount)
	}
	for row, c := range r.Counts {
		if want[r.First+row] != c {
			t.Errorf("row 2^%d: %g events, want %g", r.First+row, c, want[r.First+row])
		}
	}
	if h.Sum != 0+1+2+3+4+1024+1023 || !h.SumExact {
		t.Errorf("sum %g exact=%v", h.Sum, h.SumExact)
	}
}

func TestRecordRejectsBadValues(t *testing.T) {
	h := NewExact(Microsecond, 0)
	for _, v := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := h.Record(v); !errors.Is(err, ErrBadValue) {
			t.Errorf("Record(%g) = %v, want ErrBadValue", v, err)
		}
	}
	if h.Count() != 0 {
		t.Errorf("bad values were counted")
	}
}

func TestUpperBoundSemantics(t *testing.T) {
	h := NewBuckets(Millisecond)
	for _, b := range []struct{ n, c float64 }{{1, 10}, {2, 20}, {4, 40}, {1024, 1}} {
		if err := h.AddBound(UpperBound, b.n, b.c); err != nil {
			t.Fatal(err)
		}
	}
	got := h.Buckets()
	want := []Bucket{{0, 1, 10, false}, {1, 2, 20, false}, {2, 4, 40, false}, {512, 1024, 1, false}}
	if len(got) != len(want) {
		t.Fatalf("buckets %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bucket %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// Estimated sum: first bucket half its bound, the others 0.75 × upper.
	wantSum := 10*0.5 + 20*0.75*2 + 40*0.75*4 + 1*0.75*1024
	if h.Sum != wantSum || h.SumExact {
		t.Errorf("sum %g exact=%v, want %g estimated", h.Sum, h.SumExact, wantSum)
	}
}

func TestLowerBoundSemantics(t *testing.T) {
	h := NewBuckets(Microsecond)
	for _, b := range []struct{ n, c float64 }{{0, 3}, {1, 1}, {64, 2}} {
		if err := h.AddBound(LowerBound, b.n, b.c); err != nil {
			t.Fatal(err)
		}
	}
	got := h.Buckets()
	want := []Bucket{{0, 1, 3, false}, {1, 2, 1, false}, {64, 128, 2, false}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bucket %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if wantSum := 3*0.5 + 1*1.5 + 2*1.5*64; h.Sum != wantSum {
		t.Errorf("sum %g, want %g (1.5 × lower bound)", h.Sum, wantSum)
	}
}

func TestAddBoundErrors(t *testing.T) {
	h := NewBuckets(Microsecond)
	if err := h.AddBound(UpperBound, 3, 1); !errors.Is(err, ErrNotPow2) {
		t.Errorf("3: %v, want ErrNotPow2", err)
	}
	if err := h.AddBound(BoundUnknown, 4, 1); err == nil {
		t.Errorf("unknown bound semantics accepted")
	}
	if err := h.AddBound(UpperBound, 4, -1); !errors.Is(err, ErrBadCount) {
		t.Errorf("negative count: %v", err)
	}
	if err := NewExact(Microsecond, 0).AddBound(UpperBound, 4, 1); !errors.Is(err, ErrNeedScale) {
		t.Errorf("fine grid: %v", err)
	}
}

func TestQuantileInterpolatesInsideBucket(t *testing.T) {
	h := NewBuckets(Microsecond)
	_ = h.AddBound(LowerBound, 8, 100) // [8, 16)
	_ = h.AddBound(LowerBound, 16, 100)
	cases := []struct{ q, want float64 }{{0, 8}, {0.25, 12}, {0.5, 16}, {0.75, 24}, {1, 32}}
	for _, c := range cases {
		if got := h.Quantile(c.q); !near(got, c.want, 1e-12) {
			t.Errorf("q%.2f = %g, want %g", c.q, got, c.want)
		}
	}
	if !math.IsNaN(NewBuckets(Microsecond).Quantile(0.5)) {
		t.Errorf("empty histogram quantile is not NaN")
	}
}

func TestQuantileOfExactDataIsWithinOnePercent(t *testing.T) {
	h := NewExact(Microsecond, 0)
	for v := 1; v <= 100000; v++ {
		_ = h.Record(float64(v))
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		if got, want := h.Quantile(q), q*100000; !near(got, want, 0.01) {
			t.Errorf("q%g = %g, want %g ±1%%", q, got, want)
		}
	}
}

func TestOpenTopIsCappedAndFlagged(t *testing.T) {
	h := NewBuckets(Millisecond)
	_ = h.AddBound(UpperBound, 4, 10)
	_ = h.AddOpenTop(4, 2) // ≥ 4 ms, no upper bound
	b := h.Buckets()
	top := b[len(b)-1]
	if top.Lower != 4 || top.Upper != 8 || !top.Capped || !h.TopOpen {
		t.Errorf("top bucket %+v, want [4, 8) capped", top)
	}
	if want := 10*3.0 + 2*6.0; h.Sum != want {
		t.Errorf("sum %g, want %g", h.Sum, want)
	}
	if q := h.Quantile(1); q != 8 {
		t.Errorf("max quantile %g, want capped 8", q)
	}
}

func TestSubDeltaAndReset(t *testing.T) {
	a := NewBuckets(Millisecond)
	_ = a.AddBound(UpperBound, 1, 100)
	_ = a.AddBound(UpperBound, 8, 10)
	b := a.Clone()
	_ = b.AddBound(UpperBound, 8, 5)
	_ = b.AddBound(UpperBound, 64, 1) // a bucket the first snapshot lacked
	d, reset, err := b.Sub(a)
	if err != nil || reset {
		t.Fatalf("Sub: reset=%v err=%v", reset, err)
	}
	if d.Count() != 6 || d.countAt(2) != 5 || d.countAt(5) != 1 {
		t.Errorf("delta %+v", d)
	}
	if want := 5*6.0 + 1*48.0; d.Sum != want {
		t.Errorf("delta sum %g, want %g", d.Sum, want)
	}
	// A restart: counters smaller than before.
	c := NewBuckets(Millisecond)
	_ = c.AddBound(UpperBound, 1, 3)
	if _, reset, _ := c.Sub(b); !reset {
		t.Errorf("counter going backwards not seen as a reset")
	}
}

func TestMergeSameGridBothOrders(t *testing.T) {
	a := NewBuckets(Microsecond)
	_ = a.AddBound(UpperBound, 256, 3)
	b := NewExact(Microsecond, 0)
	_ = b.Record(700)
	_ = b.Record(0)
	for _, order := range [][2]*Histogram{{a, b}, {b, a}} {
		x, y := order[0].Clone(), order[1]
		before := y.Clone()
		x.Merge(y)
		if x.Count() != 5 {
			t.Errorf("merged count %g", x.Count())
		}
		if x.SumExact {
			t.Errorf("exact + estimated gave an exact sum")
		}
		if x.Scale != 0 {
			t.Errorf("merge kept scale %d, want the coarser 0", x.Scale)
		}
		if want := 3*192.0 + 700; x.Sum != want {
			t.Errorf("sum %g, want %g", x.Sum, want)
		}
		if y.Count() != before.Count() || y.Scale != before.Scale {
			t.Errorf("Merge changed its argument")
		}
	}
}

func TestMergeIntoEmptyAdoptsGrid(t *testing.T) {
	var total Histogram
	e := NewExact(Microsecond, 0)
	_ = e.Record(5)
	total.Merge(e)
	if total.Scale != ExactScale || !total.SumExact || total.Count() != 1 {
		t.Errorf("merge into empty: %+v", total)
	}
}

func TestMergeRaisesZeroEdge(t *testing.T) {
	a := NewExact(Microsecond, 0)
	_ = a.Record(1.5)
	b := NewExact(Microsecond, 2) // zero bucket [0, 4)
	_ = b.Record(3)
	a.Merge(b)
	if a.ZeroPow != 2 || a.ZeroCount != 2 {
		t.Errorf("zero edge 2^%d, zero count %g; want 2^2 and 2", a.ZeroPow, a.ZeroCount)
	}
}

func TestRebinMillisecondsToMicroseconds(t *testing.T) {
	h := NewBuckets(Millisecond)
	_ = h.AddBound(UpperBound, 2, 1000) // [1, 2) ms = [1000, 2000) µs
	r := Rebin(h, Microsecond, 0)
	// [1000,1024) and [1024,2000): log-width shares of the bucket.
	lowShare := math.Log(1024.0/1000) / math.Log(2)
	if got := r.countAt(9); !near(got, 1000*lowShare, 1e-9) {
		t.Errorf("[512,1024) µs got %g, want %g", got, 1000*lowShare)
	}
	if got := r.countAt(10); !near(got, 1000*(1-lowShare), 1e-9) {
		t.Errorf("[1024,2048) µs got %g", got)
	}
	if !near(r.Count(), 1000, 1e-12) || r.Sum != h.Sum*1000 {
		t.Errorf("rebin lost events or time: count %g sum %g", r.Count(), r.Sum)
	}
	// The [0, 1 ms) zero bucket: linear, zero edge at 512 µs.
	z := NewBuckets(Millisecond)
	_ = z.AddBound(UpperBound, 1, 1000)
	rz := Rebin(z, Microsecond, 0)
	if rz.ZeroPow != 9 || !near(rz.ZeroCount, 512, 1e-9) || !near(rz.countAt(9), 488, 1e-9) {
		t.Errorf("zero bucket rebin: edge 2^%d zero %g next %g", rz.ZeroPow, rz.ZeroCount, rz.countAt(9))
	}
}

func TestRebinToFinerScaleSplitsEvenly(t *testing.T) {
	h := NewBuckets(Microsecond)
	_ = h.AddBound(LowerBound, 16, 64)
	r := Rebin(h, Microsecond, 2)
	for i := 16; i < 20; i++ { // 2^4 at scale 2 → indexes 16..19
		if !near(r.countAt(i), 16, 1e-9) {
			t.Errorf("sub-bucket %d: %g, want 16", i, r.countAt(i))
		}
	}
}

func TestDownscaleIsExact(t *testing.T) {
	h := NewExact(Microsecond, 0)
	for v := 1.0; v < 5000; v *= 1.01 {
		_ = h.Record(v)
	}
	d := h.Downscaled(0)
	rows := h.Rows()
	for j, c := range rows.Counts {
		if d.countAt(rows.First+j) != c {
			t.Errorf("row %d: downscaled %g, rows %g", rows.First+j, d.countAt(rows.First+j), c)
		}
	}
}

func TestRowsOfExactHistogramAddUpToSum(t *testing.T) {
	h := NewExact(Microsecond, 0)
	for _, v := range []float64{0, 0, 3, 250, 9000, 9100, 65000} {
		_ = h.Record(v)
	}
	r := h.Rows()
	total := r.ZeroTime
	for _, t := range r.Times {
		total += t
	}
	if !near(total, h.Sum, 1e-12) {
		t.Errorf("row times add to %g, exact sum %g", total, h.Sum)
	}
}

func TestRowsOfOracleBucketsUseThreeQuarters(t *testing.T) {
	h := NewBuckets(Microsecond)
	_ = h.AddBound(UpperBound, 64, 2)
	r := h.Rows()
	if r.First != 5 || r.Counts[0] != 2 || r.Times[0] != 2*0.75*64 {
		t.Errorf("rows %+v", r)
	}
}

func TestValidate(t *testing.T) {
	ok := NewExact(Microsecond, 0)
	_ = ok.Record(12)
	if err := ok.Validate(); err != nil {
		t.Errorf("valid histogram: %v", err)
	}
	bad := []*Histogram{
		{Unit: 7},
		{Unit: Microsecond, Scale: 9},
		{Unit: Microsecond, Counts: []float64{-1}},
		{Unit: Microsecond, ZeroCount: math.NaN()},
		{Unit: Microsecond, ZeroPow: 3, Offset: 1, Counts: []float64{1}},
		{Unit: Microsecond, Sum: math.Inf(1)},
	}
	for i, h := range bad {
		if h.Validate() == nil {
			t.Errorf("case %d: invalid histogram accepted: %+v", i, h)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	cases := map[float64]string{0: "0", 512: "512ns", 1024: "1.02µs", 65536e3: "65.5ms", 1e6: "1ms", 131072e3: "131ms", 2.5e9: "2.5s"}
	for ns, want := range cases {
		if got := FormatDuration(ns); got != want {
			t.Errorf("FormatDuration(%g) = %q, want %q", ns, got, want)
		}
	}
}

func TestFormatLatency(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{{math.NaN(), "-"}, {math.Inf(1), "-"}, {math.Inf(-1), "-"}, {0, "0"}, {1500, "1.5µs"}, {4e9, "4s"}, {3 * 3600e9, "3h0m0s"}} {
		if got := FormatLatency(c.ns, "-"); got != c.want {
			t.Errorf("FormatLatency(%g) = %q, want %q", c.ns, got, c.want)
		}
	}
}

func TestFormatSignificant(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {0.25, "0.25"}, {0.004, "0"}, {1.005, "1"}, {9.999, "10"}, {12.34, "12.3"}, {-12.34, "-12.3"}, {456.7, "457"}, {1234, "1234"}} {
		if got := FormatSignificant(c.v); got != c.want {
			t.Errorf("FormatSignificant(%g) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestParseUnit(t *testing.T) {
	for in, want := range map[string]Unit{"millisec": Millisecond, "microsec": Microsecond, "nanosec": Nanosecond, "US": Microsecond, "µs": Microsecond} {
		if got, err := ParseUnit(in); err != nil || got != want {
			t.Errorf("ParseUnit(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseUnit("furlong"); err == nil {
		t.Error("unknown unit accepted")
	}
}

func BenchmarkRecordExact(b *testing.B) {
	h := NewExact(Microsecond, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = h.Record(float64(i%20000 + 1))
	}
}

func TestScaled(t *testing.T) {
	h := NewExact(Microsecond, 0)
	for _, v := range []float64{0.5, 100, 300} {
		_ = h.Record(v)
	}
	s := h.Scaled(0.25)
	if s.Count() != 0.75 || s.Sum != h.Sum/4 || s.Quantile(0.5) != h.Quantile(0.5) || h.Count() != 3 {
		t.Errorf("scaled: count %v sum %v p50 %v; original count %v", s.Count(), s.Sum, s.Quantile(0.5), h.Count())
	}
}

// TestBucketIndexLookupEqualsLogarithm: the table lookup gives the
// logarithm's bucket (corrected against the edges) for every scale, on
// every edge, its neighbours one ulp away, and random values.
func TestBucketIndexLookupEqualsLogarithm(t *testing.T) {
	check := func(v float64, s int) {
		if got, want := bucketIndex(v, s), bucketIndexSlow(v, s); got != want {
			t.Fatalf("scale %d, value %v: lookup gives bucket %d, logarithm %d", s, v, got, want)
		}
	}
	state := uint64(1)
	for s := 0; s <= MaxScale; s++ {
		for i := -2000; i <= 2000; i++ {
			lo := lowerBound(i, s)
			check(lo, s)
			check(math.Nextafter(lo, 0), s)
			check(math.Nextafter(lo, math.Inf(1)), s)
		}
		for range 200000 {
			state = state*6364136223846793005 + 1442695040888963407
			v := math.Float64frombits(state>>12 | 1023<<52) // [1, 2)
			check(math.Ldexp(v, int(state>>58)-32), s)
			check(float64(state>>40), s) // integer microseconds
		}
		check(5e-324, s) // subnormal
	}
}

func BenchmarkBucketIndex(b *testing.B) {
	v := 1.0
	for b.Loop() {
		v = v*1.0001 + 1
		if v > 1e9 {
			v = 1
		}
		_ = bucketIndex(v, ExactScale)
	}
}

func BenchmarkBucketIndexSlow(b *testing.B) {
	v := 1.0
	for b.Loop() {
		v = v*1.0001 + 1
		if v > 1e9 {
			v = 1
		}
		_ = bucketIndexSlow(v, ExactScale)
	}
}
