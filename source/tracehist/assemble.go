package tracehist

import (
	"math"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// defaultPeriod is the spacing of prints that carry no time, when neither
// a DTrace tick period nor --interval says it.
const defaultPeriod = time.Second

// rowKey identifies a bucket across prints of a series.
type rowKey struct {
	lo   float64
	over bool
}

// seriesState is what the assembler keeps per series between prints.
type seriesState struct {
	unit hist.Unit
	// base holds the counts of the last cumulative print (cumulative mode).
	base map[rowKey]float64
	// layout holds the custom edges the series used so far.
	layout []float64
}

// assembler places prints in time and turns them into intervals. A print's
// time line marks the end of its window (tools print when the period
// ends). Prints are held one print back: the first one's window length is
// only known from the second's time.
type assembler struct {
	p       *parser
	emit    func(stream.Interval) error
	mode    source.Counts
	pending *print

	started  bool
	relative bool
	prevEnd  time.Time
	lastStep time.Duration
	series   map[stream.Key]*seriesState
}

func newAssembler(p *parser, emit func(stream.Interval) error) *assembler {
	return &assembler{p: p, emit: emit, mode: p.opts.Counts.Resolve(p.d.counts), series: map[stream.Key]*seriesState{}}
}

// add takes the next finished print.
func (a *assembler) add(pr *print) error {
	prev := a.pending
	a.pending = pr
	if prev == nil {
		return nil
	}
	return a.use(prev, pr)
}

// flush emits the last print at the end of the input.
func (a *assembler) flush() error {
	prev := a.pending
	a.pending = nil
	if prev == nil {
		return nil
	}
	return a.use(prev, nil)
}

// period is the spacing the tool itself or the user gave: DTrace's tick-N,
// else --interval; 0 when unknown.
func (a *assembler) period(pr *print) time.Duration {
	if pr.tick > 0 {
		return pr.tick
	}
	return a.p.opts.Interval
}

// window returns the print's [start, end); next is the following print
// (nil at the end), whose time tells the first window's length.
func (a *assembler) window(pr, next *print) (start, end time.Time) {
	period := a.period(pr)
	if !a.started {
		a.started = true
		a.relative = !pr.hasAt
		if period == 0 && pr.hasAt && next != nil && next.hasAt && next.at.After(pr.at) {
			period = next.at.Sub(pr.at)
		}
		if period == 0 {
			period = defaultPeriod
			if pr.hasAt {
				a.p.once.Warn("first", "line %d: the first print's window length is unknown; assuming %s (set --interval)", pr.line, period)
			}
		}
		if a.relative {
			a.p.once.Warn("relative", "no time lines in the output: prints are placed %s apart in relative time (--interval sets the spacing)", period)
			end = stream.RelativeStart.Add(period)
		} else {
			end = pr.at
		}
		return end.Add(-period), end
	}
	start = a.prevEnd
	if pr.hasAt && !a.relative && pr.at.After(a.prevEnd) {
		return start, pr.at
	}
	if pr.hasAt && !a.relative {
		a.p.once.Warn("back", "line %d: time %s does not advance past the previous print (%s); placing the print one period later",
			pr.line, pr.at.Format(time.TimeOnly), a.prevEnd.Format(time.TimeOnly))
	}
	step := period
	if step == 0 {
		step = a.lastStep
	}
	return start, start.Add(step)
}

// use emits the interval of one print.
func (a *assembler) use(pr, next *print) error {
	start, end := a.window(pr, next)
	a.prevEnd, a.lastStep = end, end.Sub(start)
	iv := stream.Interval{Source: a.p.name, Start: start, Duration: end.Sub(start), Relative: a.relative}
	var reset bool
	if a.mode == source.CountsCumulative {
		iv.Series, reset = a.deltas(pr)
	} else {
		iv.Series = a.perInterval(pr)
	}
	if reset {
		iv.Gap, iv.Series = true, nil
	}
	return a.emit(iv)
}

// state returns a series' state, starting it over when its unit changes.
func (a *assembler) state(t *table) (st *seriesState, unitChanged bool) {
	st = a.series[t.key]
	if st == nil || st.unit != t.unit {
		unitChanged = st != nil
		st = &seriesState{unit: t.unit}
		a.series[t.key] = st
	}
	return st, unitChanged
}

// perInterval builds each table's histogram as it is.
func (a *assembler) perInterval(pr *print) []stream.SeriesHist {
	var out []stream.SeriesHist
	for _, t := range pr.tables {
		if t.skip {
			continue
		}
		st, _ := a.state(t)
		if h := a.build(t, st, t.rows); h != nil {
			out = append(out, stream.SeriesHist{Key: t.key, Hist: h})
		}
	}
	return out
}

// deltas subtracts each table from the series' previous print. The first
// print of a series counts from zero: a tracer's aggregations start empty
// when it starts, one period before its first print. A count going down
// (the script was restarted, or trunc()/clear() ran) makes the window a
// gap and the print the new baseline, never negative counts.
func (a *assembler) deltas(pr *print) (out []stream.SeriesHist, reset bool) {
	type change struct {
		t     *table
		st    *seriesState
		delta []row
	}
	var changes []change
	for _, t := range pr.tables {
		if t.skip {
			continue
		}
		if t.damaged {
			a.p.once.Warn("damaged", "line %d: a histogram with malformed rows is skipped in cumulative mode (its events are counted with the next print)", t.line)
			continue
		}
		st, unitChanged := a.state(t)
		d, back := subtractRows(t.rows, st.base)
		if back || unitChanged {
			reset = true
		}
		changes = append(changes, change{t, st, d})
	}
	if reset {
		a.p.once.Warn("reset", "line %d: counts went down (the tracer restarted or cleared its aggregation; if it clears every print, use --counts interval); window shown as a gap", pr.line)
	}
	for _, c := range changes {
		c.st.base = baseOf(c.t.rows)
		if reset {
			continue
		}
		if h := a.build(c.t, c.st, c.delta); h != nil {
			out = append(out, stream.SeriesHist{Key: c.t.key, Hist: h})
		}
	}
	return out, reset
}

// subtractRows returns cur − base per bucket; back says a bucket went down.
func subtractRows(cur []row, base map[rowKey]float64) (delta []row, back bool) {
	seen := 0
	for _, r := range cur {
		k := rowKey{r.lo, r.over}
		prev, ok := base[k]
		if ok {
			seen++
		}
		if r.count < prev {
			return nil, true
		}
		d := r
		d.count -= prev
		delta = append(delta, d)
	}
	if seen < len(base) {
		for k, c := range base {
			if c > 0 && !hasRow(cur, k) {
				return nil, true
			}
		}
	}
	return delta, false
}

func hasRow(rows []row, k rowKey) bool {
	for _, r := range rows {
		if r.lo == k.lo && r.over == k.over {
			return true
		}
	}
	return false
}

func baseOf(rows []row) map[rowKey]float64 {
	m := make(map[rowKey]float64, len(rows))
	for _, r := range rows {
		m[rowKey{r.lo, r.over}] += r.count
	}
	return m
}

// build turns rows into the series' histogram; nil when it holds no events
// or the rows do not fit any layout (reported as malformed).
func (a *assembler) build(t *table, st *seriesState, rows []row) *hist.Histogram {
	for _, r := range rows {
		if math.IsNaN(r.hi) {
			return nil // cannot happen once the table is finished
		}
	}
	b, err := buildHist(t.unit, rows, st.layout)
	if err != nil {
		a.p.diag.Malformed(a.p.name, t.line, "histogram skipped: "+err.Error())
		return nil
	}
	if b.negative > 0 {
		a.p.once.Warn("negative", "line %d: %.0f events in buckets below zero dropped (latencies cannot be negative)", t.line, b.negative)
	}
	if b.edges != nil {
		st.layout = b.edges
	}
	if b.h.Count() == 0 {
		return nil
	}
	return b.h
}
