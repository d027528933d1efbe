package awr

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
)

// instanceID identifies one instance of one database: its counters and its
// snapshots are independent of every other instance's.
type instanceID struct {
	dbid, inst string
}

// snapshot is every row one instance printed at one time: the cumulative
// histograms of its events.
type snapshot struct {
	id   instanceID
	line int // first row, for messages
	end  time.Time
	unit hist.Unit

	begin      time.Time // zero when the input has no BEGIN_INTERVAL_TIME
	startup    string    // STARTUP_TIME as printed ("" when absent)
	startupAt  time.Time // zero when absent or unreadable
	series     map[string]*seriesRows
	eventOrder []string
}

// seriesRows are one event's bucket rows in a snapshot.
type seriesRows struct {
	counts map[int]float64 // by bound power of two
	top    float64
	hasTop bool
	lines  map[bucketRef]int // row line per bucket, to report duplicates
}

func newSnapshot(r *row) *snapshot {
	return &snapshot{id: r.id, line: r.line, end: r.end, unit: r.unit, begin: r.begin,
		startup: r.startup, startupAt: r.startupAt, series: map[string]*seriesRows{}}
}

// add puts a row's count into the snapshot. It returns a reason when the row
// contradicts the rows already there (the row is then skipped).
func (s *snapshot) add(r *row) string {
	switch {
	case r.unit != s.unit:
		return fmt.Sprintf("bucket unit %s differs from the %s of the snapshot's rows from line %d", r.unit, s.unit, s.line)
	case r.startup != s.startup:
		return fmt.Sprintf("STARTUP_TIME %q differs from %q of the snapshot's rows from line %d", r.startup, s.startup, s.line)
	case !r.begin.Equal(s.begin):
		return fmt.Sprintf("BEGIN_INTERVAL_TIME differs from the snapshot's rows from line %d", s.line)
	}
	sr := s.series[r.event]
	if sr == nil {
		sr = &seriesRows{counts: map[int]float64{}, lines: map[bucketRef]int{}}
		s.series[r.event] = sr
		s.eventOrder = append(s.eventOrder, r.event)
	}
	if first, dup := sr.lines[r.bucket]; dup {
		return fmt.Sprintf("duplicate row for bucket %s of %q in the snapshot at %s (first at line %d); kept the first",
			r.bucket, r.event, s.end.Format(time.DateTime), first)
	}
	sr.lines[r.bucket] = r.line
	if r.bucket.top {
		sr.top, sr.hasTop = r.count, true
	} else {
		sr.counts[r.bucket.pow] = r.count
	}
	return ""
}

// minPow returns the smallest finite bound present, ok false when none.
func (sr *seriesRows) minPow() (int, bool) {
	if len(sr.counts) == 0 {
		return 0, false
	}
	return slices.Min(slices.Collect(maps.Keys(sr.counts))), true
}

// maxPow returns the largest finite bound present, ok false when none.
func (sr *seriesRows) maxPow() (int, bool) {
	if len(sr.counts) == 0 {
		return 0, false
	}
	return slices.Max(slices.Collect(maps.Keys(sr.counts))), true
}

// wentBack says a counter of cur is below the same counter of prev: the
// instance restarted (or its statistics were reset).
func wentBack(prev, cur *seriesRows) bool {
	for pow, c := range cur.counts {
		if p, ok := prev.counts[pow]; ok && c < p {
			return true
		}
	}
	return cur.hasTop && prev.hasTop && cur.top < prev.top
}

// delta returns cur − prev; buckets missing from cur count as unchanged
// (their events show up when the row is back).
func delta(prev, cur *seriesRows) *seriesRows {
	d := &seriesRows{counts: map[int]float64{}}
	for pow, c := range cur.counts {
		if c -= prev.counts[pow]; c > 0 {
			d.counts[pow] = c
		}
	}
	if cur.hasTop {
		if t := cur.top - prev.top; t > 0 {
			d.top, d.hasTop = t, true
		}
	}
	return d
}

// carry returns the baseline after cur: cur's rows, and prev's rows that cur
// lacks (a row skipped as malformed, or a series missing from a snapshot).
func carry(prev, cur *seriesRows) *seriesRows {
	out := &seriesRows{counts: maps.Clone(cur.counts), top: cur.top, hasTop: cur.hasTop}
	for pow, c := range prev.counts {
		if _, ok := out.counts[pow]; !ok {
			out.counts[pow] = c
		}
	}
	if !out.hasTop && prev.hasTop {
		out.top, out.hasTop = prev.top, true
	}
	return out
}

// histogram turns bucket counts into a histogram whose zero bucket is
// [0, 2^zeroPow) (zeroPow: the smallest bound of the series) and whose open
// top bucket starts at 2^topPow. Buckets are added in ascending order so
// that the estimated sum is the same on every run.
func (sr *seriesRows) histogram(unit hist.Unit, zeroPow, topPow int) (*hist.Histogram, error) {
	h := hist.NewBuckets(unit)
	h.ZeroPow = zeroPow
	pows := slices.Sorted(maps.Keys(sr.counts))
	for _, pow := range pows {
		if err := h.AddBound(hist.UpperBound, math.Ldexp(1, pow), sr.counts[pow]); err != nil {
			return nil, err
		}
	}
	if sr.hasTop && sr.top > 0 {
		if err := h.AddOpenTop(math.Ldexp(1, topPow), sr.top); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// empty says the rows hold no events.
func (sr *seriesRows) empty() bool {
	if sr.hasTop && sr.top > 0 {
		return false
	}
	for _, c := range sr.counts {
		if c > 0 {
			return false
		}
	}
	return true
}
