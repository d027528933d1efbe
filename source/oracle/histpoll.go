package oracle

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source/awr"
	"github.com/latscope/latscope/stream"
)

// DefaultEvents are the events the histogram poller watches besides --event.
var DefaultEvents = []string{"log file sync", "db file sequential read", "cell single block physical read"}

// histPoller polls GV$EVENT_HISTOGRAM(_MICRO) on a fixed schedule and maps
// the rows through source/awr's Mapper, the same code that reads spooled
// polls and AWR exports: per-instance deltas, restarts (a new STARTUP_TIME
// or a counter going down: gap, then a new baseline) and the capped top
// bucket. A failed poll (connection lost) only makes the next window
// longer, since the counters are cumulative; an instance restart in between
// still shows as a gap.
type histPoller struct {
	ctx    context.Context
	rs     rowSource
	name   string
	diag   *input.Diagnostics
	events string // comma separated
	inst   int
	loc    *time.Location // STARTUP_TIME and SAMPLE_TIME without an offset
	emit   func(stream.Interval) error
	now    func() time.Time
	pace   *pacer

	m       *awr.Mapper
	micro   int // 0 unknown, 1 _MICRO, −1 ms view
	polls   int
	failed  int
	rowNum  int               // rows mapped so far: the Row.Line of messages
	pending []stream.Interval // the Mapper's intervals of the last poll
	totals  map[seriesID]eventTotal
	deltas  map[seriesID]eventTotal // of the last poll, from the previous one
}

type seriesID struct{ inst, event string }

// eventTotal is a GV$SYSTEM_EVENT row: cumulative waits and µs waited.
type eventTotal struct{ waits, micros int64 }

// run polls until ctx is done.
func (p *histPoller) run() error {
	p.m = awr.NewMapper(awr.MapperConfig{Name: p.name, Diag: p.diag, Cumulative: true, Emit: p.collect})
	defer p.reportSkipped()
	for {
		if p.pace.wait(p.ctx) != nil {
			return nil
		}
		if err := p.poll(); err != nil {
			p.failed++
			p.diag.MalformedAt(p.name, p.now(), "poll failed: "+err.Error())
			continue
		}
		err := p.m.ClosePoll()
		if err == nil {
			err = p.flush()
		}
		if err != nil {
			if p.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
				return nil
			}
			return err
		}
	}
}

// reportSkipped says how many polls the schedule skipped because a poll
// took longer than --interval.
func (p *histPoller) reportSkipped() {
	if p.pace.skipped > 0 {
		p.diag.Warn(p.name, "%d polls skipped: a poll took longer than --interval %s (windows stay aligned to it, "+
			"those windows are longer)", p.pace.skipped, p.pace.interval)
	}
}

// collect receives the Mapper's intervals of the poll being mapped.
func (p *histPoller) collect(iv stream.Interval) error {
	p.pending = append(p.pending, iv)
	return nil
}

// poll runs the histogram query (detecting the view on first use) and the
// GV$SYSTEM_EVENT query, and hands the histogram rows to the Mapper.
func (p *histPoller) poll() error {
	r, err := p.queryHistogram()
	if err != nil {
		return err
	}
	p.readTotals()
	p.polls++
	rowsOut, bad := histogramRows(r, p.loc, p.rowNum)
	p.rowNum += len(r.values)
	if bad != "" {
		p.diag.MalformedAt(p.name, p.now(), bad)
	}
	for _, row := range rowsOut {
		if err := p.m.Add(row); err != nil {
			return err
		}
	}
	return nil
}

func (p *histPoller) queryHistogram() (*rows, error) {
	if p.micro >= 0 {
		r, err := p.rs.query(p.ctx, histogramQueryMicro, p.events, p.inst)
		if err == nil {
			p.micro = 1
			return r, nil
		}
		if p.micro == 1 || !isMissingView(err) {
			return nil, err
		}
		p.micro = -1 // before 12.2: the ms view
	}
	return p.rs.query(p.ctx, histogramQueryMilli, p.events, p.inst)
}

// isMissingView says the error is ORA-00942 (table or view does not exist).
func isMissingView(err error) bool { return strings.Contains(err.Error(), "ORA-00942") }

// readTotals reads GV$SYSTEM_EVENT and keeps the deltas from the previous
// poll; a failure only loses the exact sums of one window.
func (p *histPoller) readTotals() {
	r, err := p.rs.query(p.ctx, systemEventQuery, p.events, p.inst)
	cur := map[seriesID]eventTotal{}
	if err == nil {
		cur = parseTotals(r)
	}
	p.deltas = map[seriesID]eventTotal{}
	for id, c := range cur {
		if prev, ok := p.totals[id]; ok && c.waits >= prev.waits && c.micros >= prev.micros {
			p.deltas[id] = eventTotal{c.waits - prev.waits, c.micros - prev.micros}
		}
	}
	p.totals = cur
}

func parseTotals(r *rows) map[seriesID]eventTotal {
	out := map[seriesID]eventTotal{}
	ci, ce, cw, ct := r.col("INST_ID"), r.col("EVENT"), r.col("TOTAL_WAITS"), r.col("TIME_WAITED_MICRO")
	if ci < 0 || ce < 0 || cw < 0 || ct < 0 {
		return out
	}
	for _, v := range r.values {
		w, ok1 := asInt(v[cw])
		t, ok2 := asInt(v[ct])
		if ok1 && ok2 {
			out[seriesID{asString(v[ci]), asString(v[ce])}] = eventTotal{w, t}
		}
	}
	return out
}

// flush emits the intervals of the last poll: per instance with --instance,
// else merged per event. Where GV$SYSTEM_EVENT counted exactly the waits of
// the histogram, its time waited replaces the bucket-midpoint sum (an exact
// mean beside the buckets).
func (p *histPoller) flush() error {
	if len(p.pending) == 0 {
		return nil
	}
	ivs := p.pending
	p.pending = nil
	for _, iv := range ivs {
		for _, s := range iv.Series {
			p.exactSum(s)
		}
	}
	if p.inst == 0 {
		ivs = mergeInstances(p.name, ivs)
	}
	for _, iv := range ivs {
		if err := p.emit(iv); err != nil {
			return err
		}
	}
	return nil
}

func (p *histPoller) exactSum(s stream.SeriesHist) {
	d, ok := p.deltas[seriesID{s.Key.Instance, s.Key.Event}]
	if !ok || float64(d.waits) != s.Hist.Count() {
		return
	}
	sum := float64(d.micros)
	if s.Hist.Unit == hist.Millisecond {
		sum /= 1000
	}
	s.Hist.Sum, s.Hist.SumExact = sum, true
}

// mergeInstances turns one poll's per-instance intervals into one interval
// with a series per event. All instances share the poll's SAMPLE_TIME, so
// their windows agree unless one restarted (or was first seen): then the
// merged window is a gap, since the total was not observed.
func mergeInstances(name string, ivs []stream.Interval) []stream.Interval {
	start, end := ivs[0].Start, ivs[0].End()
	same := true
	for _, iv := range ivs {
		if iv.Gap || !iv.Start.Equal(ivs[0].Start) || iv.Duration != ivs[0].Duration {
			same = false
		}
		if iv.Start.Before(start) {
			start = iv.Start
		}
		if iv.End().After(end) {
			end = iv.End()
		}
	}
	out := stream.Interval{Source: name, Start: start, Duration: end.Sub(start)}
	if !same {
		out.Gap = true
		return []stream.Interval{out}
	}
	byEvent := map[string]int{}
	for _, iv := range ivs {
		for _, s := range iv.Series {
			if i, ok := byEvent[s.Key.Event]; ok {
				exact := out.Series[i].Hist.SumExact && s.Hist.SumExact
				out.Series[i].Hist.Merge(s.Hist)
				out.Series[i].Hist.SumExact = exact
				continue
			}
			byEvent[s.Key.Event] = len(out.Series)
			out.Series = append(out.Series, stream.SeriesHist{Key: stream.Key{Event: s.Key.Event}, Hist: s.Hist})
		}
	}
	return []stream.Interval{out}
}
