package pylatencymap

import (
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/tracehist"
	"github.com/latscope/latscope/stream"
)

// Warnings, printed once per input.
const (
	warnNoBound = "no datasource line and the label does not say; assuming upper-bound (Oracle) buckets, " +
		"use --bound lower for DTrace/SystemTap/bcc data"
	warnNoUnit = "record at line %d has no latencyunit line; assuming millisec"
)

// noLabel names the series of records that never had a label line.
const noLabel = "(no label)"

// oracleLabelHints are label fragments naming an Oracle source, whose
// buckets are upper bounds even without a datasource line.
var oracleLabelHints = []string{"event_histogram", "v$", "gv$", "dba_hist", "awr"}

// settings are the header values a record uses; a record that omits a header
// keeps the previous record's value, as PyLatencyMap does.
type settings struct {
	label      string
	unit       hist.Unit
	datasource string
	bound      hist.BoundKind // from the datasource line
}

// snapshot is a complete record ready for the Differ.
type snapshot struct {
	line  int
	when  moment
	key   stream.Key
	unit  hist.Unit
	bound hist.BoundKind
	hist  *hist.Histogram
}

// sameGrid says two snapshots' counters can be subtracted.
func (s *snapshot) sameGrid(o *snapshot) bool {
	return s.key == o.key && s.unit == o.unit && s.bound == o.bound
}

// parser turns lines into records and records into intervals.
type parser struct {
	name string
	diag *input.Diagnostics
	opts source.Options
	emit func(stream.Interval) error

	rec      *record // the open record, nil outside records
	spare    []dataLine
	settings settings
	prev     *snapshot // the last record fed to the Differ
	differ   *stream.Differ
	clock    clock
	once     *input.OnceWarnings
}

func newParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *parser {
	return &parser{name: in.Name, diag: in.Diag, opts: opts, emit: emit, once: input.NewOnceWarnings(in.Diag, in.Name)}
}

// line handles input line n (1-based).
func (p *parser) Line(n int, text string, tooLong bool) error {
	t := strings.TrimSpace(text)
	if p.rec == nil {
		if !tooLong && isMarker(t, beginMarker) {
			p.open(n)
		}
		return nil // text outside records is chatter
	}
	switch {
	case tooLong:
		p.rec.addProblem(n, true, "line longer than %d bytes", maxLineLen)
	case isMarker(t, endMarker):
		p.rec.flushKeyLine()
		rec := p.rec
		p.rec, p.spare = nil, rec.data
		return p.complete(rec)
	case isMarker(t, beginMarker):
		p.drop(p.rec, "has no <end record> before the next <begin record>")
		p.open(n)
	case t == "":
		p.rec.flushKeyLine()
	default:
		p.dataLine(n, t)
	}
	return nil
}

// dataLine reads a record line that is neither a marker nor blank: a
// header, a "value, count" line, or raw DTrace quantize() / SystemTap
// @hist_log output, read as PyLatencyMap's dtrace and systemtap connectors
// did: rows are lower-bound power-of-two buckets, the "value" header and the
// aggregation's key line before it are dropped, "~" lines skipped, negative
// buckets dropped.
func (p *parser) dataLine(n int, t string) {
	if key := headerKey(t); key != "" {
		p.rec.flushKeyLine()
		p.rec.parseHeader(n, key, t, p.parseDate)
		return
	}
	kind, value, count, reason := tracehist.ParseRawLine(t)
	if kind == tracehist.RawHeader {
		p.rec.raw, p.rec.keyLine = true, 0 // the line before was the key
		return
	}
	p.rec.flushKeyLine()
	switch kind {
	case tracehist.RawElision:
		p.rec.raw = true
	case tracehist.RawRow:
		p.rec.raw = true
		switch {
		case reason != "":
			p.rec.addProblem(n, true, "%s", reason)
		case value < 0:
			p.rec.negative += count
		default:
			p.rec.data = append(p.rec.data, dataLine{line: n, value: value, count: count})
		}
	default:
		if !strings.Contains(t, ",") {
			// Maybe the key line DTrace prints before a histogram: held
			// until the next line tells.
			p.rec.keyLine = n
			return
		}
		p.rec.parseData(n, t)
	}
}

// open starts a record at line n, reusing the last record's data buffer.
func (p *parser) open(n int) {
	p.rec = &record{line: n, data: p.spare[:0]}
}

// finish handles the end of input: an open record is truncated, unless the
// input ended because reading was cancelled (a --follow run being stopped).
func (p *parser) finish(cancelled bool) {
	if p.rec != nil && !cancelled {
		p.drop(p.rec, "is not closed by <end record> at the end of the input")
	}
	p.rec = nil
}

// drop reports an incomplete record: its counts are not used because a
// partial cumulative record would look like a counter reset.
func (p *parser) drop(rec *record, why string) {
	p.report(rec)
	p.diag.Malformed(p.name, rec.line, "record "+why+"; dropped (a partial cumulative record would look like a counter reset)")
}

// report passes the record's malformed lines on.
func (p *parser) report(rec *record) {
	for _, pr := range rec.problems {
		p.diag.Malformed(p.name, pr.line, pr.reason)
	}
}

// parseDate reads a text date, warning once about dates or zones it cannot
// read.
func (p *parser) parseDate(text string) (time.Time, bool) {
	t, unknownZone, ok := parseDateIn(text, p.opts.Loc())
	if !ok {
		p.once.Warn("date", "cannot read the date %q; using the microsecond timestamps only", text)
		return time.Time{}, false
	}
	if unknownZone != "" {
		p.once.Warn("zone "+unknownZone, "unknown time zone %q in dates; reading them in %s (set --tz)", unknownZone, p.opts.Loc())
	}
	return t, true
}

// complete turns a closed record into a snapshot and feeds it on.
func (p *parser) complete(rec *record) error {
	p.report(rec)
	s := p.resolve(rec)
	if !p.opts.KeepEvent(s.label) {
		p.once.Warn("event", "records labelled %q do not match --event; skipped", s.label)
		return nil
	}
	bound := p.bound(s, rec.raw)
	if rec.negative > 0 {
		p.once.Warn("negative", "record at line %d: %.0f events in negative buckets dropped (latencies cannot be negative)", rec.line, rec.negative)
	}
	h, ok := p.build(rec, s.unit, bound)
	if !ok {
		return nil
	}
	snap := &snapshot{
		line:  rec.line,
		when:  moment{usec: rec.usec, hasUsec: rec.hasUsec, date: rec.date, hasDate: rec.hasDate},
		key:   stream.Key{Event: s.label},
		unit:  s.unit,
		bound: bound,
		hist:  h,
	}
	return p.use(snap, rec.damaged)
}

// resolve fills the headers a record omits from the previous records.
func (p *parser) resolve(rec *record) settings {
	s := &p.settings
	if rec.label != "" {
		s.label = rec.label
	}
	if s.label == "" {
		s.label = noLabel
	}
	if rec.unit != 0 {
		s.unit = rec.unit
	}
	if rec.bound != hist.BoundUnknown {
		s.datasource, s.bound = rec.datasource, rec.bound
	}
	if s.unit == 0 {
		p.once.Warn("unit", warnNoUnit, rec.line)
		s.unit = hist.Millisecond
	}
	return *s
}

// bound picks the bucket semantics: --bound, else the datasource line, else
// lower bound for raw DTrace/SystemTap rows, else an Oracle label, else
// upper bound with a warning (never the silent lower bound PyLatencyMap
// applies to Oracle data).
func (p *parser) bound(s settings, raw bool) hist.BoundKind {
	if p.opts.Bound != hist.BoundUnknown {
		if s.bound != hist.BoundUnknown && s.bound != p.opts.Bound {
			p.once.Warn("bound", "--bound %s overrides the records' \"datasource, %s\" (%s-bound buckets)",
				p.opts.Bound, s.datasource, s.bound)
		}
		return p.opts.Bound
	}
	if s.bound != hist.BoundUnknown {
		return s.bound
	}
	if raw {
		return hist.LowerBound
	}
	if labelNamesOracle(s.label) {
		return hist.UpperBound
	}
	p.once.Warn("nobound", warnNoBound)
	return hist.UpperBound
}

func labelNamesOracle(label string) bool {
	l := strings.ToLower(label)
	for _, hint := range oracleLabelHints {
		if strings.Contains(l, hint) {
			return true
		}
	}
	return false
}

// build sums the record's data lines into a cumulative histogram (RAC rows
// repeating a bucket add up). ok is false for a record without data.
func (p *parser) build(rec *record, unit hist.Unit, bound hist.BoundKind) (*hist.Histogram, bool) {
	h := hist.NewBuckets(unit)
	used := 0
	for _, d := range rec.data {
		if d.value == 0 && bound != hist.LowerBound {
			p.diag.Malformed(p.name, d.line, "bucket value 0 has no meaning for upper-bound buckets")
			continue
		}
		if err := h.AddBound(bound, d.value, d.count); err != nil {
			p.diag.Malformed(p.name, d.line, err.Error())
			continue
		}
		used++
	}
	if used == 0 {
		if !rec.damaged {
			p.diag.Malformed(p.name, rec.line, "record holds no usable data lines; skipped")
		}
		return nil, false
	}
	return h, true
}

// use feeds a snapshot to the Differ and emits the interval it closes.
func (p *parser) use(snap *snapshot, damaged bool) error {
	if p.prev == nil {
		if damaged {
			p.skipDamaged(snap)
			return nil
		}
		p.clock.start(snap.when, stream.RelativeStart)
		return p.baseline(snap)
	}
	delta, ok := elapsed(p.prev.when, snap.when)
	if damaged && (!ok || !snap.sameGrid(p.prev) || wentBack(snap.hist, p.prev.hist)) {
		p.skipDamaged(snap)
		return nil
	}
	if !ok {
		return p.restartUnknownTime(snap)
	}
	end, behind := p.clock.advance(snap.when, delta)
	if behind {
		p.once.Warn("behind", "record at line %d: its date %s is behind the time its microsecond timestamp gives (%s); "+
			"keeping the microsecond clock", snap.line, snap.when.date.Format(time.DateTime), end.Format(time.DateTime))
	}
	if !snap.sameGrid(p.prev) {
		p.diag.Warn(p.name, "record at line %d changes %s; starting a new baseline", snap.line, p.change(snap))
		if err := p.emitInterval(stream.Interval{Source: p.name, Start: end.Add(-delta), Duration: delta, Relative: !p.clock.wall, Gap: true}); err != nil {
			return err
		}
		return p.baseline(snap)
	}
	iv, ok, err := p.differ.Next(end, delta, !p.clock.wall, []stream.SeriesHist{{Key: snap.key, Hist: snap.hist}})
	if err != nil {
		return fmt.Errorf("%s:%d: %w", p.name, snap.line, err)
	}
	p.prev = snap
	if !ok {
		return nil
	}
	return p.emitInterval(iv)
}

// baseline starts a new Differ whose baseline is snap.
func (p *parser) baseline(snap *snapshot) error {
	p.differ = stream.NewDiffer(p.name)
	_, _, err := p.differ.Next(p.clock.now, 0, !p.clock.wall, []stream.SeriesHist{{Key: snap.key, Hist: snap.hist}})
	if err != nil {
		return fmt.Errorf("%s:%d: %w", p.name, snap.line, err)
	}
	p.prev = snap
	return nil
}

// restartUnknownTime handles a record whose distance from the previous one
// cannot be told: it becomes a new baseline, with a gap up to its date when
// the date places it (after the clock: intervals never overlap).
func (p *parser) restartUnknownTime(snap *snapshot) error {
	p.diag.Warn(p.name, "record at line %d: cannot tell how long after the previous record it was taken "+
		"(its timestamp does not advance or jumps by more than a year, and the dates do not say); starting a new baseline", snap.line)
	if p.clock.canAnchor(snap.when) && (!p.clock.wall || !snap.when.date.Before(p.clock.now)) {
		from := p.clock.now
		p.clock.now, p.clock.wall = snap.when.date, true
		if gap := snap.when.date.Sub(from); gap > 0 && p.clock.emitted {
			if err := p.emitInterval(stream.Interval{Source: p.name, Start: from, Duration: gap, Gap: true}); err != nil {
				return err
			}
		}
	}
	return p.baseline(snap)
}

// skipDamaged reports a record whose bad lines may have hidden counts and
// whose counts look like a reset: using it would invent a reset and then a
// burst. Its events are counted in the next interval instead.
// It is a warning, not one more malformed line: the lines themselves were
// already counted.
func (p *parser) skipDamaged(snap *snapshot) {
	p.diag.Warn(p.name, "record at line %d skipped: its malformed lines may hide bucket counts "+
		"(its events are counted in the next interval)", snap.line)
}

// change describes what differs between the previous snapshot and snap.
func (p *parser) change(snap *snapshot) string {
	var what []string
	if snap.key != p.prev.key {
		what = append(what, fmt.Sprintf("the label from %q to %q", p.prev.key.Event, snap.key.Event))
	}
	if snap.unit != p.prev.unit {
		what = append(what, fmt.Sprintf("the unit from %s to %s", p.prev.unit, snap.unit))
	}
	if snap.bound != p.prev.bound {
		what = append(what, fmt.Sprintf("the buckets from %s to %s bounds", p.prev.bound, snap.bound))
	}
	return strings.Join(what, " and ")
}

func (p *parser) emitInterval(iv stream.Interval) error {
	p.clock.emitted = true
	return p.emit(iv)
}

// wentBack says a counter of cur is below prev (cur is not a later snapshot
// of the same counters).
func wentBack(cur, prev *hist.Histogram) bool {
	_, reset, err := cur.Sub(prev)
	return err != nil || reset
}

// End finishes the input (see input.LineParser).
func (p *parser) End(cancelled bool) error {
	p.finish(cancelled)
	return nil
}
