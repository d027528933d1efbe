package static

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// SYNTHETIC recordings: the inputs of this package are stream.Intervals, and
// these tests need cells whose rates and colour levels are known exactly, so
// they build intervals by hand rather than parse a real file.

var syntheticZone = time.FixedZone("", 2*3600) // UTC+02:00

var syntheticStart = time.Date(2024, 3, 5, 10, 0, 0, 0, syntheticZone)

const syntheticEvent = "db file sequential read"

// syntheticCell is what one column of the known recording holds: n events of
// latency us (microseconds), or a gap.
type syntheticCell struct {
	n   int
	us  float64
	gap bool
}

// knownColumns is the known recording: 10 s columns, one series. Row 0 is
// the 64µs bucket (100µs events), row 3 the 512µs bucket (1000µs), row 7 the
// 8.19ms bucket (10000µs); MinRows 8 keeps rows 0..7 exactly.
var knownColumns = []syntheticCell{
	{n: 60, us: 100},   // col 0: 6 events/s in row 0 → frequency level 6
	{n: 10, us: 100},   // col 1: 1/s in row 0 → level 1
	{gap: true},        // col 2: the source could not observe it
	{},                 // col 3: observed, no events
	{n: 30, us: 1000},  // col 4: 3/s in row 3 → level 3; 3ms/s waited
	{n: 60, us: 10000}, // col 5: 6/s in row 7 → level 6; 60ms/s waited (intensity max)
	{n: 20, us: 10000}, // col 6: 2/s in row 7 → level 2; 20ms/s → intensity level 2
}

// knownLevels are the frequency and intensity levels of the non-zero
// cells of knownColumns: {col, row, frequency level, intensity level}.
var knownLevels = [][4]int{
	{0, 0, 6, 1}, {1, 0, 1, 1}, {4, 3, 3, 1}, {5, 7, 6, 6}, {6, 7, 2, 2},
}

const knownWidth = 10 * time.Second

func knownRecording() []stream.Interval {
	var ivs []stream.Interval
	for i, c := range knownColumns {
		iv := stream.Interval{Source: "synthetic", Start: syntheticStart.Add(time.Duration(i) * knownWidth),
			Duration: knownWidth, Gap: c.gap}
		if c.n > 0 {
			h := hist.NewExact(hist.Microsecond, 0)
			_ = h.RecordN(c.us, float64(c.n))
			iv.Series = []stream.SeriesHist{{Key: stream.Key{Event: syntheticEvent}, Hist: h}}
		}
		ivs = append(ivs, iv)
	}
	return ivs
}

// randomRecording is a synthetic multi-series recording: n intervals of
// width, a lognormal-ish latency mix per series, every 97th interval a gap.
func randomRecording(n, series int, width time.Duration, seed uint64) []stream.Interval {
	rng := rand.New(rand.NewPCG(seed, 1))
	keys := make([]stream.Key, series)
	for s := range keys {
		keys[s] = stream.Key{Event: syntheticEventName(s), Instance: "1"}
	}
	ivs := make([]stream.Interval, 0, n)
	for i := range n {
		iv := stream.Interval{Source: "synthetic", Start: syntheticStart.Add(time.Duration(i) * width), Duration: width}
		if i%97 == 96 {
			iv.Gap = true
			ivs = append(ivs, iv)
			continue
		}
		for s, k := range keys {
			h := hist.NewBuckets(hist.Microsecond)
			centre := 3 + s + int(2*math.Sin(float64(i)/50))
			for b := centre - 6; b <= centre+6; b++ {
				if b < 0 || rng.IntN(3) == 0 {
					continue
				}
				_ = h.AddBound(hist.UpperBound, math.Ldexp(1, b+1), float64(rng.IntN(200)))
			}
			iv.Series = append(iv.Series, stream.SeriesHist{Key: k, Hist: h})
		}
		ivs = append(ivs, iv)
	}
	return ivs
}

func syntheticEventName(s int) string {
	names := []string{"db file sequential read", "log file sync", "direct path read", "db file scattered read",
		"log file parallel write", "control file sequential read"}
	if s < len(names) {
		return names[s]
	}
	return fmt.Sprintf("%s %d", names[s%len(names)], s/len(names))
}

// TestKnownRecordingLevels checks the synthetic fixture itself against
// view/heatmap, so the rendering tests below rest on known levels.
func TestKnownRecordingLevels(t *testing.T) {
	r := buildReport(knownRecording(), Options{})
	if r.Columns != len(knownColumns) || len(r.Frames) != 1 || r.Width != knownWidth {
		t.Fatalf("columns %d frames %d width %s", r.Columns, len(r.Frames), r.Width)
	}
	f := r.Frames[0]
	if len(f.Rows) != 8 || f.Rows[0].Label != "64µs" {
		t.Fatalf("rows %d, bottom %q", len(f.Rows), f.Rows[0].Label)
	}
	for _, k := range knownLevels {
		if got := f.Frequency.Levels[k[0]][k[1]]; got != k[2] {
			t.Errorf("frequency level at col %d row %d = %d, want %d", k[0], k[1], got, k[2])
		}
		if got := f.Intensity.Levels[k[0]][k[1]]; got != k[3] {
			t.Errorf("intensity level at col %d row %d = %d, want %d", k[0], k[1], got, k[3])
		}
	}
	if f.Frequency.Levels[2][0] != heatmap.LevelGap || f.Frequency.Levels[3][0] != heatmap.LevelZero {
		t.Errorf("gap/zero levels %v", f.Frequency.Levels)
	}
}
