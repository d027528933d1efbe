package awr

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// Row is one bucket of one event of one instance at one snapshot, as the
// AWR export (DBA_HIST_EVENT_HISTOGRAM ⋈ DBA_HIST_SNAPSHOT) and the
// GV$EVENT_HISTOGRAM(_MICRO) polls give it. The file readers of this package
// and the live oracle:// source both turn their rows into Rows and hand them
// to a Mapper, so the row mapping, the deltas, the restarts and the capped
// last bucket are one code path.
type Row struct {
	// Line locates the row in messages: the input line, or the row number
	// of a query result.
	Line int
	// DBID and Instance identify the instance (either may be empty: one
	// database, one instance). INSTANCE_NUMBER or INST_ID.
	DBID, Instance string
	// End is the snapshot time: END_INTERVAL_TIME or the poll's SAMPLE_TIME.
	End time.Time
	// Begin is BEGIN_INTERVAL_TIME (zero when absent); only --counts
	// interval uses it.
	Begin time.Time
	// Startup is STARTUP_TIME as printed ("" when absent): a change is a
	// restart. StartupAt is its time (zero when unknown); a startup inside
	// a window makes the counts since startup an interval.
	Startup   string
	StartupAt time.Time
	// Event is EVENT_NAME (or EVENT).
	Event string
	// Unit is the bound's unit: Millisecond for WAIT_TIME_MILLI,
	// Microsecond for WAIT_TIME_MICRO.
	Unit hist.Unit
	// Bound is WAIT_TIME_MILLI or WAIT_TIME_MICRO: the exclusive upper
	// bound of the bucket, or a sentinel for the open top bucket.
	Bound float64
	// Count is WAIT_COUNT: cumulative since startup (or the window's waits
	// with Cumulative false).
	Count float64
}

// MapperConfig says how a Mapper turns rows into intervals.
type MapperConfig struct {
	// Name is the source name: an instance's intervals carry "NAME@INST".
	Name string
	// Diag receives malformed rows and warnings (nil: dropped).
	Diag *input.Diagnostics
	// Cumulative says counts are cumulative since startup (Oracle's), so
	// intervals are deltas between snapshots; false: every snapshot holds
	// its own window's counts (--counts interval).
	Cumulative bool
	// Batch keeps every snapshot until Finish and sorts them, so rows may
	// come in any order; otherwise an instance's snapshot closes when a row
	// of a later snapshot arrives or ClosePoll is called, and rows must come
	// in time order per instance.
	Batch bool
	// Keep says which events to keep (nil: all); see Mapper.Keep.
	Keep func(event string) bool
	// Emit receives the intervals.
	Emit func(stream.Interval) error
}

// Mapper turns Rows into stream intervals: snapshots per instance, deltas
// between them, restarts (a new STARTUP_TIME or a counter going down) as
// gaps, the smallest bound of a series as its zero bucket and the open top
// bucket read as [P, 2P) and flagged capped (see the package comment).
type Mapper struct {
	cfg  MapperConfig
	once *input.OnceWarnings

	instances map[instanceID]*instance
	instOrder []instanceID
	dbids     []string
	open      map[instanceID]*snapshot           // stream mode
	kept      map[instanceID]map[int64]*snapshot // batch mode
	filtered  []string                           // events skipped by Keep
	keptRows  int
}

// NewMapper returns a Mapper.
func NewMapper(cfg MapperConfig) *Mapper {
	if cfg.Emit == nil {
		cfg.Emit = func(stream.Interval) error { return nil }
	}
	return &Mapper{cfg: cfg, once: input.NewOnceWarnings(cfg.Diag, cfg.Name), instances: map[instanceID]*instance{},
		open: map[instanceID]*snapshot{}, kept: map[instanceID]map[int64]*snapshot{}}
}

// Keep says whether rows of the event are wanted (the --event filter). Call
// it before building a Row: it remembers the events left out, which Finish
// names when no row was kept.
func (m *Mapper) Keep(event string) bool {
	if m.cfg.Keep == nil || m.cfg.Keep(event) {
		return true
	}
	if !slices.Contains(m.filtered, event) && len(m.filtered) < 100 {
		m.filtered = append(m.filtered, event)
	}
	return false
}

// warn prints a warning once per distinct text.
func (m *Mapper) warn(format string, args ...any) { m.cfg.Diag.Warn(m.cfg.Name, format, args...) }

func (m *Mapper) malformed(line int, format string, args ...any) {
	m.cfg.Diag.Malformed(m.cfg.Name, line, fmt.Sprintf(format, args...))
}

// Add files a row into its snapshot. A row that is wrong on its own (a bound
// that is no Oracle bucket, a negative count) or contradicts its snapshot's
// other rows is reported as malformed and skipped; the error is only the
// Emit callback's.
func (m *Mapper) Add(r Row) error {
	b, err := classifyBound(r.Bound)
	if err != nil {
		m.malformed(r.Line, "%v", err)
		return nil
	}
	if r.Event == "" {
		m.malformed(r.Line, "empty event name")
		return nil
	}
	if !(r.Count >= 0) {
		m.malformed(r.Line, "WAIT_COUNT %g is not a whole number of waits", r.Count)
		return nil
	}
	m.keptRows++
	return m.file(&row{line: r.Line, id: instanceID{dbid: r.DBID, inst: r.Instance}, end: r.End, begin: r.Begin,
		startup: r.Startup, startupAt: r.StartupAt, event: r.Event, unit: r.Unit, bucket: b, count: r.Count})
}

// file puts a row into its snapshot.
func (m *Mapper) file(r *row) error {
	in := m.instance(r.id)
	if m.cfg.Batch {
		byTime := m.kept[r.id]
		if byTime == nil {
			byTime = map[int64]*snapshot{}
			m.kept[r.id] = byTime
		}
		s := byTime[r.end.UnixNano()]
		if s == nil {
			s = newSnapshot(r)
			byTime[r.end.UnixNano()] = s
		}
		m.addTo(s, r)
		return nil
	}
	if s := m.open[r.id]; s != nil {
		switch {
		case r.end.Equal(s.end):
			m.addTo(s, r)
			return nil
		case r.end.Before(s.end):
			m.tooOld(r, s.end)
			return nil
		}
		delete(m.open, r.id)
		if err := m.process(in, s); err != nil {
			return err
		}
	}
	if in.prev != nil && !r.end.After(in.prev.end) {
		m.tooOld(r, in.prev.end)
		return nil
	}
	s := newSnapshot(r)
	m.open[r.id] = s
	m.addTo(s, r)
	return nil
}

func (m *Mapper) addTo(s *snapshot, r *row) {
	if reason := s.add(r); reason != "" {
		m.malformed(r.line, "%s", reason)
	}
}

func (m *Mapper) tooOld(r *row, read time.Time) {
	if r.end.Equal(read) {
		m.malformed(r.line, "row of the snapshot at %s comes after that snapshot was closed by a repeated heading line: "+
			"when streaming, print each poll under one heading (set pagesize 50000, as the queries in sql/ do)", stamp(r.end))
		return
	}
	m.malformed(r.line, "row of %s is older than the snapshot at %s already read: when streaming, rows must come in time "+
		"order (ORDER BY snap_id or sample time, as the queries in sql/ do)", stamp(r.end), stamp(read))
}

// instance returns the state of an instance, created on its first row.
func (m *Mapper) instance(id instanceID) *instance {
	if in := m.instances[id]; in != nil {
		return in
	}
	if id.dbid != "" && !slices.Contains(m.dbids, id.dbid) {
		m.dbids = append(m.dbids, id.dbid)
	}
	label := id.inst
	if id.dbid != "" && id.dbid != m.dbids[0] {
		label = instanceLabel(id) // stream mode: the first database keeps plain instance numbers
	}
	in := newInstance(id, label, sourceName(m.cfg.Name, label))
	m.instances[id] = in
	m.instOrder = append(m.instOrder, id)
	return in
}

// process hands a complete snapshot to its instance and emits the result.
func (m *Mapper) process(in *instance, s *snapshot) error {
	ivs, err := in.next(s, m.cfg.Cumulative, m)
	if err != nil {
		return fmt.Errorf("%s:%d: %w", m.cfg.Name, s.line, err)
	}
	for _, iv := range ivs {
		if err := m.cfg.Emit(iv); err != nil {
			return err
		}
	}
	return nil
}

// ClosePoll says the rows of every open snapshot are complete (a poll has
// been read) and emits what they close, oldest first. Batch mode ignores it.
func (m *Mapper) ClosePoll() error {
	if m.cfg.Batch {
		return nil
	}
	var open []*snapshot
	for _, id := range m.instOrder {
		if s := m.open[id]; s != nil {
			open = append(open, s)
		}
	}
	clear(m.open)
	slices.SortStableFunc(open, func(a, b *snapshot) int { return a.end.Compare(b.end) })
	for _, s := range open {
		if err := m.process(m.instances[s.id], s); err != nil {
			return err
		}
	}
	return nil
}

// Finish handles the end of the rows: it closes the open snapshots (stream)
// or processes every kept one (batch), and warns when Keep left out every
// row.
func (m *Mapper) Finish() error {
	if m.keptRows == 0 && len(m.filtered) > 0 {
		m.warn("no rows match --event; the input has %s", listEvents(m.filtered))
	}
	if !m.cfg.Batch {
		return m.ClosePoll()
	}
	return m.finishBatch()
}

// finishBatch processes every instance's snapshots in time order and emits
// all intervals ordered by start time. With several databases every
// instance is labelled dbid:inst.
func (m *Mapper) finishBatch() error {
	var all []stream.Interval
	for _, id := range m.instOrder {
		in := m.instances[id]
		if len(m.dbids) > 1 {
			in.label = instanceLabel(id)
			in.source = sourceName(m.cfg.Name, in.label)
		}
		byTime := m.kept[id]
		delete(m.kept, id)
		snaps := make([]*snapshot, 0, len(byTime))
		for _, s := range byTime {
			snaps = append(snaps, s)
		}
		slices.SortFunc(snaps, func(a, b *snapshot) int { return a.end.Compare(b.end) })
		for _, s := range snaps {
			ivs, err := in.next(s, m.cfg.Cumulative, m)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", m.cfg.Name, s.line, err)
			}
			all = append(all, ivs...)
		}
	}
	slices.SortStableFunc(all, func(a, b stream.Interval) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Source, b.Source))
	})
	for _, iv := range all {
		if err := m.cfg.Emit(iv); err != nil {
			return err
		}
	}
	return nil
}

// ParseTime reads a timestamp as the queries in sql/ and Oracle's default
// NLS formats print it (see the package comment); a text without a UTC
// offset is in loc. ok is false when no layout fits.
func ParseTime(text string, loc *time.Location) (t time.Time, ok bool) {
	r := timeReader{loc: loc}
	return r.parse(text)
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
// stream.Grid, so each instance is its own source: "NAME@LABEL".
func sourceName(name, label string) string {
	if label == "" {
		return name
	}
	return name + "@" + label
}
