package stream

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
)

// SeriesMean is a series the source can only report as a count and a total
// per window, with no distribution: pg_stat_statements calls and
// total_exec_time, pg_stat_database blk_read_time over blks_read. Views draw
// its mean as a line beside the heat maps; turning it into a histogram at the
// mean would invent a distribution the database never measured.
type SeriesMean struct {
	Key Key
	// Count is the number of events (calls, block reads) in the window.
	Count float64
	// Sum is their total latency in Unit.
	Sum  float64
	Unit hist.Unit
}

// Mean returns the mean latency in nanoseconds (NaN without events).
func (m SeriesMean) Mean() float64 {
	if m.Count <= 0 {
		return math.NaN()
	}
	return m.Unit.Nanos(m.Sum) / m.Count
}

// Validate checks a mean series as a source must emit it.
func (m SeriesMean) Validate() error {
	if !m.Unit.Valid() {
		return fmt.Errorf("mean series %s: %w: %d", m.Key, hist.ErrBadUnit, int64(m.Unit))
	}
	if !finiteNonNegative(m.Count) || !finiteNonNegative(m.Sum) {
		return fmt.Errorf("mean series %s: count %v and sum %v must be finite and not negative", m.Key, m.Count, m.Sum)
	}
	return nil
}

func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// mergeMeans adds b's mean series into a copy of a, summing equal keys.
func mergeMeans(a, b []SeriesMean) []SeriesMean {
	out := slices.Clone(a)
	for _, mb := range b {
		j := slices.IndexFunc(out, func(m SeriesMean) bool { return m.Key == mb.Key })
		if j < 0 {
			out = append(out, mb)
			continue
		}
		out[j] = out[j].plus(mb)
	}
	return out
}

// plus sums two reports of one series, converting b to a's unit.
func (m SeriesMean) plus(b SeriesMean) SeriesMean {
	m.Count += b.Count
	m.Sum += b.Sum * float64(b.Unit) / float64(m.Unit)
	return m
}

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
// unit (NaN without events).
func (p MeanPoint) Mean(u hist.Unit) float64 {
	return SeriesMean{Count: p.Count, Sum: p.Sum, Unit: u}.Mean()
}

// MeanSeries is one mean series across the recording.
type MeanSeries struct {
	Key     Key
	Sources []string
	Unit    hist.Unit
	// Count and Sum total every point.
	Count  float64
	Sum    float64
	Points []MeanPoint
}

// Mean returns the overall mean latency in nanoseconds.
func (s *MeanSeries) Mean() float64 {
	return SeriesMean{Count: s.Count, Sum: s.Sum, Unit: s.Unit}.Mean()
}

// MeanSeries builds every mean series of the recording, ordered by total
// time (largest first), then by name. Each source's windows become points of
// every mean series it reported, so a window with no calls reads as zero and
// a gap as a gap.
func (r *Recording) MeanSeries() []*MeanSeries {
	ivs := r.Intervals()
	series := map[Key]*MeanSeries{}
	bySource := map[string][]Key{}
	for _, iv := range ivs {
		for _, m := range iv.Means {
			s := series[m.Key]
			if s == nil {
				s = &MeanSeries{Key: m.Key, Unit: m.Unit}
				series[m.Key] = s
			}
			if !slices.Contains(s.Sources, iv.Source) {
				s.Sources = append(s.Sources, iv.Source)
				bySource[iv.Source] = append(bySource[iv.Source], m.Key)
			}
			add := SeriesMean{Count: s.Count, Sum: s.Sum, Unit: s.Unit}.plus(m)
			s.Count, s.Sum = add.Count, add.Sum
		}
	}
	for _, iv := range ivs {
		for _, k := range bySource[iv.Source] {
			series[k].addPoint(iv)
		}
	}
	out := make([]*MeanSeries, 0, len(series))
	for _, s := range series {
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b *MeanSeries) int {
		if c := cmp.Compare(b.Unit.Nanos(b.Sum), a.Unit.Nanos(a.Sum)); c != 0 {
			return c
		}
		return cmp.Compare(a.Key.String(), b.Key.String())
	})
	return out
}

// addPoint adds the interval's value of this series, summing it into the
// previous point when the windows coincide (several sources, same clock).
func (s *MeanSeries) addPoint(iv Interval) {
	var v SeriesMean
	for _, m := range iv.Means {
		if m.Key == s.Key {
			v = SeriesMean{Count: 0, Sum: 0, Unit: s.Unit}.plus(m)
			break
		}
	}
	if n := len(s.Points); n > 0 {
		last := &s.Points[n-1]
		if last.Start.Equal(iv.Start) && last.Duration == iv.Duration {
			if !iv.Gap {
				last.Gap = false
				last.Count += v.Count
				last.Sum += v.Sum
			}
			return
		}
	}
	p := MeanPoint{Start: iv.Start, Duration: iv.Duration, Relative: iv.Relative, Gap: iv.Gap}
	if !iv.Gap {
		p.Count, p.Sum = v.Count, v.Sum
	}
	s.Points = append(s.Points, p)
}
