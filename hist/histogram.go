package hist

import (
	"errors"
	"fmt"
	"math"
)

// Scales: 2^Scale buckets per power of two.
const (
	// MaxScale is the finest grid (256 buckets per power of two), as in
	// Prometheus native histograms.
	MaxScale = 8
	// ExactScale is the grid used for sources that give every event's
	// duration: 64 buckets per power of two, so a bucket is 1.09 % wide and
	// its midpoint is within 0.55 % of any value in it (the layout of
	// Prometheus native schema 6 and OpenTelemetry exponential scale 6).
	ExactScale = 6
)

// BoundKind says which edge of a power-of-two bucket a source's value names.
type BoundKind int

// Bound semantics of the sources latscope reads.
const (
	BoundUnknown BoundKind = iota
	// UpperBound: value N counts waits in [N/2, N); N = 1 counts [0, 1).
	// Oracle V$EVENT_HISTOGRAM(_MICRO) WAIT_TIME_MILLI/MICRO and AWR.
	UpperBound
	// LowerBound: value N counts events in [N, 2N); N = 0 counts [0, 1).
	// DTrace quantize(), SystemTap @hist_log, bcc/bpftrace log2 histograms.
	LowerBound
)

// String returns "upper", "lower" or "unknown".
func (b BoundKind) String() string {
	switch b {
	case UpperBound:
		return "upper"
	case LowerBound:
		return "lower"
	}
	return "unknown"
}

// ParseBoundKind reads "upper" or "lower".
func ParseBoundKind(s string) (BoundKind, error) {
	switch s {
	case "upper":
		return UpperBound, nil
	case "lower":
		return LowerBound, nil
	}
	return BoundUnknown, fmt.Errorf("unknown bucket bound %q (want upper or lower)", s)
}

// Histogram counts latencies in buckets on a logarithmic grid anchored in Unit.
//
// At scale s, bucket i covers [2^(i/2^s), 2^((i+1)/2^s)) units: inclusive
// below, exclusive above, which is how Oracle's own histograms ([N/2, N)) and
// DTrace/bcc ([N, 2N)) read buckets, and right for durations truncated to
// whole units (a 10046 ela of 4 µs lasted [4, 5) µs). Prometheus and
// OpenTelemetry use the same grid with the other edge inclusive, and so, in
// fact, does TVD$XTAT although its labels say "256 ≥ duration < 512". The
// zero bucket covers [0, 2^ZeroPow) units; buckets below it never hold counts.
//
// Counts are float64 so that deltas, rebinned and merged histograms share one
// type; counts read from sources stay exact integers up to 2^53.
type Histogram struct {
	Unit      Unit
	Scale     int
	ZeroPow   int
	ZeroCount float64
	Offset    int       // bucket index of Counts[0]
	Counts    []float64 // dense counts of buckets Offset, Offset+1, ...
	// Sum is the total latency in Unit. It is exact when every event's
	// duration was known (SumExact), otherwise the sum of bucket midpoints.
	Sum      float64
	SumExact bool
	// TopOpen says the source's highest bucket had no upper bound; it is read
	// as [lower, 2·lower) and results flag it as capped.
	TopOpen bool
	// Bounds, when set, replaces the grid by explicit edges (see NewCustom):
	// Counts[i] counts [Bounds[i], Bounds[i+1]), ZeroCount [0, Bounds[0]);
	// Scale, ZeroPow and Offset are then unused (0). Clones share Bounds,
	// which is never modified.
	Bounds []float64
}

// Errors returned by histogram operations.
var (
	ErrBadValue  = errors.New("latency is negative, NaN or infinite")
	ErrNotPow2   = errors.New("bucket value is not a power of two")
	ErrBadScale  = errors.New("scale out of range")
	ErrBadUnit   = errors.New("unknown unit")
	ErrBadCount  = errors.New("count is negative, NaN or infinite")
	ErrNeedScale = errors.New("power-of-two buckets need a scale-0 histogram")
)

// NewExact returns an empty histogram for per-event durations: scale
// ExactScale, exact sum, zero bucket [0, 2^zeroPow) units.
func NewExact(unit Unit, zeroPow int) *Histogram {
	return &Histogram{Unit: unit, Scale: ExactScale, ZeroPow: zeroPow, SumExact: true}
}

// NewBuckets returns an empty scale-0 histogram for sources that give counts
// per power-of-two bucket; its sum is estimated from bucket midpoints.
func NewBuckets(unit Unit) *Histogram {
	return &Histogram{Unit: unit}
}

// edgeTables[s][k] = 2^(k/2^s) for k in [0, 2^s]: the bucket edges inside one
// power of two. lowerBound and bucketIndex both read them, so an edge always
// maps back to its own bucket despite float rounding.
var edgeTables = func() (t [MaxScale + 1][]float64) {
	for s := range t {
		n := 1 << s
		t[s] = make([]float64, n+1)
		for k := 0; k <= n; k++ {
			t[s][k] = math.Exp2(float64(k) / float64(n))
		}
		t[s][n] = 2
	}
	return t
}()

// lowerBound returns the lower edge of bucket i at scale s, in units.
func lowerBound(i, s int) float64 {
	whole := i >> s // floor division, also for negative i
	return math.Ldexp(edgeTables[s][i-whole<<s], whole)
}

// cellBits: bucketIndex looks a value's bucket up by the top s+cellBits
// bits of its mantissa. A cell (1/2^(s+2) of [1, 2)) is narrower than the
// narrowest bucket (ln 2/2^s), so it meets at most two buckets.
const cellBits = 2

// cellTables[s][c] is the bucket (within one power of two, at scale s)
// holding the lower end of mantissa cell c.
var cellTables = func() (t [MaxScale + 1][]uint16) {
	for s := 1; s <= MaxScale; s++ {
		cells := 1 << (s + cellBits)
		t[s] = make([]uint16, cells)
		sub := 0
		for c := range cells {
			m := 1 + float64(c)/float64(cells)
			for sub+1 < 1<<s && edgeTables[s][sub+1] <= m {
				sub++
			}
			t[s][c] = uint16(sub)
		}
	}
	return t
}()

// bucketIndex returns the index of the bucket holding v > 0 at scale s:
// a table lookup on the mantissa and at most one step against the exact
// edges (no logarithm: every value a parser reads goes through here).
func bucketIndex(v float64, s int) int {
	bits := math.Float64bits(v)
	biased := int(bits >> 52 & 0x7ff)
	if biased == 0 || biased == 0x7ff { // subnormal (or not finite)
		return bucketIndexSlow(v, s)
	}
	whole := biased - 1023
	if s == 0 {
		return whole
	}
	mantissa := bits & (1<<52 - 1)
	m := math.Float64frombits(1023<<52 | mantissa) // in [1, 2)
	sub := int(cellTables[s][mantissa>>(52-s-cellBits)])
	for edges := edgeTables[s]; sub+1 < 1<<s && edges[sub+1] <= m; {
		sub++
	}
	return whole<<s + sub
}

// bucketIndexSlow is bucketIndex by the logarithm, for subnormal values.
func bucketIndexSlow(v float64, s int) int {
	frac, exp := math.Frexp(v) // v = frac·2^exp, frac in [0.5, 1)
	whole := exp - 1
	if s == 0 {
		return whole
	}
	m := 2 * frac // in [1, 2)
	edges := edgeTables[s]
	n := 1 << s
	sub := int(math.Log2(m) * float64(n))
	if sub >= n {
		sub = n - 1
	}
	// Correct the logarithm's rounding against the exact edges.
	for sub > 0 && edges[sub] > m {
		sub--
	}
	for sub+1 < n && edges[sub+1] <= m {
		sub++
	}
	return whole<<s + sub
}

// zeroThreshold is the upper edge of the zero bucket in units.
func (h *Histogram) zeroThreshold() float64 {
	if h.IsCustom() {
		return h.Bounds[0]
	}
	return math.Ldexp(1, h.ZeroPow)
}

// zeroIndex is the first bucket index above the zero bucket.
func (h *Histogram) zeroIndex() int { return h.ZeroPow << h.Scale }

// Record adds one event of duration v (in units), keeping the sum exact.
func (h *Histogram) Record(v float64) error {
	return h.RecordN(v, 1)
}

// RecordN adds n events of duration v each.
func (h *Histogram) RecordN(v, n float64) error {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return ErrBadValue
	}
	if n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return ErrBadCount
	}
	h.addValue(v, n)
	h.Sum += v * n
	return nil
}

// AddBound adds count events to the power-of-two bucket a source names by
// value n with the given bound semantics, and adds the bucket midpoint times
// count to the estimated sum. The histogram must be scale 0.
func (h *Histogram) AddBound(kind BoundKind, n, count float64) error {
	if h.IsCustom() {
		return ErrCustom
	}
	if h.Scale != 0 {
		return ErrNeedScale
	}
	if count < 0 || math.IsNaN(count) || math.IsInf(count, 0) {
		return ErrBadCount
	}
	if n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return ErrBadValue
	}
	h.SumExact = h.SumExact && count == 0
	if kind == LowerBound && n == 0 {
		h.ZeroCount += count
		h.Sum += count * h.zeroThreshold() / 2
		return nil
	}
	frac, exp := math.Frexp(n)
	if frac != 0.5 {
		return fmt.Errorf("%w: %g", ErrNotPow2, n)
	}
	k := exp - 1 // n = 2^k
	switch kind {
	case UpperBound:
		k-- // N names [N/2, N)
	case LowerBound:
	default:
		return errors.New("bucket bound semantics unknown: say --bound upper or --bound lower")
	}
	if k < h.ZeroPow {
		h.ZeroCount += count
		h.Sum += count * h.zeroThreshold() / 2
		return nil
	}
	h.addAt(k, count)
	h.Sum += count * 1.5 * math.Ldexp(1, k)
	return nil
}

// AddOpenTop adds count events to an open-ended top bucket that starts at
// lower (in units): it is read as [lower, 2·lower) and flagged.
func (h *Histogram) AddOpenTop(lower, count float64) error {
	if h.IsCustom() {
		return ErrCustom
	}
	if lower <= 0 || math.IsNaN(lower) || math.IsInf(lower, 0) {
		return ErrBadValue
	}
	if count < 0 || math.IsNaN(count) || math.IsInf(count, 0) {
		return ErrBadCount
	}
	h.TopOpen = true
	h.SumExact = h.SumExact && count == 0
	if lower < h.zeroThreshold() {
		h.ZeroCount += count
	} else {
		h.addAt(bucketIndex(lower, h.Scale), count)
	}
	h.Sum += count * 1.5 * lower
	return nil
}

// addAt adds c to bucket i, growing the dense slice as needed. Growth
// leaves slack on the side it grows, so that recording values in random
// order does not copy the slice for every new lower bucket.
func (h *Histogram) addAt(i int, c float64) {
	if h.IsCustom() {
		if i < 0 {
			h.ZeroCount += c
		} else if i < len(h.Counts) {
			h.Counts[i] += c
		}
		return
	}
	if i < h.zeroIndex() {
		h.ZeroCount += c
		return
	}
	if len(h.Counts) == 0 {
		h.Offset = i
		h.Counts = append(h.Counts[:0], c)
		return
	}
	if i < h.Offset {
		slack := max(len(h.Counts)/2, 8)
		first := max(i-slack, h.zeroIndex())
		grow := h.Offset - first
		counts := make([]float64, len(h.Counts)+grow)
		copy(counts[grow:], h.Counts)
		h.Counts, h.Offset = counts, first
	} else if j := i - h.Offset; j >= len(h.Counts) {
		h.Counts = append(h.Counts, make([]float64, j-len(h.Counts)+1)...)
	}
	h.Counts[i-h.Offset] += c
}

// Count returns the number of events.
func (h *Histogram) Count() float64 {
	n := h.ZeroCount
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Empty reports whether the histogram holds no events.
func (h *Histogram) Empty() bool { return h.Count() == 0 }

// Mean returns the mean latency in units, NaN when empty.
func (h *Histogram) Mean() float64 {
	n := h.Count()
	if n == 0 {
		return math.NaN()
	}
	return h.Sum / n
}

// Clone returns a deep copy.
func (h *Histogram) Clone() *Histogram {
	c := *h
	c.Counts = append([]float64(nil), h.Counts...)
	return &c
}

// Validate checks the invariants every source's output must keep.
func (h *Histogram) Validate() error {
	if !h.Unit.Valid() {
		return fmt.Errorf("%w: %d", ErrBadUnit, int64(h.Unit))
	}
	if h.IsCustom() {
		if err := checkBounds(h.Bounds); err != nil {
			return err
		}
		if len(h.Counts) != len(h.Bounds)-1 || h.Offset != 0 || h.Scale != 0 {
			return fmt.Errorf("custom histogram with %d edges has %d counts (offset %d, scale %d)", len(h.Bounds), len(h.Counts), h.Offset, h.Scale)
		}
	}
	if h.Scale < 0 || h.Scale > MaxScale {
		return fmt.Errorf("%w: %d", ErrBadScale, h.Scale)
	}
	if bad(h.ZeroCount) {
		return fmt.Errorf("zero bucket: %w", ErrBadCount)
	}
	for j, c := range h.Counts {
		if bad(c) {
			return fmt.Errorf("bucket %d: %w", h.Offset+j, ErrBadCount)
		}
	}
	if !h.IsCustom() && len(h.Counts) > 0 && h.Offset < h.zeroIndex() {
		return fmt.Errorf("bucket %d lies below the zero bucket's edge 2^%d", h.Offset, h.ZeroPow)
	}
	if math.IsNaN(h.Sum) || math.IsInf(h.Sum, 0) {
		return fmt.Errorf("sum is %g", h.Sum)
	}
	return nil
}

func bad(c float64) bool { return c < 0 || math.IsNaN(c) || math.IsInf(c, 0) }

// Bucket is one non-empty bucket in units: [Lower, Upper).
type Bucket struct {
	Lower, Upper float64
	Count        float64
	// Capped says Upper was set to 2·Lower because the source's top bucket
	// had no upper bound.
	Capped bool
}

// Mid returns the bucket midpoint, the value estimated sums use.
func (b Bucket) Mid() float64 { return (b.Lower + b.Upper) / 2 }

// Buckets returns the non-empty buckets in ascending order, the zero bucket
// first.
func (h *Histogram) Buckets() []Bucket {
	var out []Bucket
	h.eachBucket(func(b Bucket) { out = append(out, b) })
	return out
}

// eachBucket calls f for every non-empty bucket in ascending order.
func (h *Histogram) eachBucket(f func(Bucket)) {
	top := len(h.Counts) - 1
	for top >= 0 && h.Counts[top] == 0 {
		top--
	}
	if h.ZeroCount > 0 {
		b := Bucket{Lower: 0, Upper: h.zeroThreshold(), Count: h.ZeroCount}
		// The zero bucket is the open top only on a grid with no other
		// counts; custom edges put the open top in their last bucket.
		if top < 0 && h.TopOpen && !h.IsCustom() {
			b.Upper, b.Capped = 2*b.Upper, true
		}
		f(b)
	}
	for j := 0; j <= top; j++ {
		c := h.Counts[j]
		if c == 0 {
			continue
		}
		var b Bucket
		if h.IsCustom() {
			b.Lower, b.Upper = h.customEdges(j)
			b.Count, b.Capped = c, math.IsInf(h.Bounds[j+1], 1)
			f(b)
			continue
		}
		i := h.Offset + j
		b = Bucket{Lower: lowerBound(i, h.Scale), Upper: lowerBound(i+1, h.Scale), Count: c}
		if j == top && h.TopOpen {
			b.Upper, b.Capped = 2*b.Lower, true
		}
		f(b)
	}
}

// Quantile returns the latency (in units) below which a fraction q of the
// events fall, interpolating linearly inside the bucket that holds it.
// It returns NaN for an empty histogram.
func (h *Histogram) Quantile(q float64) float64 {
	n := h.Count()
	if n == 0 || math.IsNaN(q) {
		return math.NaN()
	}
	q = math.Max(0, math.Min(1, q))
	target := q * n
	cum := 0.0
	result := math.NaN()
	done := false
	h.eachBucket(func(b Bucket) {
		if done {
			return
		}
		if cum+b.Count >= target {
			result = b.Lower + (b.Upper-b.Lower)*(target-cum)/b.Count
			done = true
			return
		}
		cum += b.Count
		result = b.Upper
	})
	return result
}
