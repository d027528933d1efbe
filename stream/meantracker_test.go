package stream

import (
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
)

// trackerFeed is SYNTHETIC: source "a" reports calls in its 1 s windows
// 0 (4 calls, 2 ms), 1 (a gap) and 3 (2 calls, 6 ms), nothing in window 2;
// source "b" first reports calls in window 2 (1 call, 1 ms), a window that
// coincides with a's.
func trackerFeed() []Interval {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	at := func(src string, i int, gap bool, count, ms float64) Interval {
		iv := Interval{Source: src, Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second, Gap: gap}
		if count > 0 {
			iv.Means = []SeriesMean{{Key: Key{Event: "calls"}, Count: count, Sum: ms, Unit: hist.Millisecond}}
		}
		return iv
	}
	return []Interval{
		at("a", 0, false, 4, 2), at("b", 0, false, 0, 0),
		at("a", 1, true, 0, 0), at("b", 1, false, 0, 0),
		at("a", 2, false, 0, 0), at("b", 2, false, 1, 1),
		at("a", 3, false, 2, 6),
	}
}

func track(o MeanOptions, ivs []Interval) *MeanSeries {
	t := NewMeanTracker(o)
	for _, iv := range ivs {
		t.Add(iv)
	}
	ss := t.Series()
	if len(ss) != 1 {
		return nil
	}
	return ss[0]
}

// pointsOf lists points as (count, gap) for comparison.
func pointsOf(s *MeanSeries) []MeanPoint {
	out := make([]MeanPoint, len(s.Points))
	for i, p := range s.Points {
		out[i] = MeanPoint{Count: p.Count, Gap: p.Gap}
	}
	return out
}

func samePoints(got, want []MeanPoint) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func TestMeanTrackerAllSources(t *testing.T) {
	s := track(MeanOptions{}, trackerFeed())
	if s == nil || s.Count != 7 || s.Sum != 9 || len(s.Sources) != 2 {
		t.Fatalf("series %+v, want 7 calls, 9 ms from a and b", s)
	}
	// b's windows before its first report read as zero and coincide with
	// a's; window 1 has data from b although a had a gap.
	want := []MeanPoint{{Count: 4}, {Count: 0}, {Count: 1}, {Count: 2}}
	if got := pointsOf(s); !samePoints(got, want) {
		t.Errorf("points %+v, want %+v", got, want)
	}
	if got := s.Observed(); got != 4 {
		t.Errorf("observed %v s, want 4", got)
	}
	if got := s.Rate(); got != 7.0/4 {
		t.Errorf("rate %v/s, want 1.75", got)
	}
	if lo, hi, ok := s.MeanRange(); !ok || lo != 0.5e6 || hi != 3e6 {
		t.Errorf("interval means %v – %v ns (%v), want 0.5ms – 3ms", lo, hi, ok)
	}
}

func TestMeanTrackerLive(t *testing.T) {
	live := MeanOptions{FromFirstReport: true}
	s := track(live, trackerFeed())
	// a's windows from its first report, b's from its own: window 1 has
	// b's (empty) window although a had a gap, window 2 b's call.
	want := []MeanPoint{{Count: 4}, {Gap: true}, {Count: 1}, {Count: 2}}
	if got := pointsOf(s); s.Count != 7 || !samePoints(got, want) {
		t.Errorf("%v calls, points %+v; want 7 and %+v", s.Count, got, want)
	}
	if r := s.Points[1].Rate(); !math.IsNaN(r) {
		t.Errorf("rate in a gap = %v, want NaN", r)
	}
	live.History = 2
	if got := pointsOf(track(live, trackerFeed())); !samePoints(got, want[2:]) {
		t.Errorf("history 2 keeps %+v, want %+v", got, want[2:])
	}
}

// A report inside a gap (SYNTHETIC: a source that marks a window it could
// not observe but still carries a mean) adds nothing to the totals, which
// stay the sum of the points.
func TestMeanTrackerGapReportsAddNothing(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	m := func(n float64) []SeriesMean {
		return []SeriesMean{{Key: Key{Event: "calls"}, Count: n, Sum: n, Unit: hist.Millisecond}}
	}
	s := track(MeanOptions{}, []Interval{
		{Source: "a", Start: t0, Duration: time.Second, Means: m(4)},
		{Source: "a", Start: t0.Add(time.Second), Duration: time.Second, Gap: true, Means: m(100)},
		{Source: "a", Start: t0.Add(2 * time.Second), Duration: time.Second, Means: m(2)},
	})
	if s == nil || s.Count != 6 || s.Sum != 6 || s.Rate() != 3 {
		t.Fatalf("series %+v, want 6 calls over 2 observed seconds", s)
	}
	if got, want := pointsOf(s), []MeanPoint{{Count: 4}, {Gap: true}, {Count: 2}}; !samePoints(got, want) {
		t.Errorf("points %+v, want %+v", got, want)
	}
}

func TestMeanSeriesOrder(t *testing.T) {
	t0 := time.Unix(100, 0)
	var r Recording
	r.Add(Interval{Source: "pg", Start: t0, Duration: time.Second, Means: []SeriesMean{
		{Key: Key{Event: "small"}, Count: 1, Sum: 1, Unit: hist.Millisecond},
		{Key: Key{Event: "large"}, Count: 1, Sum: 2000, Unit: hist.Microsecond},
	}})
	ms := r.MeanSeries()
	if len(ms) != 2 || ms[0].Key.Event != "large" || ms[1].Key.Event != "small" {
		t.Errorf("order %v, want by total time", ms)
	}
	if _, _, ok := (&MeanSeries{}).MeanRange(); ok {
		t.Error("a series without points has a mean range")
	}
	if r := (&MeanSeries{}).Rate(); !math.IsNaN(r) {
		t.Errorf("rate of nothing observed = %v, want NaN", r)
	}
}
