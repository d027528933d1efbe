package diff

import (
	"fmt"
	"math"
	"sort"

	"github.com/latscope/latscope/hist"
)

// Grid is the common bucket grid both sides are compared on: cell 0 is
// [0, Edges[0]), cell i is [Edges[i-1], Edges[i]), the last cell is open.
type Grid struct {
	// Edges in nanoseconds, ascending.
	Edges []float64
	// Exact says every bucket of both sides lies inside one cell (the
	// finer grid nests in the coarser); otherwise the finer side's buckets
	// that straddle a cell edge are split by log-width overlap.
	Exact bool
	// Description says which grid was used, for the outputs.
	Description string
	like        *hist.Histogram
}

// relTol: two edges closer than this (relative) are the same edge.
const relTol = 1e-9

// commonGrid chooses the grid of a series: the coarsest edges common to
// both sides when one layout nests in the other (exact), else the coarser
// side's edges with the finer side rebinned onto them (approximate, within
// one of the finer side's buckets per edge).
func commonGrid(a, b *hist.Histogram) Grid {
	lo, hi := dataRange(a), dataRange(b)
	low, high := math.Min(lo[0], hi[0]), math.Max(lo[1], hi[1])
	ea, eb := layoutEdges(a, low, high), layoutEdges(b, low, high)
	coarse, fine, coarseName, fineName := ea, eb, "A", "B"
	if len(eb) < len(ea) {
		coarse, fine, coarseName, fineName = eb, ea, "B", "A"
	}
	coarseH := a
	if coarseName == "B" {
		coarseH = b
	}
	g := Grid{Edges: coarse, Exact: subset(coarse, fine)}
	layout := describeLayout(coarseH)
	switch {
	case sameLayout(a, b):
		g.Description = "both sides' own buckets: " + layout
	case g.Exact:
		g.Description = fmt.Sprintf("%s's buckets (%s); %s's finer buckets nest in them: exact", coarseName, layout, fineName)
	default:
		g.Description = fmt.Sprintf("%s's buckets (%s); %s's buckets that straddle their edges are split by log-width overlap: approximate within one of %s's buckets", coarseName, layout, fineName, fineName)
	}
	if len(g.Edges) == 0 { // every event in the zero buckets: one cell
		g.Edges = []float64{math.Max(high, 1)}
	}
	bounds := append(append([]float64(nil), g.Edges...), math.Inf(1))
	like, err := hist.NewCustom(hist.Nanosecond, bounds)
	if err != nil { // deduplicated positive edges are valid; else one cell
		like, _ = hist.NewCustom(hist.Nanosecond, []float64{1, math.Inf(1)})
		g.Edges, g.Exact = like.Bounds[:1], false
	}
	g.like = like
	return g
}

// On returns h on the grid, a histogram with the grid's edges.
func (g Grid) On(h *hist.Histogram) *hist.Histogram { return hist.RebinLike(h, g.like) }

// Cells returns h's counts on the grid: the zero cell first.
func (g Grid) Cells(h *hist.Histogram) []float64 {
	if h == nil {
		return make([]float64, len(g.Edges)+1)
	}
	return cellsOfGridded(g.On(h))
}

// cellsOfGridded returns the counts of a histogram already on the grid.
func cellsOfGridded(r *hist.Histogram) []float64 {
	return append([]float64{r.ZeroCount}, r.Counts...)
}

// CellEdges returns cell i's edges in nanoseconds (the last is +Inf).
func (g Grid) CellEdges(i int) (lo, hi float64) {
	if i > 0 {
		lo = g.Edges[i-1]
	}
	hi = math.Inf(1)
	if i < len(g.Edges) {
		hi = g.Edges[i]
	}
	return lo, hi
}

// dataRange returns the lowest and highest edge of h's non-empty buckets in
// nanoseconds, the zero bucket's upper edge standing for its lower one.
func dataRange(h *hist.Histogram) [2]float64 {
	r := [2]float64{math.Inf(1), math.Inf(-1)}
	if h == nil {
		return r
	}
	for _, b := range h.Buckets() {
		lo := b.Lower
		if lo == 0 {
			lo = b.Upper
		}
		r[0] = math.Min(r[0], h.Unit.Nanos(lo))
		r[1] = math.Max(r[1], h.Unit.Nanos(b.Upper))
	}
	return r
}

// layoutEdges returns the edges of h's layout in [low, high] (ns): custom
// bounds as they are, grid edges at its scale, the zero bucket's edge.
func layoutEdges(h *hist.Histogram, low, high float64) []float64 {
	if h == nil || math.IsInf(low, 0) || math.IsInf(high, 0) {
		return nil
	}
	var out []float64
	keep := func(v float64) {
		if v >= low*(1-relTol) && v <= high*(1+relTol) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	if h.IsCustom() {
		for _, v := range h.Bounds {
			keep(h.Unit.Nanos(v))
		}
		return dedupe(out)
	}
	zero := h.Unit.Nanos(math.Ldexp(1, h.ZeroPow))
	keep(zero)
	per := 1 << h.Scale
	// From a bucket below low (not from the zero edge, which a rebinned
	// histogram may put far below its data) up to high.
	start := h.ZeroPow*per + 1
	if at := int(math.Floor(math.Log2(low/float64(h.Unit))*float64(per))) - 1; at > start {
		start = at
	}
	for i := start; ; i++ {
		v := h.Unit.Nanos(hist.RowLower(i, h.Scale))
		if v > high*(1+relTol) || i-start > 64*per {
			break
		}
		keep(v)
	}
	return dedupe(out)
}

func dedupe(v []float64) []float64 {
	sort.Float64s(v)
	out := v[:0]
	for _, x := range v {
		if len(out) == 0 || !sameEdge(out[len(out)-1], x) {
			out = append(out, x)
		}
	}
	return out
}

func sameEdge(a, b float64) bool { return math.Abs(a-b) <= relTol*math.Max(math.Abs(a), math.Abs(b)) }

// subset reports whether every edge of small is an edge of big.
func subset(small, big []float64) bool {
	j := 0
	for _, v := range small {
		for j < len(big) && big[j] < v && !sameEdge(big[j], v) {
			j++
		}
		if j == len(big) || !sameEdge(big[j], v) {
			return false
		}
	}
	return true
}

func sameLayout(a, b *hist.Histogram) bool {
	if a == nil || b == nil || a.Unit != b.Unit || a.IsCustom() != b.IsCustom() {
		return false
	}
	if a.IsCustom() {
		if len(a.Bounds) != len(b.Bounds) {
			return false
		}
		for i := range a.Bounds {
			if a.Bounds[i] != b.Bounds[i] {
				return false
			}
		}
		return true
	}
	return a.Scale == b.Scale
}

// describeLayout names a histogram's buckets for the outputs.
func describeLayout(h *hist.Histogram) string {
	if h == nil {
		return "none"
	}
	if h.IsCustom() {
		return fmt.Sprintf("%d custom edges in %s", len(h.Bounds), h.Unit)
	}
	if h.Scale == 0 {
		return "powers of two in " + h.Unit.String()
	}
	return fmt.Sprintf("%d buckets per power of two in %s", 1<<h.Scale, h.Unit)
}
