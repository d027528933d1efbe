package oracle

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/awr"
	"github.com/latscope/latscope/stream"
)

// DefaultEvents are the events the histogram poller watches besides --event.
var DefaultEvents = []string{"log file sync", "db file sequential read", "cell single block physical read"}

// histPoller polls GV$EVENT_HISTOGRAM(_MICRO) and hands the rows, written
// as CSV, to source/awr's poll reader, which does the row mapping, the
// per-instance deltas and the restarts (a new STARTUP_TIME or a counter going
// down: gap, then a new baseline). It is that reader's io.Reader: each Read
// waits for the next tick and runs one poll, so awr's parser, this poller
// and emit all run in the caller's goroutine. A failed poll (connection
// lost) only makes the next window longer, since the counters are
// cumulative; an instance restart in between still shows as a gap.
type histPoller struct {
	ctx      context.Context
	rs       rowSource
	name     string
	diag     *source.Diagnostics
	events   string // comma separated
	inst     int
	interval time.Duration
	emit     func(stream.Interval) error
	now      func() time.Time
	wait     func(ctx context.Context, d time.Duration) error

	micro   int // 0 unknown, 1 _MICRO, −1 ms view
	buf     bytes.Buffer
	polls   int
	failed  int
	pending []stream.Interval // awr's intervals of the last poll
	totals  map[seriesID]eventTotal
	deltas  map[seriesID]eventTotal // of the last poll, from the previous one
	err     error
}

type seriesID struct{ inst, event string }

// eventTotal is a GV$SYSTEM_EVENT row: cumulative waits and µs waited.
type eventTotal struct{ waits, micros int64 }

// run reads the polls through source/awr until ctx is done.
func (p *histPoller) run() error {
	src, err := awr.Open(source.Input{Name: p.name, Reader: p, Diag: p.diag}, source.Options{Format: awr.PollFormatName})
	if err != nil {
		return err
	}
	err = src.Run(p.ctx, p.collect)
	if err == nil || p.ctx.Err() != nil {
		err = p.flush()
	}
	if p.ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return err
}

// collect receives awr's intervals of the poll being read.
func (p *histPoller) collect(iv stream.Interval) error {
	p.pending = append(p.pending, iv)
	return nil
}

// Read runs the next poll when the previous one's text has been consumed.
func (p *histPoller) Read(b []byte) (int, error) {
	for p.buf.Len() == 0 {
		if err := p.flush(); err != nil {
			return 0, err
		}
		if p.polls+p.failed > 0 {
			if err := p.wait(p.ctx, p.interval); err != nil {
				return 0, io.EOF
			}
		}
		if p.ctx.Err() != nil {
			return 0, io.EOF
		}
		if err := p.poll(); err != nil {
			p.failed++
			p.diag.MalformedAt(p.name, p.now(), "poll failed: "+err.Error())
		}
	}
	return p.buf.Read(b)
}

// poll runs the histogram query (detecting the view on first use) and the
// GV$SYSTEM_EVENT query, and writes the rows as CSV under a heading, with
// the heading repeated after them so that awr closes the poll at once.
func (p *histPoller) poll() error {
	r, err := p.queryHistogram()
	if err != nil {
		return err
	}
	p.readTotals()
	p.polls++
	writeCSV(&p.buf, r)
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

// writeCSV writes rows as CSV under a heading, and the heading again.
func writeCSV(b *bytes.Buffer, r *rows) {
	head := make([]string, len(r.columns))
	for i, c := range r.columns {
		head[i] = strconv.Quote(c)
	}
	heading := strings.Join(head, ",") + "\n"
	b.WriteString(heading)
	for _, v := range r.values {
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(csvField(asString(x)))
		}
		b.WriteByte('\n')
	}
	b.WriteString(heading)
}

// csvField quotes a value, doubling quotes; line breaks (never in these
// columns) become blanks so that one row stays one line.
func csvField(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ", `"`, `""`).Replace(s)
	return `"` + s + `"`
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
