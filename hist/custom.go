package hist

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Custom bucket bounds keep a source's own edges when they are not powers of
// two: NetApp's <20us, <40us ... >120s counters, Prometheus classic `le`
// buckets, linear DTrace lquantize() or bpftrace lhist() rows, fio's bins.
// Rebinning them onto the power-of-two grid would lose precision that the
// source had, so the histogram carries the edges instead (Prometheus calls
// this the custom-buckets schema).

// ErrCustom says an operation needs a power-of-two grid histogram.
var ErrCustom = errors.New("operation needs power-of-two buckets, not custom bounds")

// NewCustom returns an empty histogram with explicit bucket edges in units:
// bucket i counts [bounds[i], bounds[i+1]) and the zero bucket [0, bounds[0]).
// The last edge may be +Inf: an open top bucket, read as [l, 2l) and
// flagged. Edges must be finite (but the last), non-negative and strictly
// ascending. The slice is kept, not copied: do not modify it afterwards.
// The sum starts exact: Record keeps it so, AddCustom makes it an estimate.
func NewCustom(unit Unit, bounds []float64) (*Histogram, error) {
	if err := checkBounds(bounds); err != nil {
		return nil, err
	}
	return &Histogram{Unit: unit, Bounds: bounds, Counts: make([]float64, len(bounds)-1), SumExact: true,
		TopOpen: math.IsInf(bounds[len(bounds)-1], 1)}, nil
}

func checkBounds(b []float64) error {
	if len(b) < 2 {
		return fmt.Errorf("custom buckets need at least two edges, got %d", len(b))
	}
	for i, v := range b {
		last := i == len(b)-1
		if math.IsNaN(v) || v < 0 || (math.IsInf(v, 1) && !last) {
			return fmt.Errorf("bucket edge %d is %g", i, v)
		}
		if i > 0 && !(v > b[i-1]) {
			return fmt.Errorf("bucket edges are not ascending at %d (%g after %g)", i, v, b[i-1])
		}
	}
	return nil
}

// IsCustom reports whether the histogram has explicit bucket edges.
func (h *Histogram) IsCustom() bool { return h.Bounds != nil }

// AddCustom adds count events to custom bucket i (−1: the zero bucket) and
// the bucket midpoint times count to the estimated sum.
func (h *Histogram) AddCustom(i int, count float64) error {
	if !h.IsCustom() {
		return errors.New("AddCustom needs a histogram with custom bounds")
	}
	if bad(count) {
		return ErrBadCount
	}
	if i < -1 || i >= len(h.Counts) {
		return fmt.Errorf("custom bucket %d out of range (0..%d)", i, len(h.Counts)-1)
	}
	h.SumExact = h.SumExact && count == 0
	if i == -1 {
		h.ZeroCount += count
		h.Sum += count * h.Bounds[0] / 2
		return nil
	}
	lo, hi := h.customEdges(i)
	h.Counts[i] += count
	h.Sum += count * (lo + hi) / 2
	return nil
}

// customEdges returns bucket i's edges, an open top read as [l, 2l).
func (h *Histogram) customEdges(i int) (lo, hi float64) { return CustomEdges(h.Bounds, i) }

// CustomEdges returns the edges of bucket i of custom bounds; an open top
// [l, +Inf) is read as [l, 2l), or [0, 1) when l is 0.
func CustomEdges(bounds []float64, i int) (lo, hi float64) {
	lo, hi = bounds[i], bounds[i+1]
	if math.IsInf(hi, 1) {
		hi = 2 * lo
		if lo == 0 {
			hi = 1
		}
	}
	return lo, hi
}

// customIndex returns the custom bucket holding v ≥ Bounds[0]; values past
// a finite top edge go to the last bucket.
func (h *Histogram) customIndex(v float64) int {
	i := sort.SearchFloat64s(h.Bounds, v) // first edge ≥ v
	if i < len(h.Bounds) && h.Bounds[i] == v {
		i++
	}
	return min(i-1, len(h.Counts)-1)
}

// sameBounds reports whether two histograms have identical custom edges.
func sameBounds(a, b *Histogram) bool {
	return a.IsCustom() && b.IsCustom() && a.Unit == b.Unit && slices.Equal(a.Bounds, b.Bounds)
}

// RebinLike moves h onto the layout of like (its unit and its grid or custom
// edges), splitting straddling buckets by log-width overlap like Rebin.
func RebinLike(h, like *Histogram) *Histogram {
	if sameBounds(h, like) || (!h.IsCustom() && !like.IsCustom() && h.Unit == like.Unit && h.Scale == like.Scale && h.ZeroPow == like.ZeroPow) {
		return h.Clone()
	}
	if !like.IsCustom() {
		return Rebin(h, like.Unit, like.Scale)
	}
	ratio := float64(h.Unit) / float64(like.Unit)
	out := &Histogram{Unit: like.Unit, Bounds: like.Bounds, Counts: make([]float64, len(like.Counts)),
		Sum: h.Sum * ratio, SumExact: h.SumExact, TopOpen: h.TopOpen || like.TopOpen}
	h.eachBucket(func(b Bucket) {
		out.spread(b.Lower*ratio, b.Upper*ratio, b.Count, b.Lower == 0)
	})
	return out
}
