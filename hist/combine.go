package hist

import (
	"fmt"
	"math"
)

// Sub returns h − prev for two cumulative snapshots of the same counter set.
// When any bucket went backwards (an instance restart, a counter reset) it
// returns reset = true and no delta: the caller starts a new baseline at h.
func (h *Histogram) Sub(prev *Histogram) (delta *Histogram, reset bool, err error) {
	if h.IsCustom() || prev.IsCustom() {
		return h.subCustom(prev)
	}
	if h.Unit != prev.Unit || h.Scale != prev.Scale {
		return nil, false, fmt.Errorf("cannot subtract histograms with different grids (%s scale %d, %s scale %d)",
			h.Unit, h.Scale, prev.Unit, prev.Scale)
	}
	p := prev
	if prev.ZeroPow != h.ZeroPow {
		p = prev.Clone()
		if h.ZeroPow > p.ZeroPow {
			p.raiseZero(h.ZeroPow)
		}
	}
	d := &Histogram{Unit: h.Unit, Scale: h.Scale, ZeroPow: h.ZeroPow, SumExact: h.SumExact, TopOpen: h.TopOpen}
	d.ZeroCount = countDelta(h.ZeroCount, p.ZeroCount)
	if d.ZeroCount < 0 {
		return nil, true, nil
	}
	lo, hi := spanOf(h, p)
	for i := lo; i < hi; i++ {
		c := countDelta(h.countAt(i), p.countAt(i))
		if c < 0 {
			return nil, true, nil
		}
		if c > 0 {
			d.addAt(i, c)
		}
	}
	d.Sum = h.Sum - p.Sum
	if d.Sum < 0 {
		// Only float rounding can do this once every bucket grew.
		d.Sum = 0
	}
	return d, false, nil
}

// countDelta is cur − prev for one bucket. Fractional counts (from rebinned
// or merged histograms written out and read back) carry rounding noise: a
// difference within 1e-9 of the counts is no change, neither an event nor a
// counter going backwards. Whole counts are exact.
func countDelta(cur, prev float64) float64 {
	d := cur - prev
	if d != 0 && (cur != math.Trunc(cur) || prev != math.Trunc(prev)) && math.Abs(d) <= 1e-9*max(1, math.Abs(prev)) {
		return 0
	}
	return d
}

// EmptyLike returns an empty histogram on h's layout (unit, grid or custom
// edges): the baseline of a counter set seen for the first time.
func (h *Histogram) EmptyLike() *Histogram {
	e := &Histogram{Unit: h.Unit, Scale: h.Scale, ZeroPow: h.ZeroPow, Bounds: h.Bounds, SumExact: h.SumExact}
	if h.IsCustom() {
		e.Counts = make([]float64, len(h.Counts))
	}
	return e
}

// subCustom subtracts snapshots with the same custom edges.
func (h *Histogram) subCustom(prev *Histogram) (*Histogram, bool, error) {
	if !sameBounds(h, prev) {
		return nil, false, fmt.Errorf("cannot subtract histograms with different bucket edges")
	}
	d := &Histogram{Unit: h.Unit, Bounds: h.Bounds, Counts: make([]float64, len(h.Counts)), SumExact: h.SumExact, TopOpen: h.TopOpen}
	d.ZeroCount = countDelta(h.ZeroCount, prev.ZeroCount)
	if d.ZeroCount < 0 {
		return nil, true, nil
	}
	for i := range h.Counts {
		if d.Counts[i] = countDelta(h.Counts[i], prev.Counts[i]); d.Counts[i] < 0 {
			return nil, true, nil
		}
	}
	d.Sum = max(h.Sum-prev.Sum, 0)
	return d, false, nil
}

// spanOf returns the bucket index range [lo, hi) covering both histograms.
func spanOf(a, b *Histogram) (lo, hi int) {
	lo, hi = math.MaxInt, math.MinInt
	for _, h := range []*Histogram{a, b} {
		if len(h.Counts) == 0 {
			continue
		}
		lo = min(lo, h.Offset)
		hi = max(hi, h.Offset+len(h.Counts))
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

// countAt returns the count of bucket i (0 outside the stored range).
func (h *Histogram) countAt(i int) float64 {
	j := i - h.Offset
	if j < 0 || j >= len(h.Counts) {
		return 0
	}
	return h.Counts[j]
}

// Merge adds o into h. Histograms in different units are rebinned to h's
// unit; at different scales the finer one is coarsened; the higher zero
// bucket edge wins. The sum stays exact only if both were exact.
func (h *Histogram) Merge(o *Histogram) {
	if o.Count() == 0 && o.Sum == 0 {
		h.TopOpen = h.TopOpen || o.TopOpen
		return
	}
	if h.Count() == 0 && h.Sum == 0 && len(h.Counts) == 0 {
		// Adopt o's grid so that merging into an empty histogram is exact.
		unit := h.Unit
		*h = *o.Clone()
		if unit.Valid() && unit != o.Unit {
			*h = *Rebin(h, unit, h.Scale)
		}
		return
	}
	if h.IsCustom() || o.IsCustom() {
		h.mergeCustom(o)
		return
	}
	if o.Unit != h.Unit {
		o = Rebin(o, h.Unit, h.Scale)
	}
	if o.Scale > h.Scale {
		o = o.Clone()
		o.downscale(h.Scale)
	} else if o.Scale < h.Scale {
		h.downscale(o.Scale)
	}
	if o.ZeroPow > h.ZeroPow {
		h.raiseZero(o.ZeroPow)
	} else if o.ZeroPow < h.ZeroPow {
		o = o.Clone()
		o.raiseZero(h.ZeroPow)
	}
	h.addLaidOut(o)
}

// mergeCustom adds o when either side has custom edges: o is moved onto h's
// layout unless the edges are the same.
func (h *Histogram) mergeCustom(o *Histogram) {
	o = RebinLike(o, h)
	h.addLaidOut(o)
}

// addLaidOut adds o, already on h's layout (scale, zero bucket or edges).
func (h *Histogram) addLaidOut(o *Histogram) {
	h.ZeroCount += o.ZeroCount
	for j, c := range o.Counts {
		if c != 0 {
			h.addAt(o.Offset+j, c)
		}
	}
	h.Sum += o.Sum
	h.SumExact = h.SumExact && o.SumExact
	h.TopOpen = h.TopOpen || o.TopOpen
}

// downscale coarsens h to scale s ≤ h.Scale; it is exact because coarse
// bucket edges are fine bucket edges.
func (h *Histogram) downscale(s int) {
	if h.IsCustom() {
		return
	}
	if s >= h.Scale || len(h.Counts) == 0 {
		h.Scale = min(h.Scale, s)
		return
	}
	shift := h.Scale - s
	first := h.Offset >> shift
	last := (h.Offset + len(h.Counts) - 1) >> shift
	counts := make([]float64, last-first+1)
	for j, c := range h.Counts {
		counts[((h.Offset+j)>>shift)-first] += c
	}
	h.Scale, h.Offset, h.Counts = s, first, counts
}

// Downscaled returns a copy of h coarsened to scale s.
func (h *Histogram) Downscaled(s int) *Histogram {
	c := h.Clone()
	c.downscale(s)
	return c
}

// raiseZero moves the zero bucket's edge up to 2^pow units, folding the
// buckets below it into the zero count.
func (h *Histogram) raiseZero(pow int) {
	if h.IsCustom() || pow <= h.ZeroPow {
		return
	}
	h.ZeroPow = pow
	edge := h.zeroIndex()
	j := 0
	for ; j < len(h.Counts) && h.Offset+j < edge; j++ {
		h.ZeroCount += h.Counts[j]
	}
	h.Counts = h.Counts[j:]
	h.Offset += j
	if len(h.Counts) == 0 {
		h.Counts, h.Offset = nil, 0
	}
}

// Rebin moves h onto the grid of another unit and scale. A bucket that
// straddles target edges is split in proportion to the log-width of each
// overlap (latencies spread evenly in log space); the zero bucket [0, T) is
// split linearly. The target zero bucket ends at the largest power of two of
// the new unit not above h's zero edge, so nothing is pushed below where it
// was. The sum and its exactness are kept.
func Rebin(h *Histogram, unit Unit, scale int) *Histogram {
	if !h.IsCustom() && unit == h.Unit && scale <= h.Scale {
		return h.Downscaled(scale)
	}
	ratio := float64(h.Unit) / float64(unit) // source units → target units
	srcZero := h.zeroThreshold() * ratio
	if srcZero <= 0 { // custom edges starting at 0: no zero bucket to keep
		srcZero = math.Ldexp(1, -30)
		if h.IsCustom() && len(h.Bounds) > 1 && !math.IsInf(h.Bounds[1], 1) {
			srcZero = h.Bounds[1] * ratio
		}
	}
	zp := int(math.Floor(math.Log2(srcZero) + 1e-9))
	out := &Histogram{Unit: unit, Scale: scale, ZeroPow: zp, Sum: h.Sum * ratio, SumExact: h.SumExact, TopOpen: h.TopOpen}
	h.eachBucket(func(b Bucket) {
		lo, hi := b.Lower*ratio, b.Upper*ratio
		out.spread(lo, hi, b.Count, b.Lower == 0)
	})
	return out
}

// spread distributes count over [lo, hi) in target units: linearly when the
// range starts at zero, by log-width otherwise.
func (h *Histogram) spread(lo, hi, count float64, linear bool) {
	span, logSpan := hi-lo, math.Log(hi/lo)
	width := func(a, b float64) float64 {
		if linear {
			return (b - a) / span
		}
		return math.Log(b/a) / logSpan
	}
	if hi <= lo {
		h.addValue(lo, count)
		return
	}
	z := h.zeroThreshold()
	if lo < z {
		top := math.Min(hi, z)
		if linear || lo > 0 {
			h.ZeroCount += count * width(lo, top)
		}
		if hi <= z {
			return
		}
		lo = z
	}
	for i := h.indexOf(lo); ; i++ {
		bl, bu := h.edgesOf(i)
		last := h.IsCustom() && i == len(h.Counts)-1
		if last {
			bu = math.Inf(1) // a finite top edge: what lies above goes here too
		}
		a, b := math.Max(lo, bl), math.Min(hi, bu)
		if b > a {
			h.addAt(i, count*width(a, b))
		}
		if bu >= hi || last {
			return
		}
	}
}

// indexOf returns the bucket holding v at or above the zero edge.
func (h *Histogram) indexOf(v float64) int {
	if h.IsCustom() {
		return h.customIndex(v)
	}
	return bucketIndex(v, h.Scale)
}

// edgesOf returns bucket i's edges (an open custom top is +Inf).
func (h *Histogram) edgesOf(i int) (lo, hi float64) {
	if h.IsCustom() {
		return h.Bounds[i], h.Bounds[i+1]
	}
	return lowerBound(i, h.Scale), lowerBound(i+1, h.Scale)
}

// addValue adds count at value v without touching the sum.
func (h *Histogram) addValue(v, count float64) {
	if v < h.zeroThreshold() {
		h.ZeroCount += count
		return
	}
	h.addAt(h.indexOf(v), count)
}

// Rows is a histogram folded into heat-map rows, 2^Scale rows per power of
// two: row First+j covers [2^((First+j)/2^Scale), 2^((First+j+1)/2^Scale))
// units, below them the zero row [0, 2^ZeroPow). Scale 0 gives the
// power-of-two rows heat maps draw by default.
type Rows struct {
	Unit      Unit
	Scale     int
	ZeroPow   int
	ZeroCount float64
	ZeroTime  float64 // latency in units spent in the zero row
	First     int
	Counts    []float64
	Times     []float64 // latency in units spent per row
}

// RowLower returns the lower edge in units of row r at row scale s (2^s rows
// per power of two): 2^(r/2^s), from the same table as bucket edges, so a
// row edge is exactly the edge of the finer buckets it holds.
func RowLower(r, s int) float64 { return lowerBound(r, s) }

// Rows folds h into power-of-two rows with the time spent in each. Row times
// come from bucket midpoints; for exact histograms they are scaled to add up
// to the exact sum, so averages derived from rows stay exact.
func (h *Histogram) Rows() Rows { return h.RowsAt(0) }

// CanSplitRows reports whether h's buckets nest in rows of scale s, so that
// RowsAt(s) places every event in its own row: grid histograms at scale s or
// finer (per-event durations are recorded at ExactScale). Power-of-two
// bucketed and custom-edge histograms cannot be split without inventing
// where events fell inside a bucket.
func (h *Histogram) CanSplitRows(s int) bool { return !h.IsCustom() && h.Scale >= s }

// RowsAt folds h into rows of scale s (2^s rows per power of two). When h
// cannot be split that finely (CanSplitRows) it folds into power-of-two
// rows: check Rows.Scale.
func (h *Histogram) RowsAt(s int) Rows {
	if h.IsCustom() {
		return h.customRows()
	}
	if !h.CanSplitRows(s) {
		s = 0
	}
	r := Rows{Unit: h.Unit, Scale: s, ZeroPow: h.ZeroPow, ZeroCount: h.ZeroCount}
	r.ZeroTime = h.ZeroCount * h.zeroThreshold() / 2
	top := len(h.Counts) - 1
	for top >= 0 && h.Counts[top] == 0 {
		top--
	}
	shift := h.Scale - s
	if top >= 0 {
		r.First = h.Offset >> shift
		last := (h.Offset + top) >> shift
		r.Counts = make([]float64, last-r.First+1)
		r.Times = make([]float64, last-r.First+1)
	}
	total := r.ZeroTime
	h.eachBucket(func(b Bucket) {
		if b.Lower == 0 {
			return
		}
		row := bucketIndex(b.Lower, s) - r.First
		r.Counts[row] += b.Count
		t := b.Count * b.Mid()
		r.Times[row] += t
		total += t
	})
	if h.SumExact && total > 0 {
		k := h.Sum / total
		r.ZeroTime *= k
		for i := range r.Times {
			r.Times[i] *= k
		}
	}
	return r
}

// customRows folds custom buckets into power-of-two rows by log-width
// overlap, with row times scaled to the histogram's sum.
func (h *Histogram) customRows() Rows {
	g := Rebin(h, h.Unit, 0)
	g.SumExact = true // scale the row times to h.Sum below
	r := g.Rows()
	return r
}

// Scaled returns a copy of h with every count and the sum multiplied by f
// (0 < f ≤ 1): the share of a window's events a part of the window holds,
// as a heat-map column it overlaps is given.
func (h *Histogram) Scaled(f float64) *Histogram {
	c := h.Clone()
	c.ZeroCount *= f
	for j := range c.Counts {
		c.Counts[j] *= f
	}
	c.Sum *= f
	return c
}
