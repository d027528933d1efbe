package heatmap

import (
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

func TestLevelLinear(t *testing.T) {
	cases := []struct {
		v    float64
		want int
	}{{math.NaN(), LevelGap}, {0, LevelZero}, {0.1, 1}, {10, 1}, {10.01, 2}, {50, 5}, {60, 6}, {70, 6}}
	for _, c := range cases {
		if got := Level(c.v, 0.1, 60, Linear); got != c.want {
			t.Errorf("Level(%g) = %d, want %d", c.v, got, c.want)
		}
	}
}

func TestLevelLog(t *testing.T) {
	// level = 1 + floor(6·ln(v/vmin)/ln(vmax/vmin)), capped at 6
	vmin, vmax := 1.0, 1e6
	cases := []struct {
		v    float64
		want int
	}{{1, 1}, {9.9, 1}, {10, 2}, {1e5, 6}, {999999, 6}, {1e6, 6}}
	for _, c := range cases {
		if got := Level(c.v, vmin, vmax, Log); got != c.want {
			t.Errorf("Level(%g) = %d, want %d", c.v, got, c.want)
		}
	}
	if got := Level(5, 5, 5, Log); got != Levels {
		t.Errorf("single value: level %d", got)
	}
}

func TestRGBOfPalettes(t *testing.T) {
	if r, g, b := RGB(21); r != 0 || g != 0 || b != 255 {
		t.Errorf("21 = %d,%d,%d", r, g, b)
	}
	if r, g, b := RGB(226); r != 255 || g != 255 || b != 0 {
		t.Errorf("226 = %d,%d,%d", r, g, b)
	}
	if r, g, b := RGB(196); r != 255 || g != 0 || b != 0 {
		t.Errorf("196 = %d,%d,%d", r, g, b)
	}
}

func TestBuildFrame(t *testing.T) {
	t0 := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	g := stream.NewGrid(time.Second)
	k := stream.Key{Event: "db file sequential read"}
	add := func(i int, vals ...float64) {
		h := hist.NewExact(hist.Microsecond, 0)
		for _, v := range vals {
			_ = h.Record(v)
		}
		iv := stream.Interval{Source: "s", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second}
		if len(vals) > 0 {
			iv.Series = []stream.SeriesHist{{Key: k, Hist: h}}
		}
		g.Add(iv)
	}
	add(0, 100, 100, 5000)
	add(1)
	add(3, 200)
	f := Build(g, g.Series()[0], Options{MaxRows: 20, MinRows: 10})
	if len(f.Columns) != 4 || !f.Columns[2].Gap || f.Columns[1].Gap {
		t.Fatalf("columns %+v", f.Columns)
	}
	if len(f.Rows) != 10 {
		t.Errorf("%d rows, want 10 (padded)", len(f.Rows))
	}
	if f.Rows[0].Label != "32µs" { // rows 6..12 hold data, padded to 5..14
		t.Errorf("bottom row %q", f.Rows[0].Label)
	}
	if f.Frequency.Levels[2][0] != LevelGap || f.Frequency.Levels[1][0] != LevelZero {
		t.Errorf("levels %v", f.Frequency.Levels)
	}
	if f.Frequency.Values[0][1] != 2 || f.Frequency.Max != 2 {
		t.Errorf("values %v max %g", f.Frequency.Values[0], f.Frequency.Max)
	}
	if got := f.Stats.AvgLatency; math.Abs(got-(5400e3/4)) > 1e-6 {
		t.Errorf("average %g ns", got)
	}
	if f.Stats.LatestEvents != 1 || f.Stats.Samples != 3 { // three intervals reported; the gap column is not a sample
		t.Errorf("stats %+v", f.Stats)
	}
}

func BenchmarkBuild200x20(b *testing.B) {
	t0 := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	g := stream.NewGrid(time.Second)
	k := stream.Key{Event: "e"}
	for i := 0; i < 400; i++ {
		h := hist.NewExact(hist.Microsecond, 0)
		for v := 1.0; v < 1e6; v *= 1.3 {
			_ = h.Record(v * float64(1+i%3))
		}
		g.Add(stream.Interval{Source: "s", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: k, Hist: h}}})
	}
	s := g.Series()[0]
	b.ReportAllocs()
	for b.Loop() {
		Build(g, s, Options{Columns: 200, MaxRows: 20, MinRows: 10})
	}
}

func TestParseScale(t *testing.T) {
	for _, s := range []Scale{Linear, Log} {
		if got, err := ParseScale(s.String()); err != nil || got != s {
			t.Errorf("ParseScale(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseScale("Log"); err == nil || err.Error() != `scale "Log": want linear or log` {
		t.Errorf("ParseScale(Log) error %v", err)
	}
}
