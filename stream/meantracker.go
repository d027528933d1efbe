package stream

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
)

// MeanPoint is one mean series over one window.
type MeanPoint struct {
	Start    time.Time
	Duration time.Duration
	Relative bool
	// Gap says the source could not observe this window.
	Gap   bool
	Count float64
	// Sum is the total latency in the series' Unit.
	Sum float64
}

// Mean returns the point's mean latency in nanoseconds, given the series'
// unit, or Sum/Count for a series of another Quantity (NaN without
// events).
func (p MeanPoint) Mean(u hist.Unit) float64 {
	return SeriesMean{Count: p.Count, Sum: p.Sum, Unit: u}.Mean()
}

// Rate returns the point's events per second (NaN in a gap).
func (p MeanPoint) Rate() float64 {
	if p.Gap || p.Duration <= 0 {
		return math.NaN()
	}
	return p.Count / p.Duration.Seconds()
}

// MeanSeries is one mean series across the windows of its sources.
type MeanSeries struct {
	Key     Key
	Sources []string
	Unit    hist.Unit
	// Quantity is the series' quantity (Latency: Mean and MeanRange are in
	// nanoseconds; otherwise Sum/Count in the quantity).
	Quantity Quantity
	// Count and Sum total every report of the series.
	Count  float64
	Sum    float64
	Points []MeanPoint
}

// Mean returns the overall mean: latency in nanoseconds, or Sum/Count in
// the series' Quantity.
func (s *MeanSeries) Mean() float64 {
	return SeriesMean{Count: s.Count, Sum: s.Sum, Unit: s.Unit}.Mean()
}

// Observed returns the seconds the series' sources observed (gaps
// excluded).
func (s *MeanSeries) Observed() float64 {
	observed := 0.0
	for _, p := range s.Points {
		if !p.Gap {
			observed += p.Duration.Seconds()
		}
	}
	return observed
}

// Rate returns the events per observed second (NaN when nothing was
// observed).
func (s *MeanSeries) Rate() float64 {
	observed := s.Observed()
	if observed <= 0 {
		return math.NaN()
	}
	return s.Count / observed
}

// MeanRange returns the smallest and largest per-window mean (as Mean)
// over the observed windows with events; ok is false when there are none.
func (s *MeanSeries) MeanRange() (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range s.Points {
		if m := p.Mean(s.Unit); !p.Gap && !math.IsNaN(m) {
			lo, hi = math.Min(lo, m), math.Max(hi, m)
		}
	}
	return lo, hi, hi >= lo
}

// SortMeanSeries orders latency mean series by total time, largest first,
// then by name; series of other quantities follow in the order given (a
// source's order: cpu before disk, %user before %system).
func SortMeanSeries(ss []*MeanSeries) {
	slices.SortStableFunc(ss, func(a, b *MeanSeries) int {
		al, bl := a.Quantity.IsLatency(), b.Quantity.IsLatency()
		if al != bl {
			if al {
				return -1
			}
			return 1
		}
		if !al {
			return 0
		}
		if c := cmp.Compare(b.Unit.Nanos(b.Sum), a.Unit.Nanos(a.Sum)); c != 0 {
			return c
		}
		return cmp.Compare(a.Key.String(), b.Key.String())
	})
}

// MeanSeries builds every mean series of the recording, ordered by total
// time (largest first), then by name.
func (r *Recording) MeanSeries() []*MeanSeries {
	t := NewMeanTracker(MeanOptions{})
	for _, iv := range r.Intervals() {
		t.Add(iv)
	}
	out := t.Series()
	SortMeanSeries(out)
	return out
}

// MeanOptions shape a MeanTracker. The zero value keeps everything: each
// series has a point for every window of every source that ever reported
// it.
type MeanOptions struct {
	// History keeps only each series' latest History windows (0: all), so
	// that a live view's memory stays bounded.
	History int
	// FromFirstReport starts each series at its source's first report of
	// it: earlier windows of the source are left out instead of read as
	// windows without events (a live line starts when its series appears).
	FromFirstReport bool
}

// MeanTracker gathers mean series interval by interval, as Grid gathers
// histogram series, for every view and report that draws them. A series
// has a point for each window of each source that reported it: a window
// whose source reported nothing of the series reads as zero events, a gap
// as a gap, and windows that coincide (several sources, one clock) are
// summed into one point. Sums are kept in the unit of the series' first
// report.
type MeanTracker struct {
	opts     MeanOptions
	seq      int
	series   []*meanTrack // in order of first report
	byKey    map[Key]*meanTrack
	bySource map[string][]*meanTrack
	// windows are each source's windows so far, with no events, to fill in
	// a series that a source reports later (unless FromFirstReport).
	windows map[string][]meanEntry
}

// meanTrack is one series being gathered: its windows in arrival order,
// not yet summed where they coincide.
type meanTrack struct {
	series  MeanSeries
	entries []meanEntry
}

// meanEntry is one window of one source as a point of a series; seq orders
// windows as they arrived.
type meanEntry struct {
	seq int
	MeanPoint
}

// NewMeanTracker returns an empty tracker.
func NewMeanTracker(o MeanOptions) *MeanTracker {
	return &MeanTracker{opts: o, byKey: map[Key]*meanTrack{}, bySource: map[string][]*meanTrack{}, windows: map[string][]meanEntry{}}
}

// Add takes one interval: its mean series' reports, zero for the series its
// source reported before but not in this window, no data in a gap.
func (t *MeanTracker) Add(iv Interval) {
	t.seq++
	window := meanEntry{seq: t.seq, MeanPoint: MeanPoint{Start: iv.Start, Duration: iv.Duration, Relative: iv.Relative, Gap: iv.Gap}}
	for _, m := range iv.Means {
		t.report(iv.Source, m, iv.Gap)
	}
	for _, tr := range t.bySource[iv.Source] {
		tr.add(window, iv.Means, t.opts.History)
	}
	if !t.opts.FromFirstReport {
		t.windows[iv.Source] = keepLatest(append(t.windows[iv.Source], window), t.opts.History)
	}
}

// report counts one report of a series into its totals, starting the
// series, or following it in a new source, as needed. A report inside a
// gap (a window the source could not observe) starts and follows the
// series but adds nothing: its point has no data, and totals are the sum
// of the points.
func (t *MeanTracker) report(source string, m SeriesMean, gap bool) {
	tr := t.byKey[m.Key]
	if tr == nil {
		tr = &meanTrack{series: MeanSeries{Key: m.Key, Unit: m.Unit, Quantity: m.Quantity}}
		t.byKey[m.Key] = tr
		t.series = append(t.series, tr)
	}
	s := &tr.series
	if !slices.Contains(s.Sources, source) {
		s.Sources = append(s.Sources, source)
		t.bySource[source] = append(t.bySource[source], tr)
		tr.entries = mergeBySeq(tr.entries, t.windows[source])
	}
	if gap {
		return
	}
	total := SeriesMean{Count: s.Count, Sum: s.Sum, Unit: s.Unit, Quantity: s.Quantity}.Plus(m)
	s.Count, s.Sum = total.Count, total.Sum
}

// add appends the series' point of one window: the sum of its reports in
// the window, none in a gap.
func (tr *meanTrack) add(window meanEntry, means []SeriesMean, history int) {
	if !window.Gap {
		v := SeriesMean{Unit: tr.series.Unit, Quantity: tr.series.Quantity}
		for _, m := range means {
			if m.Key == tr.series.Key {
				v = v.Plus(m)
			}
		}
		window.Count, window.Sum = v.Count, v.Sum
	}
	tr.entries = keepLatest(append(tr.entries, window), history)
}

// mergeBySeq merges two lists of windows ordered by arrival.
func mergeBySeq(a, b []meanEntry) []meanEntry {
	if len(b) == 0 {
		return a
	}
	out := make([]meanEntry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].seq < b[0].seq {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// keepLatest drops all but the latest n entries (n = 0: keeps all).
func keepLatest(entries []meanEntry, n int) []meanEntry {
	if n <= 0 || len(entries) <= n {
		return entries
	}
	return append(entries[:0], entries[len(entries)-n:]...)
}

// Series returns every mean series so far, in order of first report, with
// its points: coinciding windows summed, a gap only where no source had
// data.
func (t *MeanTracker) Series() []*MeanSeries {
	out := make([]*MeanSeries, len(t.series))
	for i, tr := range t.series {
		s := tr.series
		s.Sources = slices.Clone(s.Sources)
		s.Points = coincidingSummed(tr.entries)
		out[i] = &s
	}
	return out
}

// coincidingSummed turns windows into points, summing each window into the
// previous point when their windows coincide.
func coincidingSummed(entries []meanEntry) []MeanPoint {
	points := make([]MeanPoint, 0, len(entries))
	for _, e := range entries {
		if n := len(points); n > 0 && points[n-1].Start.Equal(e.Start) && points[n-1].Duration == e.Duration {
			if last := &points[n-1]; !e.Gap {
				last.Gap = false
				last.Count += e.Count
				last.Sum += e.Sum
			}
			continue
		}
		points = append(points, e.MeanPoint)
	}
	return points
}
