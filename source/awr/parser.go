package awr

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// row is one data line once mapped: one bucket of one event of one instance
// at one snapshot (the Mapper's form of a Row, its bound classified).
type row struct {
	line      int
	id        instanceID
	end       time.Time
	begin     time.Time
	startup   string
	startupAt time.Time
	event     string
	unit      hist.Unit
	bucket    bucketRef
	count     float64
}

// parser reads lines into Rows and hands them to a Mapper, which files them
// into snapshots and hands those to their instance in time order.
//
// Reading a regular file (batch), every snapshot is kept until the end and
// sorted, so rows may come in any order (ORDER BY event_name, snap_id works
// too), and the labels know whether several databases are present. Reading
// a pipe or a followed file (stream), an instance's snapshot closes as soon
// as a row of a later snapshot of that instance arrives or the heading line
// is printed again (the next poll), and rows older than a closed snapshot
// are reported.
type parser struct {
	name  string
	diag  *input.Diagnostics
	opts  source.Options
	batch bool
	m     *Mapper

	hdr         *header
	hdrLine     int
	pendingHead string // a possible spool heading waiting for its underline
	pendingLine int
	rowsRead    int // rows since the last heading
	fields      []string
	times       timeReader // snapshot times, in --tz when they carry no offset
	others      timeReader // BEGIN_INTERVAL_TIME, STARTUP_TIME
	once        *input.OnceWarnings
	names       map[string]string // interned event names and labels
}

func newParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *parser {
	loc := opts.Loc()
	batch := !in.ModTime.IsZero() && !opts.Follow
	return &parser{
		name: in.Name, diag: in.Diag, opts: opts, batch: batch,
		m: NewMapper(MapperConfig{Name: in.Name, Diag: in.Diag, Batch: batch, Keep: opts.KeepEvent, Emit: emit,
			Cumulative: opts.Counts.Resolve(source.CountsCumulative) == source.CountsCumulative}),
		times: timeReader{loc: loc}, others: timeReader{loc: loc},
		once: input.NewOnceWarnings(in.Diag, in.Name), names: map[string]string{},
	}
}

// intern returns one copy of a repeated text: fields are slices of their
// line, which a kept snapshot would otherwise hold on to.
func (p *parser) intern(s string) string {
	if v, ok := p.names[s]; ok {
		return v
	}
	if len(p.names) > 1<<16 {
		return strings.Clone(s) // garbage input: do not grow without bound
	}
	s = strings.Clone(s)
	p.names[s] = s
	return s
}

// warn prints a warning once per distinct text.
func (p *parser) warn(format string, args ...any) { p.diag.Warn(p.name, format, args...) }

func (p *parser) malformed(line int, format string, args ...any) {
	p.diag.Malformed(p.name, line, fmt.Sprintf(format, args...))
}

// line handles input line n (1-based), without its line ending.
func (p *parser) Line(n int, text string, tooLong bool) error {
	if n == 1 {
		text = strings.TrimPrefix(text, "\ufeff") // a byte-order mark from a Windows export
	}
	if tooLong {
		if p.hdr != nil {
			p.malformed(n, "line longer than %d bytes", maxLineLen)
		}
		return nil
	}
	if p.pendingHead != "" {
		head, headLine := p.pendingHead, p.pendingLine
		p.pendingHead = ""
		if h, ok := parseSpoolHeader(head, text); ok {
			return p.setHeader(h, headLine)
		}
		if p.hdr != nil {
			p.malformed(headLine, "looks like a heading line but has no underline of dashes below it")
		}
	}
	t := strings.TrimSpace(text)
	switch {
	case t == "", isChatter(t), isUnderline(t):
		return nil
	case hasFold(t, "wait_count"):
		if h, ok := parseCSVHeader(t); ok {
			return p.setHeader(h, n)
		}
		if spoolHeaderCandidate(t) {
			p.pendingHead, p.pendingLine = text, n
			return nil
		}
	}
	if p.hdr == nil {
		return nil // banners and other output before the first heading
	}
	return p.row(n, text)
}

// setHeader starts a table. In stream mode a CSV heading printed again
// after rows is the next poll (SQL*Plus and SQLcl print CSV headings once per
// query): the snapshots read so far are complete. A spool heading is also
// repeated at page breaks, inside a poll, so it closes nothing.
func (p *parser) setHeader(h header, n int) error {
	if h.col[roleTime] < 0 {
		return fmt.Errorf("%s:%d: %w", p.name, n, errNoTimeColumn)
	}
	if p.rowsRead > 0 && !p.batch && h.layout.sep != 0 {
		if err := p.m.ClosePoll(); err != nil {
			return err
		}
	}
	p.hdr, p.hdrLine, p.rowsRead = &h, n, 0
	if p.opts.Unit != 0 && p.opts.Unit != h.unit {
		p.once.Warn("unit", "--unit %s ignored: the column %s gives the unit (%s)", p.opts.Unit, strings.ToUpper(h.names[h.col[roleBound]]), h.unit)
	}
	if p.opts.Bound == hist.LowerBound {
		p.once.Warn("bound", "--bound lower ignored: Oracle's WAIT_TIME_MILLI/MICRO are upper bounds")
	}
	return nil
}

// row parses a data line and files it into its snapshot.
func (p *parser) row(n int, text string) error {
	fields, err := p.hdr.layout.split(text, p.fields)
	if err != nil {
		p.malformed(n, "%v", err)
		return nil
	}
	p.fields = fields
	if len(fields) != len(p.hdr.names) {
		p.malformed(n, "%d fields, but the heading at line %d has %d columns", len(fields), p.hdrLine, len(p.hdr.names))
		return nil
	}
	p.rowsRead++
	r, reason := p.parseRow(n, fields)
	if reason != "" {
		p.malformed(n, "%s", reason)
		return nil
	}
	if r == nil {
		return nil // filtered out by --event
	}
	return p.m.Add(*r)
}

// parseRow reads the fields of a data line. It returns a reason when the
// line is malformed, and a nil row for an event --event does not keep.
func (p *parser) parseRow(n int, f []string) (*Row, string) {
	h := p.hdr
	r := &Row{Line: n, Unit: h.unit}
	r.Event = p.intern(f[h.col[roleEvent]])
	if r.Event == "" {
		return nil, "empty event name"
	}
	if !p.m.Keep(r.Event) {
		return nil, ""
	}
	var err error
	if r.Bound, err = parseNumber(f[h.col[roleBound]]); err != nil {
		return nil, fmt.Sprintf("%s: %v", strings.ToUpper(h.names[h.col[roleBound]]), err)
	}
	if _, err = classifyBound(r.Bound); err != nil { // checked here to report the first problem of the line
		return nil, err.Error()
	}
	countText := f[h.col[roleCount]]
	if r.Count, err = parseNumber(countText); err != nil || r.Count < 0 || r.Count != math.Trunc(r.Count) {
		return nil, fmt.Sprintf("WAIT_COUNT %q is not a whole number of waits", countText)
	}
	if strings.ContainsAny(countText, "eE") {
		p.once.Warn("exponent", "WAIT_COUNT printed in scientific notation (line %d: %s) is rounded: set numwidth 20 "+
			"or use the queries in sql/, which print exact numbers", n, countText)
	}
	var ok bool
	timeName := strings.ToUpper(h.names[h.col[roleTime]])
	if r.End, ok = p.times.parse(f[h.col[roleTime]]); !ok {
		return nil, fmt.Sprintf("cannot read the %s %q (use YYYY-MM-DD HH24:MI:SS as the queries in sql/ do)", timeName, f[h.col[roleTime]])
	}
	// The other times of the row are read in the zone of its snapshot time:
	// GV$INSTANCE.STARTUP_TIME is a DATE without offset while the polls'
	// SYSTIMESTAMP has one, and both are the server's clock.
	p.others.setLocation(r.End.Location())
	if c := h.col[roleBegin]; c >= 0 && f[c] != "" {
		// only --counts interval needs it: an unreadable one is left out
		if r.Begin, ok = p.others.parse(f[c]); !ok {
			p.once.Warn("begin", "cannot read the BEGIN_INTERVAL_TIME %q (line %d); not used", f[c], n)
		}
	}
	if c := h.col[roleStartup]; c >= 0 {
		r.Startup = p.intern(f[c])
		r.StartupAt, _ = p.others.parse(f[c])
	}
	if c := h.col[roleDBID]; c >= 0 {
		if r.DBID = p.intern(f[c]); r.DBID == "" {
			return nil, "empty DBID"
		}
	}
	if c := h.col[roleInstance]; c >= 0 {
		if r.Instance = p.intern(f[c]); r.Instance == "" {
			return nil, "empty " + strings.ToUpper(h.names[c])
		}
	}
	return r, ""
}

// finish handles the end of the input.
func (p *parser) finish() error {
	if p.hdr == nil && p.pendingHead == "" {
		p.once.Warn("noheader", "no heading line with EVENT_NAME (or EVENT), WAIT_TIME_MILLI (or WAIT_TIME_MICRO) and WAIT_COUNT found")
	}
	return p.m.Finish()
}

// End finishes the input (see input.LineParser).
func (p *parser) End(bool) error { return p.finish() }
