package netapp

import (
	"fmt"
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// defaultInterval is the time between iterations when neither the input's
// command line nor --interval says.
const defaultInterval = time.Second

// record is one histogram counter being read, bucket line by bucket line.
type record struct {
	line  int // where it started
	next  int // the lowest slot the next bucket line may have
	slots [36]float64
}

// iteration is one complete pass of `stats show` over its counters.
type iteration struct {
	order []key
	hists map[key]*hist.Histogram
}

func (it *iteration) add(k key, h *hist.Histogram) {
	if it.hists == nil {
		it.hists = map[key]*hist.Histogram{}
	}
	it.order = append(it.order, k)
	it.hists[k] = h
}

// parser groups bucket lines into records, records into iterations, and
// iterations into intervals.
type parser struct {
	name string
	diag *input.Diagnostics
	opts source.Options
	emit func(stream.Interval) error

	cumulative bool
	interval   time.Duration
	fromInput  bool // interval read from an echoed command line
	warned     bool // about the assumed interval

	open   map[key]*record
	cur    iteration
	known  map[key]bool // counters of every flushed iteration
	count  int          // iterations flushed
	differ *stream.Differ
}

func newParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *parser {
	p := &parser{name: in.Name, diag: in.Diag, opts: opts, emit: emit,
		cumulative: opts.Counts.Resolve(source.CountsCumulative) == source.CountsCumulative,
		open:       map[key]*record{}, known: map[key]bool{}, differ: stream.NewDiffer(in.Name)}
	p.interval = opts.Interval
	if p.interval <= 0 {
		p.interval = defaultInterval
	}
	return p
}

// line handles input line n.
func (p *parser) Line(n int, text string, tooLong bool) error {
	if tooLong {
		if looksLikeBucket(text) {
			p.diag.Malformed(p.name, n, fmt.Sprintf("line longer than %d bytes", maxLineLen))
		}
		return nil
	}
	if sec, ok := intervalFromCommand(text); ok && p.count == 0 {
		p.interval, p.fromInput = time.Duration(sec)*time.Second, true
		return nil
	}
	if !looksLikeBucket(text) {
		return nil // prompts, banners, scalar counters: chatter
	}
	c, reason := parseCounterLine(text)
	if reason != "" {
		p.diag.Malformed(p.name, n, reason)
		return nil
	}
	k := c.key()
	r := p.open[k]
	if r != nil && c.slot < r.next {
		// A bucket at or below the last one read starts the next record:
		// the open one lost its top buckets.
		p.diag.Malformed(p.name, r.line, fmt.Sprintf("%s record has no %s bucket before line %d starts the next; dropped",
			c.counter, bucketLabels[lastLabel], n))
		r = nil
	}
	if r == nil {
		r = &record{line: n}
		p.open[k] = r
	}
	r.slots[c.slot] = c.count
	r.next = c.slot + 1
	if c.slot != lastLabel {
		return nil
	}
	delete(p.open, k)
	return p.complete(k, r)
}

// complete adds a closed record to the current iteration, flushing the
// iteration first when the record's counter already has one in it.
func (p *parser) complete(k key, r *record) error {
	if !p.opts.KeepEvent(k.counter) {
		return nil
	}
	if _, dup := p.cur.hists[k]; dup {
		if err := p.flush(); err != nil {
			return err
		}
	}
	p.cur.add(k, r.histogram())
	if p.count > 0 && len(p.cur.hists) >= len(p.known) && p.coversKnown() {
		return p.flush()
	}
	return nil
}

// coversKnown says the current iteration has every counter seen so far:
// it is complete without waiting for the next one to start.
func (p *parser) coversKnown() bool {
	for k := range p.known {
		if p.cur.hists[k] == nil {
			return false
		}
	}
	return true
}

// histogram returns the record's counts on ONTAP's bucket edges.
func (r *record) histogram() *hist.Histogram {
	h, _ := hist.NewCustom(hist.Microsecond, bucketEdges) // the edges are valid
	for slot, c := range r.slots {
		_ = h.AddCustom(slot-1, c) // slot−1 ≥ −1 and counts are checked: no error
	}
	return h
}

// flush turns the current iteration into an interval.
func (p *parser) flush() error {
	if len(p.cur.order) == 0 {
		return nil
	}
	it := p.cur
	p.cur = iteration{}
	for _, k := range it.order {
		p.known[k] = true
	}
	if !p.fromInput && !p.warned {
		p.warned = true
		p.diag.Warn(p.name, "no `stats show ... -i SEC` command line in the input; assuming %s between iterations (set --interval)", p.interval)
	}
	p.count++
	snap := make([]stream.SeriesHist, 0, len(it.order))
	for _, k := range it.order {
		snap = append(snap, stream.SeriesHist{Key: seriesKey(k), Hist: it.hists[k]})
	}
	if !p.cumulative {
		start := stream.RelativeStart.Add(time.Duration(p.count-1) * p.interval)
		return p.emit(stream.Interval{Source: p.name, Start: start, Duration: p.interval, Relative: true, Series: nonEmpty(snap)})
	}
	// The first iteration is the baseline at time 0.
	end := stream.RelativeStart.Add(time.Duration(p.count-1) * p.interval)
	iv, ok, err := p.differ.Next(end, p.interval, true, snap)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if !ok {
		return nil
	}
	return p.emit(iv)
}

// seriesKey names a counter's series: Event is the counter, Instance the
// instance (the volume); the object ("volume") is left out unless it is
// another object, when it prefixes the instance.
func seriesKey(k key) stream.Key {
	inst := k.instance
	if k.object != "volume" {
		inst = k.object + ":" + k.instance
	}
	return stream.Key{Event: k.counter, Instance: inst}
}

func nonEmpty(ss []stream.SeriesHist) []stream.SeriesHist {
	out := ss[:0]
	for _, s := range ss {
		if s.Hist.Count() > 0 {
			out = append(out, s)
		}
	}
	return out
}

// finish flushes the last iteration and reports records left open (unless
// reading was cancelled, as when --follow stops).
func (p *parser) finish(cancelled bool) error {
	if !cancelled {
		open := make([]key, 0, len(p.open))
		for k := range p.open {
			open = append(open, k)
		}
		slices.SortFunc(open, func(a, b key) int { return p.open[a].line - p.open[b].line })
		for _, k := range open {
			p.diag.Malformed(p.name, p.open[k].line, fmt.Sprintf("%s record is not closed by its %s bucket at the end of the input; dropped",
				k.counter, bucketLabels[lastLabel]))
		}
	}
	return p.flush()
}

// End finishes the input (see input.LineParser).
func (p *parser) End(cancelled bool) error { return p.finish(cancelled) }
