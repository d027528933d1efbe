package awr

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// row is one parsed data line: one bucket of one event of one instance at
// one snapshot.
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

// parser reads lines into rows, rows into snapshots, and hands snapshots to
// their instance in time order.
//
// Reading a regular file (batch), it keeps every snapshot until the end and
// sorts them, so rows may come in any order (ORDER BY event_name, snap_id
// works too), and the labels know whether several databases are present.
// Reading a pipe or a followed file (stream), it closes an instance's
// snapshot as soon as a row of a later snapshot of that instance arrives or
// the heading line is printed again (the next poll), and reports rows older
// than a closed snapshot.
type parser struct {
	name       string
	diag       *source.Diagnostics
	opts       source.Options
	emit       func(stream.Interval) error
	batch      bool
	cumulative bool

	hdr         *header
	hdrLine     int
	pendingHead string // a possible spool heading waiting for its underline
	pendingLine int
	rowsRead    int // rows since the last heading
	fields      []string
	times       timeReader // snapshot times, in --tz when they carry no offset
	others      timeReader // BEGIN_INTERVAL_TIME, STARTUP_TIME
	warned      map[string]bool

	instances map[instanceID]*instance
	instOrder []instanceID
	dbids     []string
	open      map[instanceID]*snapshot           // stream mode
	kept      map[instanceID]map[int64]*snapshot // batch mode
	filtered  []string                           // events skipped by --event
	keptRows  int
	names     map[string]string // interned event names and labels
}

func newParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *parser {
	loc := opts.Loc()
	return &parser{
		name: in.Name, diag: in.Diag, opts: opts, emit: emit,
		batch:      !in.ModTime.IsZero() && !opts.Follow,
		cumulative: opts.Counts.Resolve(source.CountsCumulative) == source.CountsCumulative,
		times:      timeReader{loc: loc}, others: timeReader{loc: loc},
		warned: map[string]bool{}, instances: map[instanceID]*instance{},
		open: map[instanceID]*snapshot{}, kept: map[instanceID]map[int64]*snapshot{},
		names: map[string]string{},
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

// warnOnce prints a warning the first time its kind occurs in this input.
func (p *parser) warnOnce(kind, format string, args ...any) {
	if !p.warned[kind] {
		p.warned[kind] = true
		p.warn(format, args...)
	}
}

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
		if err := p.closeAll(); err != nil {
			return err
		}
	}
	p.hdr, p.hdrLine, p.rowsRead = &h, n, 0
	if p.opts.Unit != 0 && p.opts.Unit != h.unit {
		p.warnOnce("unit", "--unit %s ignored: the column %s gives the unit (%s)", p.opts.Unit, strings.ToUpper(h.names[h.col[roleBound]]), h.unit)
	}
	if p.opts.Bound == hist.LowerBound {
		p.warnOnce("bound", "--bound lower ignored: Oracle's WAIT_TIME_MILLI/MICRO are upper bounds")
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
	p.keptRows++
	return p.file(r)
}

// parseRow reads the fields of a data line. It returns a reason when the
// line is malformed, and a nil row for an event --event does not keep.
func (p *parser) parseRow(n int, f []string) (*row, string) {
	h := p.hdr
	r := &row{line: n, unit: h.unit}
	r.event = p.intern(f[h.col[roleEvent]])
	if r.event == "" {
		return nil, "empty event name"
	}
	if !p.opts.KeepEvent(r.event) {
		if !slices.Contains(p.filtered, r.event) && len(p.filtered) < 100 {
			p.filtered = append(p.filtered, r.event)
		}
		return nil, ""
	}
	bound, err := parseNumber(f[h.col[roleBound]])
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", strings.ToUpper(h.names[h.col[roleBound]]), err)
	}
	if r.bucket, err = classifyBound(bound); err != nil {
		return nil, err.Error()
	}
	countText := f[h.col[roleCount]]
	if r.count, err = parseNumber(countText); err != nil || r.count < 0 || r.count != math.Trunc(r.count) {
		return nil, fmt.Sprintf("WAIT_COUNT %q is not a whole number of waits", countText)
	}
	if strings.ContainsAny(countText, "eE") {
		p.warnOnce("exponent", "WAIT_COUNT printed in scientific notation (line %d: %s) is rounded: set numwidth 20 "+
			"or use the queries in sql/, which print exact numbers", n, countText)
	}
	var ok bool
	timeName := strings.ToUpper(h.names[h.col[roleTime]])
	if r.end, ok = p.times.parse(f[h.col[roleTime]]); !ok {
		return nil, fmt.Sprintf("cannot read the %s %q (use YYYY-MM-DD HH24:MI:SS as the queries in sql/ do)", timeName, f[h.col[roleTime]])
	}
	// The other times of the row are read in the zone of its snapshot time:
	// GV$INSTANCE.STARTUP_TIME is a DATE without offset while the polls'
	// SYSTIMESTAMP has one, and both are the server's clock.
	p.others.setLocation(r.end.Location())
	if c := h.col[roleBegin]; c >= 0 && f[c] != "" {
		// only --counts interval needs it: an unreadable one is left out
		if r.begin, ok = p.others.parse(f[c]); !ok {
			p.warnOnce("begin", "cannot read the BEGIN_INTERVAL_TIME %q (line %d); not used", f[c], n)
		}
	}
	if c := h.col[roleStartup]; c >= 0 {
		r.startup = p.intern(f[c])
		r.startupAt, _ = p.others.parse(f[c])
	}
	if c := h.col[roleDBID]; c >= 0 {
		if r.id.dbid = p.intern(f[c]); r.id.dbid == "" {
			return nil, "empty DBID"
		}
	}
	if c := h.col[roleInstance]; c >= 0 {
		if r.id.inst = p.intern(f[c]); r.id.inst == "" {
			return nil, "empty " + strings.ToUpper(h.names[c])
		}
	}
	return r, ""
}

// file puts a row into its snapshot.
func (p *parser) file(r *row) error {
	in := p.instance(r.id)
	if p.batch {
		byTime := p.kept[r.id]
		if byTime == nil {
			byTime = map[int64]*snapshot{}
			p.kept[r.id] = byTime
		}
		s := byTime[r.end.UnixNano()]
		if s == nil {
			byTime[r.end.UnixNano()] = newSnapshot(r)
			s = byTime[r.end.UnixNano()]
		}
		p.addTo(s, r)
		return nil
	}
	if s := p.open[r.id]; s != nil {
		switch {
		case r.end.Equal(s.end):
			p.addTo(s, r)
			return nil
		case r.end.Before(s.end):
			p.tooOld(r, s.end)
			return nil
		}
		delete(p.open, r.id)
		if err := p.process(in, s); err != nil {
			return err
		}
	}
	if in.prev != nil && !r.end.After(in.prev.end) {
		p.tooOld(r, in.prev.end)
		return nil
	}
	s := newSnapshot(r)
	p.open[r.id] = s
	p.addTo(s, r)
	return nil
}

func (p *parser) addTo(s *snapshot, r *row) {
	if reason := s.add(r); reason != "" {
		p.malformed(r.line, "%s", reason)
	}
}

func (p *parser) tooOld(r *row, read time.Time) {
	if r.end.Equal(read) {
		p.malformed(r.line, "row of the snapshot at %s comes after that snapshot was closed by a repeated heading line: "+
			"when streaming, print each poll under one heading (set pagesize 50000, as the queries in sql/ do)", stamp(r.end))
		return
	}
	p.malformed(r.line, "row of %s is older than the snapshot at %s already read: when streaming, rows must come in time "+
		"order (ORDER BY snap_id or sample time, as the queries in sql/ do)", stamp(r.end), stamp(read))
}

// instance returns the state of an instance, created on its first row.
func (p *parser) instance(id instanceID) *instance {
	if in := p.instances[id]; in != nil {
		return in
	}
	if id.dbid != "" && !slices.Contains(p.dbids, id.dbid) {
		p.dbids = append(p.dbids, id.dbid)
	}
	label := id.inst
	if id.dbid != "" && id.dbid != p.dbids[0] {
		label = instanceLabel(id) // stream mode: the first database keeps plain instance numbers
	}
	in := newInstance(id, label, sourceName(p.name, label))
	p.instances[id] = in
	p.instOrder = append(p.instOrder, id)
	return in
}

// instanceLabel names an instance "dbid:inst" (or "dbid").
func instanceLabel(id instanceID) string {
	if id.inst == "" {
		return id.dbid
	}
	return id.dbid + ":" + id.inst
}

// sourceName names an instance's intervals. Instances are observed
// independently (their own snapshot times, restarts and gaps), and a
// stream.Interval's Source is the unit of observation in stream.Recording and
// stream.Grid, so each instance is its own source: "FILE@LABEL".
func sourceName(file, label string) string {
	if label == "" {
		return file
	}
	return file + "@" + label
}

// process hands a complete snapshot to its instance and emits the result.
func (p *parser) process(in *instance, s *snapshot) error {
	ivs, err := in.next(s, p.cumulative, p)
	if err != nil {
		return fmt.Errorf("%s:%d: %w", p.name, s.line, err)
	}
	for _, iv := range ivs {
		if err := p.emit(iv); err != nil {
			return err
		}
	}
	return nil
}

// closeAll processes every open snapshot (stream mode), oldest first.
func (p *parser) closeAll() error {
	var open []*snapshot
	for _, id := range p.instOrder {
		if s := p.open[id]; s != nil {
			open = append(open, s)
		}
	}
	clear(p.open)
	slices.SortStableFunc(open, func(a, b *snapshot) int { return a.end.Compare(b.end) })
	for _, s := range open {
		if err := p.process(p.instances[s.id], s); err != nil {
			return err
		}
	}
	return nil
}

// finish handles the end of the input.
func (p *parser) finish() error {
	if p.hdr == nil && p.pendingHead == "" {
		p.warnOnce("noheader", "no heading line with EVENT_NAME (or EVENT), WAIT_TIME_MILLI (or WAIT_TIME_MICRO) and WAIT_COUNT found")
	}
	if p.keptRows == 0 && len(p.filtered) > 0 {
		p.warn("no rows match --event; the input has %s", listEvents(p.filtered))
	}
	if !p.batch {
		return p.closeAll()
	}
	return p.finishBatch()
}

// finishBatch processes every instance's snapshots in time order and emits
// all intervals ordered by start time. With several databases in the input
// every instance is labelled dbid:inst.
func (p *parser) finishBatch() error {
	var all []stream.Interval
	for _, id := range p.instOrder {
		in := p.instances[id]
		if len(p.dbids) > 1 {
			in.label = instanceLabel(id)
			in.source = sourceName(p.name, in.label)
		}
		byTime := p.kept[id]
		delete(p.kept, id)
		snaps := make([]*snapshot, 0, len(byTime))
		for _, s := range byTime {
			snaps = append(snaps, s)
		}
		slices.SortFunc(snaps, func(a, b *snapshot) int { return a.end.Compare(b.end) })
		for _, s := range snaps {
			ivs, err := in.next(s, p.cumulative, p)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", p.name, s.line, err)
			}
			all = append(all, ivs...)
		}
	}
	slices.SortStableFunc(all, func(a, b stream.Interval) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Source, b.Source))
	})
	for _, iv := range all {
		if err := p.emit(iv); err != nil {
			return err
		}
	}
	return nil
}

// End finishes the input (see lines.Parser).
func (p *parser) End(bool) error { return p.finish() }
