package fio

import (
	"math"
	"testing"
)

// Every bin maps back to itself from the value fio prints for it, and the
// value lies in the bin's edges.
func TestBinsRoundTrip(t *testing.T) {
	for i := 0; i < platNR; i++ {
		lo, hi, v := binLower(i), binLower(i+1), binValue(i)
		if !(lo <= v && v < hi) {
			t.Fatalf("bin %d: value %d outside [%d, %d)", i, v, lo, hi)
		}
		if got := binIndex(v); got != i {
			t.Fatalf("bin %d: value %d maps to bin %d", i, v, got)
		}
		if got := binIndex(lo); got != i {
			t.Fatalf("bin %d: lower edge %d maps to bin %d", i, lo, got)
		}
		if got := binIndex(hi - 1); got != i {
			t.Fatalf("bin %d: %d (upper edge − 1) maps to bin %d", i, hi-1, got)
		}
	}
}

// Values from fio's stat.h comments and HOWTO: bins are 1 ns wide below
// 128 ns, then 64 per power of two; the last bin ends at 2^34 ns and takes
// everything above.
func TestBinLayout(t *testing.T) {
	for _, tc := range []struct {
		idx       int
		lo, value uint64
	}{
		{0, 0, 0}, {1, 1, 1}, {127, 127, 127},
		{128, 128, 129}, // group 2: 2 ns wide
		{191, 254, 255},
		{192, 256, 258},                      // group 3: 4 ns wide
		{1855, 1<<34 - 1<<27, 1<<34 - 1<<26}, // last bin, 2^27 ns wide
	} {
		if lo, v := binLower(tc.idx), binValue(tc.idx); lo != tc.lo || v != tc.value {
			t.Errorf("bin %d: lower %d value %d, want %d %d", tc.idx, lo, v, tc.lo, tc.value)
		}
	}
	if got := binLower(platNR); got != 1<<34 {
		t.Errorf("top edge %d, want 2^34", got)
	}
	for _, v := range []uint64{1 << 34, 1 << 40, math.MaxUint64} {
		if got := binIndex(v); got != platNR-1 {
			t.Errorf("%d ns in bin %d, want the last", v, got)
		}
	}
	// The HOWTO's json+ example keys are bin values.
	for _, v := range []uint64{87552, 89600, 94720, 96768, 97792, 99840, 100864, 103936, 104960, 105984, 107008} {
		if binValue(binIndex(v)) != v {
			t.Errorf("HOWTO bin key %d is not a bin value (bin %d prints %d)", v, binIndex(v), binValue(binIndex(v)))
		}
	}
	// Relative bin width stays within 1/64 from 128 ns on.
	for i := 128; i < platNR; i++ {
		if w := float64(binLower(i+1) - binLower(i)); w/float64(binLower(i)) > 1.0/64 {
			t.Fatalf("bin %d is %.4f wide relative to its lower edge", i, w/float64(binLower(i)))
		}
	}
}

// Coarse bounds: 1856 >> c bins, the zero bucket [0, 2^c), the top 2^34.
func TestBinBounds(t *testing.T) {
	for c := 0; c <= maxCoarse; c++ {
		b := binBounds(c)
		if len(b) != platNR>>c || b[0] != float64(uint64(1)<<c) || b[len(b)-1] != topEdgeNs {
			t.Errorf("coarseness %d: %d edges from %g to %g", c, len(b), b[0], b[len(b)-1])
		}
		if coarsenessOf(platNR>>c) != c {
			t.Errorf("coarsenessOf(%d) = %d", platNR>>c, coarsenessOf(platNR>>c))
		}
	}
	if coarsenessOf(1216) != -1 {
		t.Error("1216 bins (the HOWTO's outdated figure) accepted")
	}
}
