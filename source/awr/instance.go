package awr

import (
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// instance turns one instance's snapshots, in time order, into intervals.
// It does its own differencing instead of using stream.Differ because
// Oracle's rows need more than counter subtraction: a bucket row missing from
// a snapshot (a malformed line, an event not printed) must keep its previous
// value rather than look like a reset, the zero bucket's edge is the
// smallest bound seen, which can only be known across snapshots, and after a
// restart whose STARTUP_TIME lies inside the window the counts since startup
// are a usable interval rather than a gap.
type instance struct {
	id     instanceID
	label  string // stream.Key.Instance
	source string // stream.Interval.Source: one per instance, see sourceName
	prev   *snapshot
	// zeroPow and topPow are the smallest and largest finite bounds seen per
	// event: the zero bucket is [0, 2^zeroPow) and the open top bucket
	// starts at max(2^topPow, the documented last bound).
	zeroPow map[string]int
	topPow  map[string]int
}

func newInstance(id instanceID, label, source string) *instance {
	return &instance{id: id, label: label, source: source, zeroPow: map[string]int{}, topPow: map[string]int{}}
}

// notes receives the instance's warnings.
type notes interface {
	warn(format string, args ...any)
}

// next takes the instance's next snapshot (later than the previous one) and
// returns the intervals it closes.
func (in *instance) next(cur *snapshot, cumulative bool, n notes) ([]stream.Interval, error) {
	in.learn(cur)
	prev := in.prev
	in.prev = cur
	if !cumulative {
		return in.asInterval(prev, cur, n)
	}
	if prev == nil {
		return nil, nil // the baseline
	}
	if cur.unit != prev.unit {
		n.warn("snapshot at line %d changes the bucket unit of instance %q from %s to %s; starting a new baseline",
			cur.line, in.label, prev.unit, cur.unit)
		return []stream.Interval{in.gap(prev.end, cur.end)}, nil
	}
	if why := restarted(prev, cur); why != "" {
		return in.afterRestart(prev, cur, why, n)
	}
	iv := in.window(prev.end, cur.end)
	base := &snapshot{id: cur.id, line: cur.line, end: cur.end, unit: cur.unit, begin: cur.begin,
		startup: cur.startup, startupAt: cur.startupAt, series: map[string]*seriesRows{}}
	empty := &seriesRows{}
	for _, ev := range cur.eventOrder {
		p := prev.series[ev]
		if p == nil {
			p = empty
		}
		d := delta(p, cur.series[ev])
		if err := in.addSeries(&iv, ev, d, cur.unit); err != nil {
			return nil, err
		}
		base.series[ev] = carry(p, cur.series[ev])
		base.eventOrder = append(base.eventOrder, ev)
	}
	for _, ev := range prev.eventOrder {
		if _, ok := base.series[ev]; !ok {
			base.series[ev] = prev.series[ev]
			base.eventOrder = append(base.eventOrder, ev)
		}
	}
	in.prev = base
	return []stream.Interval{iv}, nil
}

// restarted says why cur's counters do not continue prev's ("" when they
// do): a new STARTUP_TIME, or a counter going down.
func restarted(prev, cur *snapshot) string {
	if prev.startup != "" && cur.startup != "" && prev.startup != cur.startup {
		return "STARTUP_TIME changed from " + prev.startup + " to " + cur.startup
	}
	for _, ev := range cur.eventOrder {
		if p := prev.series[ev]; p != nil && wentBack(p, cur.series[ev]) {
			return "the counters of " + quote(ev) + " went down"
		}
	}
	return ""
}

// afterRestart returns what follows a restart: when the new STARTUP_TIME
// lies in the window, the time before it is a gap and cur's counts, all
// made since startup, are the events of [startup, end]; otherwise the whole
// window is a gap and cur only the new baseline.
func (in *instance) afterRestart(prev, cur *snapshot, why string, n notes) ([]stream.Interval, error) {
	up := cur.startupAt
	if up.IsZero() || up.Before(prev.end) || !up.Before(cur.end) {
		n.warn("instance %q restarted between %s and %s (%s): no data for that window, counting again from %s",
			in.label, stamp(prev.end), stamp(cur.end), why, stamp(cur.end))
		return []stream.Interval{in.gap(prev.end, cur.end)}, nil
	}
	n.warn("instance %q restarted at %s (%s): no data from %s to the restart, the counts since are used",
		in.label, stamp(up), why, stamp(prev.end))
	var out []stream.Interval
	if up.After(prev.end) {
		out = append(out, in.gap(prev.end, up))
	}
	iv := in.window(up, cur.end)
	for _, ev := range cur.eventOrder {
		if err := in.addSeries(&iv, ev, cur.series[ev], cur.unit); err != nil {
			return nil, err
		}
	}
	return append(out, iv), nil
}

// asInterval handles --counts interval: every snapshot holds only its own
// window's events; the window starts at BEGIN_INTERVAL_TIME, else at the
// previous snapshot.
func (in *instance) asInterval(prev, cur *snapshot, n notes) ([]stream.Interval, error) {
	var start time.Time
	if prev != nil {
		start = prev.end
	}
	if !cur.begin.IsZero() && (prev == nil || !cur.begin.Before(prev.end)) {
		start = cur.begin
	}
	if start.IsZero() || !start.Before(cur.end) {
		n.warn("snapshot at line %d of instance %q: its window is unknown (no BEGIN_INTERVAL_TIME and no earlier snapshot); skipped",
			cur.line, in.label)
		return nil, nil
	}
	iv := in.window(start, cur.end)
	for _, ev := range cur.eventOrder {
		if err := in.addSeries(&iv, ev, cur.series[ev], cur.unit); err != nil {
			return nil, err
		}
	}
	return []stream.Interval{iv}, nil
}

// learn records the bounds a snapshot shows.
func (in *instance) learn(s *snapshot) {
	for ev, sr := range s.series {
		if lo, ok := sr.minPow(); ok {
			if z, seen := in.zeroPow[ev]; !seen || lo < z {
				in.zeroPow[ev] = lo
			}
		}
		if hi, ok := sr.maxPow(); ok {
			if t, seen := in.topPow[ev]; !seen || hi > t {
				in.topPow[ev] = hi
			}
		}
	}
}

// addSeries adds an event's counts to an interval (nothing when empty).
func (in *instance) addSeries(iv *stream.Interval, ev string, sr *seriesRows, unit hist.Unit) error {
	if sr.empty() {
		return nil
	}
	zero, ok := in.zeroPow[ev]
	if !ok {
		zero = 0
	}
	top := max(topFloorPow(unit), in.topPow[ev])
	h, err := sr.histogram(unit, zero, top)
	if err != nil {
		return err
	}
	iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: ev, Instance: in.label}, Hist: h})
	return nil
}

func (in *instance) window(start, end time.Time) stream.Interval {
	return stream.Interval{Source: in.source, Start: start, Duration: end.Sub(start)}
}

func (in *instance) gap(start, end time.Time) stream.Interval {
	iv := in.window(start, end)
	iv.Gap = true
	return iv
}

func stamp(t time.Time) string { return t.Format("2006-01-02 15:04:05") }

func quote(s string) string { return `"` + s + `"` }
