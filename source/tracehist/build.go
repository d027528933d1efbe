package tracehist

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/latscope/latscope/hist"
)

// built is one table turned into a histogram.
type built struct {
	h *hist.Histogram
	// edges are the custom edges used (nil on the power-of-two grid): the
	// series keeps them so that later prints share its layout.
	edges []float64
	// negative counts events in buckets below zero, which latencies cannot
	// have (a clock going backwards); they are dropped.
	negative float64
}

// errOverlap says a table's rows overlap, so no layout holds them.
var errOverlap = errors.New("rows overlap")

// buildHist turns finished rows (both edges known) into a histogram in unit.
// Rows on the power-of-two grid ([0, z) and [2^k, 2^(k+1)) above z) use it,
// which keeps them exact and mergeable with every other log2 source; other
// rows keep their own edges, on the union with the series' earlier layout
// when every row fits it, so that consecutive prints share one layout.
func buildHist(unit hist.Unit, rows []row, layout []float64) (built, error) {
	var b built
	clean := make([]row, 0, len(rows))
	for _, r := range rows {
		if r.hi <= 0 {
			b.negative += r.count
			continue
		}
		r.lo = math.Max(r.lo, 0)
		if r.lo == 0 && math.IsInf(r.hi, 1) {
			return b, fmt.Errorf("line %d: a row [0, ...) holds every latency", r.line)
		}
		clean = append(clean, r)
	}
	sort.SliceStable(clean, func(i, j int) bool { return clean[i].lo < clean[j].lo })
	for i := 1; i < len(clean); i++ {
		if clean[i].lo < clean[i-1].hi {
			return b, fmt.Errorf("line %d: %w (it starts at %g, the row before ends at %g)", clean[i].line, errOverlap, clean[i].lo, clean[i-1].hi)
		}
	}
	if zeroPow, ok := pow2Grid(clean); ok {
		b.h = pow2Hist(unit, zeroPow, clean)
		return b, nil
	}
	own := edgesOf(clean)
	if len(layout) > 0 {
		union := mergeEdges(layout, own)
		if h, ok := customHist(unit, union, clean); ok {
			b.h, b.edges = h, union
			return b, nil
		}
	}
	h, ok := customHist(unit, own, clean)
	if !ok {
		return b, fmt.Errorf("line %d: rows do not fit their own edges", clean[0].line)
	}
	b.h, b.edges = h, own
	return b, nil
}

// pow2Grid says the rows lie on the power-of-two grid and returns the zero
// bucket's edge 2^zeroPow: 1 for DTrace/bpftrace "[0]", 2 for bcc "0 -> 1".
func pow2Grid(rows []row) (zeroPow int, ok bool) {
	zero := 1.0
	for i, r := range rows {
		if r.lo == 0 {
			if i != 0 || !isPow2(r.hi) {
				return 0, false
			}
			zero = r.hi
			continue
		}
		if !isPow2(r.lo) || r.hi != 2*r.lo || r.lo < zero {
			return 0, false
		}
	}
	_, exp := math.Frexp(zero)
	return exp - 1, true
}

// pow2Hist adds lower-bound power-of-two rows: [N, 2N) sums as 1.5·N, the
// zero bucket [0, 2^zeroPow) as half its edge.
func pow2Hist(unit hist.Unit, zeroPow int, rows []row) *hist.Histogram {
	h := hist.NewBuckets(unit)
	h.ZeroPow = zeroPow
	for _, r := range rows {
		// The grid checks above make AddBound's errors impossible.
		_ = h.AddBound(hist.LowerBound, r.lo, r.count)
	}
	return h
}

// edgesOf returns the rows' edges above zero, ascending and unique.
func edgesOf(rows []row) []float64 {
	var e []float64
	for _, r := range rows {
		if r.lo > 0 {
			e = append(e, r.lo)
		}
		e = append(e, r.hi)
	}
	slices.Sort(e)
	e = slices.Compact(e)
	if len(e) == 1 && !math.IsInf(e[0], 1) {
		e = append(e, 2*e[0]) // NewCustom needs two edges; the second stays empty
	}
	return e
}

// mergeEdges returns the sorted union of two edge lists as a new slice.
func mergeEdges(a, b []float64) []float64 {
	e := append(slices.Clone(a), b...)
	slices.Sort(e)
	return slices.Compact(e)
}

// customHist adds the rows onto the custom edges; ok is false when a row
// does not span exactly one bucket of them.
func customHist(unit hist.Unit, edges []float64, rows []row) (*hist.Histogram, bool) {
	h, err := hist.NewCustom(unit, edges)
	if err != nil {
		return nil, false
	}
	for _, r := range rows {
		i := -1
		if r.lo > 0 {
			j, found := slices.BinarySearch(edges, r.lo)
			if !found {
				return nil, false
			}
			i = j
		}
		if i+1 >= len(edges) || edges[i+1] != r.hi {
			return nil, false
		}
		if err := h.AddCustom(i, r.count); err != nil {
			return nil, false
		}
	}
	return h, true
}
