package diff

import (
	"math"
	"strconv"
)

// minExpected is the smallest expected count a cell of the χ² table may
// have; adjacent cells are merged until every one reaches it.
const minExpected = 5

// homogeneity tests whether a's and b's cells come from one distribution:
// Pearson's χ² of the 2 × k table after merging sparse cells, divided by
// the dispersion the windows of each side show among themselves. It also
// returns each side's own dispersion, for the percentile intervals.
func homogeneity(ca, cb []float64, windowsA, windowsB [][]float64) (*Test, float64, float64) {
	groups := mergeCells(ca, cb)
	t := &Test{Cells: len(groups), Dispersion: 1, P: Num(math.NaN()), F: Num(math.NaN()), ChiSquare: Num(math.NaN())}
	xa, dfa := within(windowsA, groups)
	xb, dfb := within(windowsB, groups)
	phiA, phiB := dispersion(xa, dfa), dispersion(xb, dfb)
	if len(groups) < 2 {
		return t, phiA, phiB // everything in one cell: nothing to compare
	}
	x2, df := pearson([][]float64{fold(ca, groups), fold(cb, groups)})
	t.ChiSquare, t.DF = Num(x2), df
	t.DispersionDF = dfa + dfb
	phi := dispersion(xa+xb, dfa+dfb)
	t.Dispersion = Num(phi)
	if df == 0 {
		return t, phiA, phiB
	}
	f := x2 / float64(df) / phi
	t.F = Num(f)
	if t.DispersionDF > 0 {
		t.P = Num(fSurvival(f, float64(df), float64(t.DispersionDF)))
	} else {
		t.P = Num(chiSquareSurvival(x2, float64(df)))
	}
	return t, phiA, phiB
}

// dispersion is χ²/df, at least 1 (1 when there is nothing to estimate
// it from): fewer than independent events' variation is not credited.
func dispersion(x2 float64, df int) float64 {
	if df <= 0 {
		return 1
	}
	return math.Max(1, x2/float64(df))
}

// maxCells caps the cells of the test when there are more. A χ² test spreads its power over
// its degrees of freedom, and a latency shift moves mass smoothly across
// many neighbouring buckets: hundreds of fine buckets (fio's bins, 64 per
// power of two) would bury a 30 % shift that 16 cells of about equal
// pooled counts show (Mann and Wald's rule, k ≈ 2·n^0.4, gives 16–50 for
// 10³–10⁴ events). Power-of-two grids rarely have more cells with data.
const maxCells = 16

// mergeCells groups adjacent cells, left to right, until the smaller
// side's expected count in every group is at least minExpected; when that
// leaves more than maxCells groups, until every group also holds 1/maxCells
// of the pooled events. A short last group joins the one before it.
func mergeCells(ca, cb []float64) [][2]int {
	na, nb := sum(ca), sum(cb)
	n := na + nb
	if n == 0 {
		return nil
	}
	need := minExpected * n / math.Min(na, nb)
	groups := groupBy(ca, cb, need)
	if len(groups) > maxCells {
		groups = groupBy(ca, cb, math.Max(need, n/maxCells))
	}
	return groups
}

// groupBy groups adjacent cells until each holds need pooled events.
func groupBy(ca, cb []float64, need float64) [][2]int {
	need *= 1 - 1e-9 // counts rebinned by overlap are not whole
	var groups [][2]int
	start, acc := 0, 0.0
	for i := range ca {
		acc += ca[i] + cb[i]
		if acc >= need {
			groups = append(groups, [2]int{start, i + 1})
			start, acc = i+1, 0
		}
	}
	if start < len(ca) {
		if len(groups) == 0 {
			groups = append(groups, [2]int{start, len(ca)})
		} else {
			groups[len(groups)-1][1] = len(ca)
		}
	}
	return groups
}

// fold sums cells into the groups.
func fold(cells []float64, groups [][2]int) []float64 {
	out := make([]float64, len(groups))
	for j, g := range groups {
		for i := g[0]; i < g[1]; i++ {
			out[j] += cells[i]
		}
	}
	return out
}

// pearson returns Pearson's χ² of a rows × columns table of homogeneity
// and its degrees of freedom, leaving out empty rows and columns.
func pearson(table [][]float64) (float64, int) {
	var rows []float64
	var cols []float64
	n := 0.0
	for _, r := range table {
		t := sum(r)
		rows = append(rows, t)
		n += t
		if cols == nil {
			cols = make([]float64, len(r))
		}
		for j, v := range r {
			cols[j] += v
		}
	}
	if n == 0 {
		return 0, 0
	}
	x2 := 0.0
	for i, r := range table {
		for j, v := range r {
			if e := rows[i] * cols[j] / n; e > 0 {
				x2 += (v - e) * (v - e) / e
			}
		}
	}
	nr, nc := 0, 0
	for _, t := range rows {
		if t > 0 {
			nr++
		}
	}
	for _, t := range cols {
		if t > 0 {
			nc++
		}
	}
	if nr < 2 || nc < 2 {
		return 0, 0
	}
	return x2, (nr - 1) * (nc - 1)
}

// within is the homogeneity χ² of one side's windows (their grid cells) on
// the merged cells:
// how much more they vary than independent events would.
func within(windows [][]float64, groups [][2]int) (float64, int) {
	if len(windows) < 2 || len(groups) < 2 {
		return 0, 0
	}
	table := make([][]float64, 0, len(windows))
	for _, w := range windows {
		table = append(table, fold(w, groups))
	}
	return pearson(table)
}

// Num is a float64 that encodes NaN and infinities as JSON null.
type Num float64

// MarshalJSON writes null for NaN and ±Inf.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}
