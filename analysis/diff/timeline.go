package diff

import (
	"math"
	"time"
)

// timeline builds the difference heat map over aligned relative time:
// columns of equal width from each side's start; a window's events are
// shared among the columns it overlaps in proportion to the overlap, and a
// column's rate is its events over the time the side observed in it. A
// cell is B's events/s − A's, NaN where either side observed nothing.
// Nil unless both sides have two windows or more.
func timeline(cells int, sa, sb *sideSeries, wa, wb [][]float64, a, b *Side, columns int) *Timeline {
	if a.windows < 2 || b.windows < 2 {
		return nil
	}
	oa, ob := a.observed(), b.observed()
	span := max(oa.last.Sub(oa.first), ob.last.Sub(ob.first))
	// No narrower columns than the windows: a column between two window
	// starts would hold nothing of either.
	columns = max(1, min(columns, min(a.windows, b.windows)))
	width := span / time.Duration(columns)
	if width <= 0 {
		return nil
	}
	ra := columnRates(sa, wa, a.spans, oa.first, width, columns, cells)
	rb := columnRates(sb, wb, b.spans, ob.first, width, columns, cells)
	t := &Timeline{ColumnSeconds: width.Seconds(), Diff: make([][]float64, columns)}
	for c := range columns {
		t.Diff[c] = make([]float64, cells)
		for i := range cells {
			t.Diff[c][i] = rb[c][i] - ra[c][i] // NaN when either is
		}
	}
	return t
}

// columnRates returns a series' events/s per column and cell (NaN in the
// columns the side did not observe), from its windows' grid cells.
func columnRates(ss *sideSeries, windowCells [][]float64, spans [][2]time.Time, first time.Time, width time.Duration, columns, cells int) [][]float64 {
	counts := make([][]float64, columns)
	for c := range counts {
		counts[c] = make([]float64, cells)
	}
	seen := make([]float64, columns) // seconds observed per column
	overlaps(spans, first, width, columns, func(c int, part float64, sp [2]time.Time) {
		seen[c] += part * sp[1].Sub(sp[0]).Seconds()
	})
	if ss != nil {
		for j, w := range ss.windows {
			cs := windowCells[j]
			overlaps([][2]time.Time{{w.start, w.end}}, first, width, columns, func(c int, part float64, _ [2]time.Time) {
				for i, v := range cs {
					counts[c][i] += part * v
				}
			})
		}
	}
	for c := range counts {
		for i := range counts[c] {
			if seen[c] <= 0 {
				counts[c][i] = math.NaN()
			} else {
				counts[c][i] /= seen[c]
			}
		}
	}
	return counts
}

// overlaps calls f for every column each span overlaps, with the part of
// the span inside it.
func overlaps(spans [][2]time.Time, first time.Time, width time.Duration, columns int, f func(c int, part float64, sp [2]time.Time)) {
	for _, sp := range spans {
		lo, hi := sp[0].Sub(first), sp[1].Sub(first)
		if hi <= lo {
			continue
		}
		for c := max(0, int(lo/width)); c < columns && time.Duration(c)*width < hi; c++ {
			a, b := max(lo, time.Duration(c)*width), min(hi, time.Duration(c+1)*width)
			if b > a {
				f(c, float64(b-a)/float64(hi-lo), sp)
			}
		}
	}
}
