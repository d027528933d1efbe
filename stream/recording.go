package stream

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
)

// Recording gathers the intervals of one or more sources. Several sources are
// merged by time; series with the same Key are summed. A source that reports
// the same window again (a trace file that concatenates sessions, a file
// read twice) has the window's histograms summed in place, so memory grows
// with the distinct windows, not with the input.
type Recording struct {
	intervals []Interval
	index     map[windowKey]int
	sorted    bool
}

// windowKey identifies one source's observation window.
type windowKey struct {
	source   string
	start    int64
	duration time.Duration
	relative bool
}

// Add adds an interval, summing it into an earlier one of the same source
// and window.
func (r *Recording) Add(iv Interval) {
	if r.index == nil {
		r.index = map[windowKey]int{}
	}
	k := windowKey{iv.Source, iv.Start.UnixNano(), iv.Duration, iv.Relative}
	i, seen := r.index[k]
	if !seen {
		r.index[k] = len(r.intervals)
		r.intervals = append(r.intervals, iv)
		r.sorted = false
		return
	}
	r.intervals[i] = mergeWindows(r.intervals[i], iv)
}

// mergeWindows sums two reports of the same window; a gap only stands when
// neither report had data.
func mergeWindows(a, b Interval) Interval {
	if b.Gap {
		return a
	}
	if a.Gap {
		return b
	}
	out := a
	out.Series = make([]SeriesHist, len(a.Series))
	copy(out.Series, a.Series)
	for _, sb := range b.Series {
		j := slices.IndexFunc(out.Series, func(s SeriesHist) bool { return s.Key == sb.Key })
		if j < 0 {
			out.Series = append(out.Series, SeriesHist{Key: sb.Key, Hist: sb.Hist.Clone()})
			continue
		}
		merged := out.Series[j].Hist.Clone()
		merged.Merge(sb.Hist)
		out.Series[j].Hist = merged
	}
	out.Means = mergeMeans(a.Means, b.Means)
	return out
}

// Intervals returns all intervals ordered by start time, then source.
func (r *Recording) Intervals() []Interval {
	if !r.sorted {
		slices.SortStableFunc(r.intervals, func(a, b Interval) int {
			if c := a.Start.Compare(b.Start); c != 0 {
				return c
			}
			return cmp.Compare(a.Source, b.Source)
		})
		for i, iv := range r.intervals {
			r.index[windowKey{iv.Source, iv.Start.UnixNano(), iv.Duration, iv.Relative}] = i
		}
		r.sorted = true
	}
	return r.intervals
}

// Len returns the number of intervals.
func (r *Recording) Len() int { return len(r.intervals) }

// Point is one series over one window: the events of every source whose
// windows start and end at the same times, summed.
type Point struct {
	Start    time.Time
	Duration time.Duration
	Relative bool
	// Gap says no source could observe the series in this window.
	Gap bool
	// Hist holds the events; nil when there were none (or in a gap).
	Hist *hist.Histogram
}

// Count returns the number of events in the point.
func (p Point) Count() float64 {
	if p.Hist == nil {
		return 0
	}
	return p.Hist.Count()
}

// Series is one series across the recording.
type Series struct {
	Key Key
	// Sources lists the sources that reported the series.
	Sources []string
	// Total sums every point.
	Total  *hist.Histogram
	Points []Point
	// Idle marks wait events that measure waiting for work, not for a
	// resource (SQL*Net message from client, ...): they sort last.
	Idle bool
}

// Series builds every series of the recording, ordered by total time waited
// (largest first) with idle events last.
func (r *Recording) Series() []*Series {
	ivs := r.Intervals()
	bySource := map[string][]Key{}
	series := map[Key]*Series{}
	for _, iv := range ivs {
		for _, s := range iv.Series {
			sr := series[s.Key]
			if sr == nil {
				sr = &Series{Key: s.Key, Total: &hist.Histogram{Unit: s.Hist.Unit}, Idle: IsIdleEvent(s.Key.Event)}
				series[s.Key] = sr
				bySource[iv.Source] = append(bySource[iv.Source], s.Key)
			}
			if !slices.Contains(sr.Sources, iv.Source) {
				sr.Sources = append(sr.Sources, iv.Source)
				if !slices.Contains(bySource[iv.Source], s.Key) {
					bySource[iv.Source] = append(bySource[iv.Source], s.Key)
				}
			}
			sr.Total.Merge(s.Hist)
		}
	}
	for _, iv := range ivs {
		for _, k := range bySource[iv.Source] {
			series[k].addPoint(iv)
		}
	}
	out := make([]*Series, 0, len(series))
	for _, s := range series {
		out = append(out, s)
	}
	SortSeries(out)
	return out
}

// addPoint adds the interval's data for this series, summing it into the
// previous point when the windows coincide.
func (s *Series) addPoint(iv Interval) {
	var h *hist.Histogram
	for _, sh := range iv.Series {
		if sh.Key == s.Key {
			h = sh.Hist
			break
		}
	}
	if n := len(s.Points); n > 0 {
		last := &s.Points[n-1]
		if last.Start.Equal(iv.Start) && last.Duration == iv.Duration {
			if iv.Gap {
				return
			}
			last.Gap = false
			if h != nil {
				if last.Hist == nil {
					last.Hist = h.Clone()
				} else {
					last.Hist.Merge(h)
				}
			}
			return
		}
	}
	p := Point{Start: iv.Start, Duration: iv.Duration, Relative: iv.Relative, Gap: iv.Gap}
	if h != nil && !iv.Gap {
		p.Hist = h.Clone()
	}
	s.Points = append(s.Points, p)
}

// SortSeries orders series by total time waited, largest first, idle events
// last, then by name.
func SortSeries(ss []*Series) {
	slices.SortStableFunc(ss, func(a, b *Series) int {
		if a.Idle != b.Idle {
			if a.Idle {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(b.timeWaited(), a.timeWaited()); c != 0 {
			return c
		}
		return cmp.Compare(a.Key.String(), b.Key.String())
	})
}

// timeWaited returns the total latency in nanoseconds.
func (s *Series) timeWaited() float64 {
	if s.Total == nil || math.IsNaN(s.Total.Sum) {
		return 0
	}
	return s.Total.Unit.Nanos(s.Total.Sum)
}
