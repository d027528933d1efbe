package reportset

import (
	"math"
	"slices"
	"time"

	"github.com/latscope/latscope/stream"
)

// Table is a set computed over a stream: one block of rows per window, and
// the Average rows over every window, as sar prints them.
type Table struct {
	Set     Set
	Columns []Column
	Windows []Window
	Average []Row
	// multiSource says rows come from more than one source (host), so
	// their labels name it.
	multiSource bool
}

// Window is one observation window of one source.
type Window struct {
	Source   string
	Start    time.Time
	Duration time.Duration
	Relative bool
	Rows     []Row
}

// End returns the end of the window, the time sar prints on its rows.
func (w Window) End() time.Time { return w.Start.Add(w.Duration) }

// Row is one instance's figures, in the table's column order: NaN where
// the instance's window lacks a series the column needs (the source does
// not measure it there, e.g. %ifutil of a link without a speed).
type Row struct {
	Source   string
	Instance string
	Values   []float64
}

// window holds one instance's series over one window or, for the Average
// rows, summed over every window: sums over counts stay exact when merged.
type window map[string]stream.SeriesMean

// rowKey identifies a row: one instance of one source.
type rowKey struct{ source, instance string }

// Build computes the set over the intervals (in time order, as a
// Recording gives them), a row per window, or per every (when longer
// than the windows) as sar -i does: the windows of a source that start in
// one period of the wall clock merge. Gaps give no rows: the source saw
// nothing.
func Build(ivs []stream.Interval, set Set, every time.Duration) Table {
	events, quantities, keys := set.scan(ivs)
	t := Table{Set: set, Columns: set.columnsFor(events, quantities)}
	totals := map[rowKey]window{}
	for _, iv := range merge(ivs, every) {
		perRow := set.windows(iv)
		w := Window{Source: iv.Source, Start: iv.Start, Duration: iv.Duration, Relative: iv.Relative}
		for _, k := range keys {
			if win, ok := perRow[k]; ok {
				w.Rows = append(w.Rows, t.row(k, win))
				if totals[k] == nil {
					totals[k] = window{}
				}
				totals[k].addAll(win)
			}
		}
		if len(w.Rows) > 0 {
			t.Windows = append(t.Windows, w)
		}
	}
	sources := map[string]bool{}
	for _, k := range keys {
		sources[k.source] = true
		if win, ok := totals[k]; ok {
			t.Average = append(t.Average, t.row(k, win))
		}
	}
	t.multiSource = len(sources) > 1
	return t
}

// merge drops gaps and joins each source's windows that start in the same
// period of every (none when every is 0), summing their series: the
// merged window runs from its first window's start to its last's end.
func merge(ivs []stream.Interval, every time.Duration) []stream.Interval {
	var out []stream.Interval
	open := map[string]int{} // source → its window being filled in out
	for _, iv := range ivs {
		if iv.Gap {
			continue
		}
		if every > 0 {
			if i, ok := open[iv.Source]; ok && out[i].Start.Truncate(every).Equal(iv.Start.Truncate(every)) {
				out[i].Means = append(slices.Clip(out[i].Means), iv.Means...)
				out[i].Duration = iv.End().Sub(out[i].Start)
				continue
			}
			open[iv.Source] = len(out)
		}
		out = append(out, iv)
	}
	return out
}

// scan returns the set's events (without the group) with their quantities
// and the rows, in the order the data first has them.
func (s Set) scan(ivs []stream.Interval) (events []string, quantities map[string]stream.Quantity, keys []rowKey) {
	quantities = map[string]stream.Quantity{}
	for _, iv := range ivs {
		for _, m := range iv.Means {
			e, ok := s.split(m.Key)
			if !ok || !s.wants(m.Key.Instance) {
				continue
			}
			if !slices.Contains(events, e) {
				events = append(events, e)
				quantities[e] = m.Quantity
			}
			if k := (rowKey{iv.Source, m.Key.Instance}); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return events, quantities, keys
}

// windows splits an interval's series of the set per row.
func (s Set) windows(iv stream.Interval) map[rowKey]window {
	out := map[rowKey]window{}
	for _, m := range iv.Means {
		e, ok := s.split(m.Key)
		if !ok || !s.wants(m.Key.Instance) {
			continue
		}
		k := rowKey{iv.Source, m.Key.Instance}
		if out[k] == nil {
			out[k] = window{}
		}
		out[k].add(e, m)
	}
	return out
}

// add sums a report of a series into the window.
func (w window) add(event string, m stream.SeriesMean) {
	if have, ok := w[event]; ok {
		m = have.Plus(m)
	}
	w[event] = m
}

// addAll sums every series of b into w.
func (w window) addAll(b window) {
	for e, m := range b {
		w.add(e, m)
	}
}

func (t Table) row(k rowKey, w window) Row {
	r := Row{Source: k.source, Instance: k.instance, Values: make([]float64, len(t.Columns))}
	for i, c := range t.Columns {
		r.Values[i] = math.NaN()
		if w.has(c.Needs) {
			r.Values[i] = c.value(w)
		}
	}
	return r
}

// has says whether the window holds every one of the events.
func (w window) has(events []string) bool {
	for _, e := range events {
		if _, ok := w[e]; !ok {
			return false
		}
	}
	return true
}

// mean is a series' figure in the window: its sum over its count in its
// quantity, or in milliseconds for a latency (await), as sysstat prints
// them; 0 without events, as sysstat prints an idle device.
func mean(event string) func(window) float64 {
	return func(w window) float64 {
		m := w[event]
		if m.Count <= 0 {
			return 0
		}
		if m.Quantity.IsLatency() {
			return m.Unit.Nanos(m.Sum) / m.Count / 1e6
		}
		return m.Sum / m.Count
	}
}

// meanSum adds the means of series over one window (sar -u's %system).
func meanSum(events ...string) func(window) float64 {
	return func(w window) float64 {
		total := 0.0
		for _, e := range events {
			total += mean(e)(w)
		}
		return total
	}
}

// percentOf is part's share of part+rest in percent (iostat's %rrqm: the
// merged requests among merged and issued ones).
func percentOf(part, rest string) func(window) float64 {
	return func(w window) float64 {
		p, r := mean(part)(w), mean(rest)(w)
		if p+r <= 0 {
			return 0
		}
		return 100 * p / (p + r)
	}
}

// perEvent is one rate over another (iostat's rareq-sz: kB/s over r/s).
func perEvent(amount, events string) func(window) float64 {
	return func(w window) float64 {
		n := mean(events)(w)
		if n <= 0 {
			return 0
		}
		return mean(amount)(w) / n
	}
}
