package fio

import (
	"math"
	"math/bits"
)

// fio's latency histogram (stat.h, fio 3.x): FIO_IO_U_PLAT_BITS = 6 gives 64
// linear sub-buckets per power of two, FIO_IO_U_PLAT_GROUP_NR = 29 groups,
// so 1856 bins in nanoseconds. Bins 0..127 are 1 ns wide; from bin 128 on,
// group g = idx>>6 has bins 2^(g-1) ns wide starting at 2^(g+5) ns. Values
// of 2^34 ns (17.2 s) and more are counted in the last bin.
const (
	platBits  = 6
	platVal   = 1 << platBits // sub-buckets per group
	groupNR   = 29
	platNR    = groupNR * platVal // 1856 bins
	maxCoarse = 6                 // log_hist_coarseness range 0..6
)

// binLower returns the lower edge of fio bin idx in ns, for idx in
// [0, platNR]; binLower(platNR) = 2^34 is the top edge of the last bin.
// It is the range logic of fio's plat_idx_to_val with edge 0.
func binLower(idx int) uint64 {
	if idx < platVal<<1 {
		return uint64(idx)
	}
	errorBits := uint(idx>>platBits) - 1
	base := uint64(1) << (errorBits + platBits)
	k := uint64(idx % platVal)
	return base + k<<errorBits
}

// binValue returns the value fio prints for bin idx (plat_idx_to_val): the
// bin itself below 128, else the bin's midpoint, an integer there.
func binValue(idx int) uint64 {
	if idx < platVal<<1 {
		return uint64(idx)
	}
	errorBits := uint(idx>>platBits) - 1
	return binLower(idx) + uint64(1)<<(errorBits-1)
}

// binIndex returns the bin fio counts a latency of v ns in
// (plat_val_to_idx).
func binIndex(v uint64) int {
	if v == 0 {
		return 0
	}
	msb := 63 - bits.LeadingZeros64(v)
	if msb <= platBits {
		return int(v)
	}
	errorBits := uint(msb - platBits)
	base := (int(errorBits) + 1) << platBits
	offset := int((platVal - 1) & (v >> errorBits))
	return min(base+offset, platNR-1)
}

// binBounds returns the custom histogram edges of fio's bins merged 2^c at
// a time (log_hist_coarseness c; 0 for the JSON bins): coarse bin 0 is the
// zero bucket [0, 2^c) ns, coarse bin m ≥ 1 is custom bucket m−1 covering
// [binLower(m·2^c), binLower((m+1)·2^c)). The top edge is 2^34 ns: fio puts
// longer latencies in the last bin too, which latscope reads as the last
// bucket's range.
func binBounds(coarseness int) []float64 {
	stride := 1 << coarseness
	n := platNR / stride
	bounds := make([]float64, n)
	for m := 1; m <= n; m++ {
		bounds[m-1] = float64(binLower(m * stride))
	}
	return bounds
}

// boundsCache holds binBounds per coarseness; hist.NewCustom keeps the slice
// and never modifies it, so every histogram of one layout shares it.
type boundsCache [maxCoarse + 1][]float64

func (c *boundsCache) get(coarseness int) []float64 {
	if c[coarseness] == nil {
		c[coarseness] = binBounds(coarseness)
	}
	return c[coarseness]
}

// coarsenessOf returns the coarseness whose bin count is n, or −1.
func coarsenessOf(n int) int {
	for c := 0; c <= maxCoarse; c++ {
		if platNR>>c == n {
			return c
		}
	}
	return -1
}

// topEdgeNs is the upper edge of fio's last bin.
var topEdgeNs = math.Ldexp(1, groupNR+platBits-1)
