package hist

import (
	"math"
	"testing"
)

// TestRowsAtSplitsOnlyExact: per-event durations split into quarter
// octaves at 2^(k+i/4); power-of-two buckets and custom edges cannot be
// split and fold into octave rows (Scale 0), as Rows does.
func TestRowsAtSplitsOnlyExact(t *testing.T) {
	exact := NewExact(Microsecond, 0)
	for _, v := range []float64{100, 120, 120, 0.5} {
		if err := exact.Record(v); err != nil {
			t.Fatal(err)
		}
	}
	r := exact.RowsAt(2)
	if r.Scale != 2 || r.First != 26 || len(r.Counts) != 2 || r.Counts[0] != 1 || r.Counts[1] != 2 || r.ZeroCount != 1 {
		t.Fatalf("quarter rows %+v", r)
	}
	if lo := RowLower(26, 2); lo != 64*RowLower(2, 2) || RowLower(28, 2) != 128 {
		t.Errorf("row edges 2^(26/4) = %g, 2^7 = %g", lo, RowLower(28, 2))
	}
	if sum := r.ZeroTime + r.Times[0] + r.Times[1]; math.Abs(sum-exact.Sum) > 1e-12*exact.Sum {
		t.Errorf("row times sum to %g, the exact sum is %g", sum, exact.Sum)
	}
	buckets := NewBuckets(Microsecond)
	if err := buckets.AddBound(UpperBound, 128, 3); err != nil {
		t.Fatal(err)
	}
	custom, err := NewCustom(Microsecond, []float64{20, 40, 60})
	if err != nil {
		t.Fatal(err)
	}
	if err := custom.AddCustom(1, 2); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]*Histogram{"buckets": buckets, "custom": custom} {
		if h.CanSplitRows(1) {
			t.Errorf("%s: can split rows", name)
		}
		got, want := h.RowsAt(3), h.Rows()
		if got.Scale != 0 || got.First != want.First || len(got.Counts) != len(want.Counts) || got.Counts[0] != want.Counts[0] {
			t.Errorf("%s: rows at scale 3 %+v, want octave rows %+v", name, got, want)
		}
	}
}
