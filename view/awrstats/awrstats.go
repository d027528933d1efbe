// Package awrstats is `latscope awr`: AWR wait-event analytics in the way
// of PerfSheet4, from per-snapshot wait-event figures (waits and time
// waited of each event of each instance between two snapshots): the top
// events of each snapshot, the totals by wait class and per instance, an
// hour-of-day × day-of-week pivot of time waited, and the trends of the top
// events' mean latency and wait counts; written as pivot-ready long CSV,
// JSON, a text table or a self-contained HTML page.
package awrstats

import (
	"cmp"
	"slices"
	"time"
)

// Row is one event of one instance in one snapshot window: the long format
// of the CSV output.
type Row struct {
	SnapshotTime time.Time `json:"snapshot_time"` // the window's end (END_INTERVAL_TIME)
	Begin        time.Time `json:"begin"`
	Instance     string    `json:"instance"`
	WaitClass    string    `json:"wait_class"`
	Event        string    `json:"event"`
	Waits        float64   `json:"waits"`
	TimeS        float64   `json:"time_s"`
}

// MeanMs is the mean wait in milliseconds, 0 without waits.
func (r Row) MeanMs() float64 {
	if r.Waits == 0 {
		return 0
	}
	return r.TimeS * 1000 / r.Waits
}

// Options select what the analysis keeps.
type Options struct {
	// Top is how many events each ranking and the trends keep (default 5).
	Top int
	// Idle keeps events of the Idle wait class, which AWR's top events
	// leave out.
	Idle bool
}

// Total is the waits and time of an event, a wait class or an instance.
type Total struct {
	Name      string  `json:"name"`
	WaitClass string  `json:"wait_class,omitempty"`
	Waits     float64 `json:"waits"`
	TimeS     float64 `json:"time_s"`
	MeanMs    float64 `json:"mean_ms"`
	// Share is the fraction of the time waited of its scope (snapshot,
	// instance or whole input).
	Share float64 `json:"share"`
}

// SnapshotTop is the top events of one instance's snapshot window.
type SnapshotTop struct {
	SnapshotTime time.Time `json:"snapshot_time"`
	Instance     string    `json:"instance"`
	TimeS        float64   `json:"time_s"`
	Events       []Total   `json:"events"`
}

// InstanceTop is the top events of one instance over the whole input.
type InstanceTop struct {
	Instance string  `json:"instance"`
	TimeS    float64 `json:"time_s"`
	Events   []Total `json:"events"`
}

// Pivot is time waited (s) by day of week (Monday first) and hour of day
// of the snapshot time, summed over instances and events.
type Pivot struct {
	Days  [7]string      `json:"days"`
	TimeS [7][24]float64 `json:"time_s"`
}

// Trend is one top event of one instance, snapshot by snapshot.
type Trend struct {
	Event    string       `json:"event"`
	Instance string       `json:"instance"`
	Points   []TrendPoint `json:"points"`
}

// TrendPoint is one snapshot window of a trend.
type TrendPoint struct {
	SnapshotTime time.Time `json:"snapshot_time"`
	Waits        float64   `json:"waits"`
	MeanMs       float64   `json:"mean_ms"`
}

// Analysis is everything `latscope awr` shows.
type Analysis struct {
	From        time.Time     `json:"from"`
	To          time.Time     `json:"to"`
	TimeS       float64       `json:"time_s"`
	Events      []Total       `json:"top_events"`
	WaitClass   []Total       `json:"wait_classes"`
	Instances   []InstanceTop `json:"instances"`
	Snapshots   []SnapshotTop `json:"snapshots"`
	Pivot       Pivot         `json:"pivot"`
	Trends      []Trend       `json:"trends"`
	Rows        []Row         `json:"-"`
	IdleLeftOut bool          `json:"idle_left_out"`
}

// Build analyses the rows (any order; Idle events dropped unless
// opts.Idle).
func Build(rows []Row, opts Options) *Analysis {
	if opts.Top <= 0 {
		opts.Top = 5
	}
	a := &Analysis{IdleLeftOut: !opts.Idle}
	for _, r := range rows {
		if r.WaitClass == "Idle" && !opts.Idle {
			continue
		}
		a.Rows = append(a.Rows, r)
	}
	slices.SortFunc(a.Rows, func(x, y Row) int {
		return cmp.Or(x.SnapshotTime.Compare(y.SnapshotTime), cmp.Compare(x.Instance, y.Instance),
			cmp.Compare(y.TimeS, x.TimeS), cmp.Compare(x.Event, y.Event))
	})
	for i, d := range []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
		a.Pivot.Days[i] = d.String()[:3]
	}
	events, classes := newTotals(), newTotals()
	instances := map[string]*totals{}
	var instOrder []string
	for i, r := range a.Rows {
		if i == 0 || r.SnapshotTime.Before(a.From) {
			a.From = r.SnapshotTime
		}
		if r.SnapshotTime.After(a.To) {
			a.To = r.SnapshotTime
		}
		a.TimeS += r.TimeS
		events.add(r.Event, r.WaitClass, r)
		classes.add(r.WaitClass, "", r)
		it := instances[r.Instance]
		if it == nil {
			it = newTotals()
			instances[r.Instance] = it
			instOrder = append(instOrder, r.Instance)
		}
		it.add(r.Event, r.WaitClass, r)
		a.Pivot.TimeS[(int(r.SnapshotTime.Weekday())+6)%7][r.SnapshotTime.Hour()] += r.TimeS
	}
	a.Events = events.ranked(a.TimeS, opts.Top)
	a.WaitClass = classes.ranked(a.TimeS, 0)
	slices.Sort(instOrder)
	for _, name := range instOrder {
		it := instances[name]
		a.Instances = append(a.Instances, InstanceTop{Instance: name, TimeS: it.sum, Events: it.ranked(it.sum, opts.Top)})
	}
	a.Snapshots = snapshotTops(a.Rows, opts.Top)
	a.Trends = trends(a.Rows, a.Events, instOrder)
	return a
}

// totals sums rows by name, keeping first-seen order for ties.
type totals struct {
	by  map[string]*Total
	sum float64
}

func newTotals() *totals { return &totals{by: map[string]*Total{}} }

func (t *totals) add(name, class string, r Row) {
	x := t.by[name]
	if x == nil {
		x = &Total{Name: name, WaitClass: class}
		t.by[name] = x
	}
	x.Waits += r.Waits
	x.TimeS += r.TimeS
	t.sum += r.TimeS
}

// ranked returns the totals by time waited, largest first (ties by name),
// the first top of them (all when top is 0), with means and shares of all.
func (t *totals) ranked(all float64, top int) []Total {
	out := make([]Total, 0, len(t.by))
	for _, x := range t.by {
		v := *x
		if v.Waits > 0 {
			v.MeanMs = v.TimeS * 1000 / v.Waits
		}
		if all > 0 {
			v.Share = v.TimeS / all
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(x, y Total) int { return cmp.Or(cmp.Compare(y.TimeS, x.TimeS), cmp.Compare(x.Name, y.Name)) })
	if top > 0 && len(out) > top {
		out = out[:top]
	}
	return out
}

// snapshotTops ranks the events of each instance's snapshot window; rows
// come sorted by snapshot time and instance.
func snapshotTops(rows []Row, top int) []SnapshotTop {
	var out []SnapshotTop
	for i := 0; i < len(rows); {
		j := i
		t := newTotals()
		for ; j < len(rows) && rows[j].SnapshotTime.Equal(rows[i].SnapshotTime) && rows[j].Instance == rows[i].Instance; j++ {
			t.add(rows[j].Event, rows[j].WaitClass, rows[j])
		}
		out = append(out, SnapshotTop{SnapshotTime: rows[i].SnapshotTime, Instance: rows[i].Instance, TimeS: t.sum, Events: t.ranked(t.sum, top)})
		i = j
	}
	return out
}

// trends follows each top event on each instance over the snapshots; a
// snapshot where it did not wait is a point with no waits.
func trends(rows []Row, top []Total, instances []string) []Trend {
	var out []Trend
	for _, ev := range top {
		for _, inst := range instances {
			tr := Trend{Event: ev.Name, Instance: inst}
			var last time.Time
			for _, r := range rows {
				if r.Instance != inst {
					continue
				}
				if !r.SnapshotTime.Equal(last) {
					tr.Points = append(tr.Points, TrendPoint{SnapshotTime: r.SnapshotTime})
					last = r.SnapshotTime
				}
				if r.Event == ev.Name {
					p := &tr.Points[len(tr.Points)-1]
					p.Waits, p.MeanMs = r.Waits, r.MeanMs()
				}
			}
			if len(tr.Points) > 0 {
				out = append(out, tr)
			}
		}
	}
	return out
}
