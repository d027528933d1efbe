package static

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/view/heatmap"
)

const realTrace = "trc10046/apress-top1e_10.2.0.3_11.1.0.6/DBM11106_ora_6334.trc"

// events returns the events a map cell stands for: its rate times the
// seconds observed.
func events(f *heatmap.Frame, c, row int) float64 {
	v := f.Frequency.Values[c][row]
	if math.IsNaN(v) {
		return 0
	}
	return v * f.Columns[c].Observed
}

// TestRowsPerOctaveTrace: a 10046 trace gives exact ela values, so four
// rows per octave split every octave at 2^(k+i/4) and the sub-rows of an
// octave hold exactly the octave's events, column by column.
func TestRowsPerOctaveTrace(t *testing.T) {
	ivs := readReal(t, oracle10046.Open, realTrace)
	coarse := buildReport(ivs, Options{MaxRows: 1000})
	fine := buildReport(ivs, Options{MaxRows: 1000, RowScale: 2})
	if len(fine.Frames) != len(coarse.Frames) || len(fine.Frames) < 3 {
		t.Fatalf("%d fine and %d coarse series", len(fine.Frames), len(coarse.Frames))
	}
	for i := range fine.Frames {
		ff, cf := &fine.Frames[i], &coarse.Frames[i]
		if ff.Label != cf.Label || ff.RowsPerOctave != 4 || cf.RowsPerOctave != 1 {
			t.Fatalf("series %d: %s/%s, %d and %d rows per octave", i, ff.Label, cf.Label, ff.RowsPerOctave, cf.RowsPerOctave)
		}
		checkFineEdges(t, ff)
		for c := range ff.Columns {
			got := make([]float64, len(cf.Rows))
			for r, row := range ff.Rows {
				if o, ok := octaveOf(cf, row); ok {
					got[o] += events(ff, c, r)
				} else if n := events(ff, c, r); n != 0 {
					t.Errorf("%s: no octave holds the row [%g, %g) ns of %g events", ff.Label, row.Lower, row.Upper, n)
				}
			}
			for r := range cf.Rows {
				if want := events(cf, c, r); math.Abs(got[r]-want) > 1e-9*math.Max(1, want) {
					t.Errorf("%s column %d row %s: sub-rows hold %g events, the octave %g", ff.Label, c, cf.Rows[r].Label, got[r], want)
				}
			}
		}
		checkTotalRows(t, fine.Series[i].Total)
	}
}

// checkFineEdges: inner rows are 2^(1/4) wide, each named by its lower
// edge, and only rows starting an octave, at a power of two of the unit,
// are not sub-rows (axes label those, and draw ticks for the others).
func checkFineEdges(t *testing.T, f *heatmap.Frame) {
	t.Helper()
	unit := f.Unit.Nanos(1)
	labelled := 0
	for _, row := range f.Rows {
		if row.FoldsBelow || row.FoldsAbove {
			continue
		}
		if ratio := row.Upper / row.Lower; math.Abs(ratio-math.Pow(2, 0.25)) > 1e-12 {
			t.Errorf("%s row at %g ns is %g wide, want 2^(1/4)", f.Label, row.Lower, ratio)
		}
		exp := math.Log2(row.Lower / unit)
		onOctave := math.Abs(exp-math.Round(exp)) < 1e-9
		if onOctave == row.Sub || row.Label != hist.FormatDuration(row.Lower) {
			t.Errorf("%s row at 2^%g units: label %q, sub-row %v", f.Label, exp, row.Label, row.Sub)
		}
		if quarter := exp * 4; math.Abs(quarter-math.Round(quarter)) > 1e-9 {
			t.Errorf("%s row edge 2^%g units is not on a quarter octave", f.Label, exp)
		}
		if !row.Sub {
			labelled++
		}
	}
	if labelled == 0 {
		t.Errorf("%s: no labelled row", f.Label)
	}
}

// octaveOf returns the coarse row holding fine row r; rows that only pad
// the finer map (MinRows) may lie outside the coarse map.
func octaveOf(coarse *heatmap.Frame, r heatmap.Row) (int, bool) {
	for i, c := range coarse.Rows {
		if c.Lower <= r.Lower*(1+1e-12) && r.Upper <= c.Upper*(1+1e-12) {
			return i, true
		}
	}
	return 0, false
}

// checkTotalRows: the series total split into quarter octaves sums back to
// its octaves exactly (whole event counts).
func checkTotalRows(t *testing.T, h *hist.Histogram) {
	t.Helper()
	oct, quarter := h.Rows(), h.RowsAt(2)
	if quarter.Scale != 2 || quarter.ZeroCount != oct.ZeroCount {
		t.Fatalf("quarter rows at scale %d, zero rows %g and %g", quarter.Scale, quarter.ZeroCount, oct.ZeroCount)
	}
	sums := make([]float64, len(oct.Counts))
	for j, n := range quarter.Counts {
		sums[(quarter.First+j)>>2-oct.First] += n
	}
	for j := range sums {
		if sums[j] != oct.Counts[j] {
			t.Errorf("octave 2^%d: quarters hold %g events, the octave %g", oct.First+j, sums[j], oct.Counts[j])
		}
	}
}

// TestRowsPerOctaveBucketed: PyLatencyMap's example holds Oracle's
// power-of-two event histogram buckets; asking for finer rows leaves its
// map as it was, one row per octave.
func TestRowsPerOctaveBucketed(t *testing.T) {
	ivs := readReal(t, pylatencymap.Open, "pylatencymap/example_latency_data.txt")
	coarse := buildReport(ivs, Options{})
	fine := buildReport(ivs, Options{RowScale: 3, MaxRows: DefaultMaxRows})
	if len(fine.Frames) != 1 || fine.Frames[0].RowsPerOctave != 1 {
		t.Fatalf("%d series, %d rows per octave", len(fine.Frames), fine.Frames[0].RowsPerOctave)
	}
	if len(coarse.Frames) != 1 || len(coarse.Frames[0].Rows) != len(fine.Frames[0].Rows) {
		t.Fatalf("rows: %d per octave, %d asked finer", len(coarse.Frames[0].Rows), len(fine.Frames[0].Rows))
	}
	var a, b bytes.Buffer
	if err := WriteSVG(&a, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteSVG(&b, ivs, Options{RowScale: 3, MaxRows: DefaultMaxRows}); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("bucketed series: the SVG changed with --rows-per-octave 8")
	}
}

// TestLogScaleRealTrace: on the log scale every cell's level follows the
// logarithm of its rate, and cells the linear scale puts on level 1 (rare
// events beside a busy row) climb above it.
func TestLogScaleRealTrace(t *testing.T) {
	ivs := readReal(t, oracle10046.Open, realTrace)
	lin := buildReport(ivs, Options{RowScale: 2})
	log := buildReport(ivs, Options{RowScale: 2, Scale: heatmap.Log})
	raised := 0
	for i := range log.Frames {
		lf, m := &log.Frames[i], log.Frames[i].Frequency
		for c, col := range m.Values {
			for r, v := range col {
				want := heatmap.Level(v, m.MinNonZero, m.Max, heatmap.Log)
				if m.Levels[c][r] != want {
					t.Fatalf("%s cell %d/%d: level %d, want %d", lf.Label, c, r, m.Levels[c][r], want)
				}
				if v > m.MinNonZero && lin.Frames[i].Frequency.Levels[c][r] == 1 && want > 1 {
					raised++
				}
			}
		}
	}
	if raised == 0 {
		t.Error("the log scale raised no rare cell above level 1")
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, ivs, Options{RowScale: 2, Scale: heatmap.Log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "(log)") {
		t.Error("the SVG legend does not say log scale")
	}
}
