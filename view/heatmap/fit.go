package heatmap

import (
	"math"
	"time"

	"github.com/latscope/latscope/stream"
)

// FitGrid places the intervals on a grid of columns width wide, or of the
// smallest whole multiple of width that holds the recording in at most
// maxCols columns (0: no limit). Views that draw or print every column
// call it so that inputs far apart in time (traces of 2008 and 2023) widen
// the columns instead of building millions of them. rowScale asks for
// 2^rowScale rows per power of two (stream.Grid.RowScale).
func FitGrid(ivs []stream.Interval, width time.Duration, maxCols, rowScale int) *stream.Grid {
	width = fitWidth(ivs, width, maxCols)
	g := placeAll(ivs, width, rowScale)
	// fitWidth mirrors the grid's column arithmetic; should they ever
	// disagree, widen again rather than build a frame of countless columns.
	for tries := 0; maxCols > 0 && gridColumns(g) > maxCols && tries < 8; tries++ {
		factor := time.Duration(gridColumns(g)/maxCols + 1)
		if width > math.MaxInt64/factor {
			break
		}
		width *= factor
		g = placeAll(ivs, width, rowScale)
	}
	return g
}

func placeAll(ivs []stream.Interval, width time.Duration, rowScale int) *stream.Grid {
	g := stream.NewGrid(width)
	g.RowScale = rowScale
	for _, iv := range ivs {
		g.Add(iv)
	}
	return g
}

func gridColumns(g *stream.Grid) int {
	first, last, ok := g.Columns()
	if !ok {
		return 0
	}
	return last - first + 1
}

// fitWidth returns the smallest whole multiple of width whose grid holds the
// recording in at most maxCols columns. Whole multiples keep every source
// interval inside a fixed number of columns, so widening adds no aliasing
// stripes; rates stay right because the grid divides by observed time.
//
// Column 0 starts at the first interval, so only unsorted input (an interval
// before the first) with maxCols < 3 can end up one column over.
func fitWidth(ivs []stream.Interval, width time.Duration, maxCols int) time.Duration {
	lo, hi, ok := extent(ivs)
	if !ok || maxCols <= 0 {
		return width
	}
	span := hi - lo
	// lower: span/(width·maxCols) columns' worth; upper: enough that the
	// partial first and last columns still fit.
	lower := max(1, span/time.Duration(maxCols)/width)
	upper := max(lower, span/time.Duration(max(maxCols-2, 1))/width+1)
	upper = min(upper, math.MaxInt64/width) // centuries apart: do not overflow
	for k := lower; k < upper && k < lower+64; k++ {
		if columnsNeeded(lo, hi, k*width) <= maxCols {
			return k * width
		}
	}
	return upper * width
}

// extent returns the offsets from the grid origin (the first interval with
// a duration, whose column the grid always keeps) of the earliest start and
// latest end the grid draws: non-gap intervals of the origin's clock kind.
func extent(ivs []stream.Interval) (lo, hi time.Duration, ok bool) {
	var origin time.Time
	relative := false
	for _, iv := range ivs {
		if iv.Duration <= 0 {
			continue
		}
		if !ok {
			origin, relative, ok = iv.Start, iv.Relative, true
			lo, hi = 0, 1 // column 0
		}
		if iv.Gap || iv.Relative != relative {
			continue
		}
		s := iv.Start.Sub(origin)
		e := s + iv.Duration
		if e < s { // saturated or overflowed far-away times
			e = s
		}
		lo, hi = min(lo, s), max(hi, e)
	}
	return lo, hi, ok
}

// columnsNeeded mirrors stream.Grid's column indexing for [lo, hi).
func columnsNeeded(lo, hi, width time.Duration) int {
	if hi <= lo {
		return 1
	}
	first, last := floorDiv(lo, width), floorDiv(hi-1, width)
	return int(last - first + 1)
}

func floorDiv(a, b time.Duration) time.Duration {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
