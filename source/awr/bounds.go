package awr

import (
	"errors"
	"fmt"
	"math"

	"github.com/latscope/latscope/hist"
)

// Oracle prints a bucket by its exclusive upper bound N: it counts waits in
// [N/2, N) (the lowest bucket present: [0, N)). Bounds are powers of two in
// the unit of the column (WAIT_TIME_MILLI: ms, WAIT_TIME_MICRO: µs); 19c's
// sub-millisecond AWR buckets go down to 2^-10 ms, printed rounded
// (0.000976563), hence a tolerance. The catch-all top bucket has a sentinel
// bound instead: a huge one (≈1.8E16 = 2^54 ms in 19c AWR) or 2^k−1
// (4294967295 in V$EVENT_HISTOGRAM_MICRO).
const (
	// powTolerance is how far from a power of two a printed bound may be:
	// 2^-16 relative covers bounds printed with 6 significant digits.
	powTolerance = 1.0 / (1 << 16)
	// hugeBound: a bound of 2^40 units or more (35 years in ms, 12 days in
	// µs, beyond any documented bucket) is the open top.
	hugeBound = 1 << 40
	// minPow, maxPow limit regular bounds to what Oracle can print.
	minPow = -30
	maxPow = 39
)

// topFloorPow is the documented last finite bucket bound per unit: V$EVENT_
// HISTOGRAM counts < 1 … < 2^22 ms and ≥ 2^22 ms, the _MICRO view < 1 … <
// 2^32 µs and ≥ 2^32 µs. The open top bucket is read as [P, 2P) with P the
// larger of this and the largest finite bound present, so that one long wait
// in a histogram whose highest finite row is 64 ms is not placed at 64 ms.
func topFloorPow(u hist.Unit) int {
	if u == hist.Microsecond {
		return 32
	}
	return 22
}

// bucketRef is a bucket as a row names it.
type bucketRef struct {
	top bool
	pow int // regular: the bound is 2^pow units
}

var errBadBound = errors.New("wait time bound is not positive")

// classifyBound reads a WAIT_TIME_MILLI/MICRO value.
func classifyBound(v float64) (bucketRef, error) {
	if !(v > 0) || math.IsInf(v, 0) {
		return bucketRef{}, fmt.Errorf("%w: %g", errBadBound, v)
	}
	if v >= hugeBound || isAllOnes(v) {
		return bucketRef{top: true}, nil
	}
	pow := int(math.Round(math.Log2(v)))
	if math.Abs(v/math.Ldexp(1, pow)-1) > powTolerance {
		return bucketRef{}, fmt.Errorf("wait time bound %g is not a power of two (Oracle buckets are < 1, < 2, < 4, ...)", v)
	}
	if pow < minPow || pow > maxPow {
		return bucketRef{}, fmt.Errorf("wait time bound %g is out of range (2^%d..2^%d)", v, minPow, maxPow)
	}
	return bucketRef{pow: pow}, nil
}

// isAllOnes says v = 2^k − 1 for k ≥ 31: a "no upper bound" sentinel such as
// 4294967295.
func isAllOnes(v float64) bool {
	if v < (1<<31)-1 || v != math.Trunc(v) {
		return false
	}
	frac, _ := math.Frexp(v + 1)
	return frac == 0.5
}

// String returns the bound as Oracle would name it, for messages.
func (b bucketRef) String() string {
	if b.top {
		return "top (no upper bound)"
	}
	return fmt.Sprintf("%g", math.Ldexp(1, b.pow))
}
