package tracehist

import (
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// table is one histogram being read: a header and its rows.
type table struct {
	line int // line of the header
	key  stream.Key
	unit hist.Unit
	// skip says the table is read but not used (not a latency, or filtered
	// out by --event); noUnit says it is not a latency (its label names a
	// size, or no unit and --unit gives none).
	skip    bool
	noUnit  bool
	rows    []row
	damaged bool // a malformed row may have hidden counts
}

// print is one periodic printout: the tables a tool printed at one time.
type print struct {
	line     int // first line, for messages
	at       time.Time
	hasAt    bool
	tick     time.Duration // DTrace tick-N period
	hasProbe bool
	tables   []*table
}

// has says the print already holds a table of the series.
func (p *print) has(k stream.Key) bool {
	for _, t := range p.tables {
		if t.key == k {
			return true
		}
	}
	return false
}

func (p *print) empty() bool { return len(p.tables) == 0 && !p.hasAt && !p.hasProbe }

// parser splits an input's lines into prints of tables. A print starts at a
// time line or DTrace probe line, or when a series repeats (a print holds
// each series once); everything that is neither a header, a row of an open
// table, a key line nor a time line is chatter (prose, "Tracing... Hit
// Ctrl-C", "avg = ..." lines) and skipped silently. Inside a table, a line
// shaped like a row that does not parse is malformed.
type parser struct {
	d     *dialect
	name  string
	diag  *input.Diagnostics
	opts  source.Options
	clock wallClock
	asm   *assembler

	table *table
	cur   *print
	gap   bool // a "~" line since the last row
	// prevText is the previous line when it was chatter: DTrace prints an
	// aggregation's key on the line before its header, bcc a "disk = 'sda'".
	prevText string
	once     *input.OnceWarnings
	// read says a row of a latency table was read; unused holds the lines
	// that were not, for the error of an input that gave nothing.
	read   bool
	unused input.Unused
}

// newParser returns a parser of the dialect's printouts.
func (d *dialect) newParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *parser {
	p := &parser{d: d, name: in.Name, diag: in.Diag, opts: opts, clock: newWallClock(opts.Day(in)), once: input.NewOnceWarnings(in.Diag, in.Name)}
	p.asm = newAssembler(p, emit)
	return p
}

// line handles input line n (1-based).
func (p *parser) Line(n int, text string, tooLong bool) error {
	if tooLong {
		reason := fmt.Sprintf("line longer than %d bytes", maxLineLen)
		if p.table != nil {
			p.malformed(n, reason)
		} else {
			p.unused.Skipped(p.name, n, reason)
		}
		p.prevText = ""
		return nil
	}
	if p.table != nil {
		if done := p.tableLine(n, text); done {
			return nil
		}
		p.closeTable()
	}
	t := strings.TrimSpace(text)
	prev := p.prevText
	p.prevText = ""
	if t == "" {
		return nil
	}
	if h, ok := parseHeader(t); ok && h.dialect == p.d.id {
		return p.openTable(n, h, prev)
	}
	if s, ok := parseStamp(t, p.opts.Loc()); ok {
		return p.stamp(n, s)
	}
	if p.d.probeLines {
		if period, ok := parseProbeLine(t); ok {
			return p.probe(n, period)
		}
	}
	p.prevText = t
	p.unused.Line(p.name, n, t)
	return nil
}

// tableLine reads a line of the open table; done is false when the line
// ends the table.
func (p *parser) tableLine(n int, text string) (done bool) {
	if p.d.elision && strings.TrimSpace(text) == "~" {
		p.gap = true
		return true
	}
	r, shaped, reason := p.d.parseRow(text)
	if !shaped {
		return false
	}
	if reason != "" {
		p.malformed(n, reason)
		return true
	}
	r.line, r.gapBefore = n, p.gap
	p.gap = false
	p.table.rows = append(p.table.rows, r)
	p.read = p.read || !p.table.noUnit
	return true
}

// malformed reports a bad row of the open table.
func (p *parser) malformed(n int, reason string) {
	p.table.damaged = true
	p.diag.Malformed(p.name, n, reason)
	p.unused.Skipped(p.name, n, reason)
}

// stamp starts a print at a time line.
func (p *parser) stamp(n int, s stamp) error {
	if p.cur != nil && (len(p.cur.tables) > 0 || p.cur.hasAt) {
		if err := p.finishPrint(); err != nil {
			return err
		}
	}
	p.ensurePrint(n)
	p.cur.at, p.cur.hasAt = p.clock.resolve(s), true
	return nil
}

// probe starts a print at a DTrace probe line.
func (p *parser) probe(n int, period time.Duration) error {
	if p.cur != nil && (len(p.cur.tables) > 0 || p.cur.hasProbe) {
		if err := p.finishPrint(); err != nil {
			return err
		}
	}
	p.ensurePrint(n)
	p.cur.hasProbe = true
	if period > 0 {
		p.cur.tick = period
	}
	return nil
}

func (p *parser) ensurePrint(n int) {
	if p.cur == nil {
		p.cur = &print{line: n}
	}
}

// openTable starts a table at its header; prev is the chatter line just
// before it (a DTrace key or bcc section line).
func (p *parser) openTable(n int, h header, prev string) error {
	tb := &table{line: n, key: p.key(h, prev)}
	tb.unit, tb.noUnit = p.unit(n, h)
	tb.skip = tb.noUnit
	if !tb.skip && !p.opts.KeepEvent(tb.key.Event) {
		tb.skip = true
		p.once.Warn("event", "histograms whose series do not match --event are skipped (the first: %q)", tb.key.Event)
	}
	if p.cur != nil && p.cur.has(tb.key) {
		if err := p.finishPrint(); err != nil {
			return err
		}
	}
	p.ensurePrint(n)
	p.cur.tables = append(p.cur.tables, tb)
	p.table, p.gap = tb, false
	return nil
}

// key names a table's series: bpftrace's map name with its key as the
// instance; DTrace's key line or bcc's section value as the event; else
// the format name.
func (p *parser) key(h header, prev string) stream.Key {
	switch p.d.id {
	case dialectBpftrace:
		return stream.Key{Event: h.name, Instance: h.key}
	case dialectDTrace:
		if prev != "" {
			return stream.Key{Event: strings.Join(strings.Fields(prev), " ")}
		}
	case dialectBCC:
		if v, ok := sectionName(prev); ok {
			return stream.Key{Event: v}
		}
	}
	return stream.Key{Event: p.d.name}
}

// unit returns a table's unit; skip says the table is no latency.
func (p *parser) unit(n int, h header) (hist.Unit, bool) {
	switch p.d.id {
	case dialectBCC:
		return p.bccUnit(n, h)
	case dialectIolatency:
		return hist.Millisecond, false
	case dialectBpftrace:
		if u := mapNameUnit(h.name); u != 0 {
			return u, false
		}
		if p.opts.Unit != 0 {
			return p.opts.Unit, false
		}
		p.once.Warn("unit "+h.name, "map %s names no unit (such as @usecs or @lat_ns); assuming microseconds (set --unit)", h.name)
		return hist.Microsecond, false
	}
	if p.opts.Unit != 0 {
		return p.opts.Unit, false
	}
	return p.d.unit, false
}

// bccUnit returns the unit a bcc table's value label names; skip says the
// table is no latency (a size) or its label names no unit and --unit does
// not give one: then the first such table is named in a warning, and the
// error of an input that gave nothing else.
func (p *parser) bccUnit(n int, h header) (hist.Unit, bool) {
	switch {
	case h.labelKind == labelTime:
		return h.unit, false
	case h.labelKind == labelUnknown && p.opts.Unit != 0:
		return p.opts.Unit, false
	}
	reason := fmt.Sprintf("a histogram of %q is not a latency; skipped", h.label)
	if h.labelKind == labelUnknown {
		reason = fmt.Sprintf("histogram label %q names no time unit (nsecs, usecs, msecs, microsec ...); skipped (set --unit if it is a latency)", h.label)
	}
	p.once.Warn("unit "+h.label, "line %d: %s", n, reason)
	p.unused.Skipped(p.name, n, reason)
	return 0, true
}

// closeTable finishes the open table's rows.
func (p *parser) closeTable() {
	if p.table == nil {
		return
	}
	if len(p.table.rows) == 0 && !p.table.noUnit {
		p.unused.Skipped(p.name, p.table.line, "a histogram header without rows")
	}
	if p.d.valueRows {
		finishValueRows(p.table.rows)
	}
	p.table, p.gap = nil, false
}

// finishPrint hands the current print to the assembler.
func (p *parser) finishPrint() error {
	p.closeTable()
	cur := p.cur
	p.cur = nil
	if cur == nil || cur.empty() {
		return nil
	}
	return p.asm.add(cur)
}

// finish ends the input. An input that held no row of a latency table
// is an error naming the lines it had (a stopped run aside: a followed
// file may not have been written yet).
func (p *parser) finish(cancelled bool) error {
	if err := p.finishPrint(); err != nil {
		return err
	}
	if err := p.asm.flush(); err != nil {
		return err
	}
	if p.read || cancelled {
		return nil
	}
	if err := p.unused.Err(p.name, p.d.name); err != nil {
		return fmt.Errorf("%w (a %s table starts with a line %s)", err, p.d.name, p.d.headerShape)
	}
	return nil
}

// End finishes the input (see input.LineParser).
func (p *parser) End(cancelled bool) error { return p.finish(cancelled) }
