package diff

import (
	"math"
	"time"
)

// timeline builds the difference heat map over aligned relative time:
// each window goes to the column of its start's offset from its side's
// start; a cell is B's events/s − A's, NaN where either side observed
// nothing in that column. Nil unless both sides have two windows or more.
func timeline(g Grid, sa, sb *sideSeries, a, b *Side, columns int) *Timeline {
	if a.windows < 2 || b.windows < 2 {
		return nil
	}
	fa, la, _ := a.observed()
	fb, lb, _ := b.observed()
	span := max(la.Sub(fa), lb.Sub(fb))
	if span <= 0 {
		return nil
	}
	width := span / time.Duration(columns)
	if width <= 0 {
		width = time.Nanosecond
	}
	cells := len(g.Edges) + 1
	ra, obsA := columnRates(g, sa, a, fa, width, columns, cells)
	rb, obsB := columnRates(g, sb, b, fb, width, columns, cells)
	t := &Timeline{ColumnSeconds: width.Seconds(), Diff: make([][]float64, columns)}
	for c := range columns {
		t.Diff[c] = make([]float64, cells)
		for i := range cells {
			if !obsA[c] || !obsB[c] {
				t.Diff[c][i] = math.NaN()
				continue
			}
			t.Diff[c][i] = rb[c][i] - ra[c][i]
		}
	}
	return t
}

// columnRates returns a series' events/s per column and cell, and which
// columns the side observed at all.
func columnRates(g Grid, ss *sideSeries, s *Side, first time.Time, width time.Duration, columns, cells int) ([][]float64, []bool) {
	rates := make([][]float64, columns)
	for c := range rates {
		rates[c] = make([]float64, cells)
	}
	observed := make([]bool, columns)
	col := func(t time.Time) int { return min(columns-1, max(0, int(t.Sub(first)/width))) }
	for _, sp := range s.spans {
		observed[col(sp[0])] = true
	}
	if ss == nil {
		return rates, observed
	}
	for _, w := range ss.windows {
		c := col(w.start)
		for i, v := range g.Cells(w.h) {
			rates[c][i] += v / width.Seconds()
		}
	}
	return rates, observed
}
