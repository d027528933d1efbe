package heatmap

import (
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

func TestFitWidth(t *testing.T) {
	t0 := time.Date(2024, 3, 14, 9, 0, 0, 0, time.UTC) // SYNTHETIC intervals
	iv := func(offset, d time.Duration) stream.Interval {
		return stream.Interval{Source: "s", Start: t0.Add(offset), Duration: d}
	}
	many := func(n int, d time.Duration) []stream.Interval {
		var ivs []stream.Interval
		for i := range n {
			ivs = append(ivs, iv(time.Duration(i)*d, d))
		}
		return ivs
	}
	cases := []struct {
		name  string
		ivs   []stream.Interval
		width time.Duration
		max   int
		want  time.Duration
	}{
		{"fits", many(100, time.Second), time.Second, 100, time.Second},
		{"one over", many(101, time.Second), time.Second, 100, 2 * time.Second},
		{"20000 into 1200", many(20000, time.Second), time.Second, 1200, 17 * time.Second},
		{"3s into 10", many(100, 3*time.Second), 3 * time.Second, 10, 30 * time.Second},
		// Misaligned: 10 columns of 1s starting at 0.5s span 11 columns.
		{"misaligned", append(many(1, time.Second), iv(500*time.Millisecond, 10*time.Second)), time.Second, 10, 2 * time.Second},
		{"empty", nil, time.Second, 10, time.Second},
		// The grid keeps the first interval's column even when it is a gap.
		{"gap origin", []stream.Interval{{Source: "s", Start: t0, Duration: time.Second, Gap: true}, iv(time.Hour, time.Second)},
			time.Second, 10, 361 * time.Second},
		{"gap only", []stream.Interval{{Source: "s", Start: t0, Duration: time.Hour, Gap: true}}, time.Second, 10, time.Second},
		{"centuries", []stream.Interval{iv(0, time.Second), {Source: "s", Start: t0.AddDate(250, 0, 0), Duration: time.Second}},
			time.Second, 1200, 0}, // just must not overflow
	}
	for _, c := range cases {
		got := fitWidth(c.ivs, c.width, c.max)
		if c.want == 0 {
			if got <= 0 {
				t.Errorf("%s: width %s", c.name, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s: width %s, want %s", c.name, got, c.want)
		}
	}
}

// TestFitGridYearsApart: two windows 15 years apart on a 10 s grid
// (traces of 2008 and 2023 read together) widen the columns instead of
// building 47 million of them.
func TestFitGridYearsApart(t *testing.T) {
	t0 := time.Date(2008, 6, 1, 12, 0, 0, 0, time.UTC)
	ivs := []stream.Interval{
		{Source: "a", Start: t0, Duration: 3 * time.Second},
		{Source: "b", Start: t0.AddDate(15, 0, 0), Duration: 3 * time.Second},
	}
	g := FitGrid(ivs, 10*time.Second, 1000, 0)
	if cols := gridColumns(g); cols > 1000 || g.Width%(10*time.Second) != 0 {
		t.Errorf("%d columns of %s", cols, g.Width)
	}
	if g := FitGrid(ivs, 10*time.Second, 0, 0); g.Width != 10*time.Second {
		t.Errorf("no limit: width %s", g.Width)
	}
}
