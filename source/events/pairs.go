package events

import (
	"fmt"
	"strings"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// EventName is the Event of the one series the events format emits.
const EventName = "latency"

// defaultLatencyUnit is the latency unit when neither the header nor
// --unit names one (HeatMap's examples and ora_wait_trace print µs).
const defaultLatencyUnit = hist.Microsecond

// Epoch bounds: a first event time in [2000-01-01, 2100-01-01) read as
// seconds is taken as Unix time (wall clock); anything else (iosnoop's
// monotonic seconds, biosnoop's time since start) as relative time.
const (
	epochFrom = int64(946684800) * 1e9
	epochTo   = int64(4102444800) * 1e9
)

// pairsParser reads per-event tables and time-latency pairs.
type pairsParser struct {
	name string
	diag *input.Diagnostics
	opts source.Options
	emit func(stream.Interval) error

	layout *layout // the table in force, nil before the first header or pair
	bin    *binner
	key    stream.Key
	keep   bool
	once   *input.OnceWarnings
	lineNo int // the line being read, for messages from the binner
}

func newPairsParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *pairsParser {
	return &pairsParser{name: in.Name, diag: in.Diag, opts: opts, emit: emit,
		key: stream.Key{Event: EventName}, keep: opts.KeepEvent(EventName), once: input.NewOnceWarnings(in.Diag, in.Name)}
}

// line handles input line n.
func (p *pairsParser) Line(n int, text string, tooLong bool) error {
	if tooLong {
		return nil // no table row is that long: chatter
	}
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return nil
	}
	if l, ok := parseHeader(fields); ok {
		l.line = n
		p.setLayout(&l, fields)
		return nil
	}
	if p.layout == nil {
		return p.headerless(n, fields)
	}
	return p.row(n, fields)
}

// setLayout starts a new table.
func (p *pairsParser) setLayout(l *layout, fields []string) {
	p.layout = l
	if l.timeCol < 0 {
		p.once.Warn("notime", "the table at line %d (%s) has no time column: its rows are skipped "+
			"(run iosnoop with -t or -ts, or give time-latency pairs)", l.line, headerText(fields))
	}
	unit := latencyUnit(l.latUnit)
	if p.opts.Unit != 0 && unit != 0 && unit != p.opts.Unit {
		p.once.Warn("unit", "--unit %s overrides the %s the header at line %d names", p.opts.Unit, unit, l.line)
	}
}

// headerless reads Gregg's "time latency" pairs before any header; other
// lines are chatter (so a header of unknown names is skipped, as HeatMap
// skips a first line with letters).
func (p *pairsParser) headerless(n int, fields []string) error {
	if len(fields) != 2 || !looksNumeric(fields[0]) {
		return nil
	}
	p.layout = &pairsLayout
	return p.row(n, fields)
}

// row reads one table row; rows that do not start like numbers are chatter
// (prose, "[...]" elisions, "^C"), rows that do but fail are malformed.
func (p *pairsParser) row(n int, fields []string) error {
	l := p.layout
	if l.timeCol < 0 {
		return nil
	}
	ts, ok := l.field(fields, l.timeCol)
	if !ok || !looksNumeric(ts) || !l.startsRow(fields) {
		return nil
	}
	t, ok := parseNanos(ts, l.timeUnit)
	if !ok {
		p.diag.Malformed(p.name, n, fmt.Sprintf("time %q is not a non-negative number of reasonable size", ts))
		return nil
	}
	ls, ok := l.field(fields, l.latCol)
	if !ok {
		why := "and text columns on both sides of the latency"
		if len(fields) < len(l.columns) {
			why = "(a row has at least as many)"
		}
		p.diag.Malformed(p.name, n, fmt.Sprintf("row has %d fields, its header at line %d has %d %s", len(fields), l.line, len(l.columns), why))
		return nil
	}
	v, ok := parseLatency(ls)
	if !ok {
		p.diag.Malformed(p.name, n, fmt.Sprintf("latency %q is not a non-negative number", ls))
		return nil
	}
	unit := p.unit(l)
	if l.timeRole == roleStart {
		// Place the event at its completion, as the others are.
		end := float64(t) + unit.Nanos(v)
		if end > float64(maxTime) {
			p.diag.Malformed(p.name, n, "start time plus latency is out of range")
			return nil
		}
		t = int64(end)
	}
	if !p.keep {
		return nil
	}
	if p.bin == nil {
		p.bin = newBinner(p.name, p.opts.Interval, t < epochFrom || t >= epochTo, p.opts.Loc(), func() {
			p.once.Warn("back", "time goes backwards at line %d (a new run of the tool?); what follows starts a new run", p.lineNo)
		}, p.emit)
	}
	p.lineNo = n
	return p.bin.add(t, p.key, v, unit)
}

// unit is the latency unit of a table: --unit, else the header's, else µs.
func (p *pairsParser) unit(l *layout) hist.Unit {
	switch {
	case p.opts.Unit != 0:
		return p.opts.Unit
	case l.latUnit != 0:
		return latencyUnit(l.latUnit)
	}
	return defaultLatencyUnit
}

// finish flushes what is open.
func (p *pairsParser) finish() error {
	if p.bin == nil {
		return nil
	}
	return p.bin.endRun()
}

// End finishes the input (see input.LineParser).
func (p *pairsParser) End(bool) error { return p.finish() }
