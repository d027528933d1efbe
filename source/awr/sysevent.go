package awr

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
)

// The AWR wait-event totals extract: DBA_HIST_SYSTEM_EVENT joined to
// DBA_HIST_SNAPSHOT (sql/awr_system_event.sql), as CSV or SQL*Plus spool,
// read by `latscope awr`. Its columns, found by name in any case and order:
//
//	required  END_INTERVAL_TIME, EVENT_NAME, TOTAL_WAITS, TIME_WAITED_MICRO
//	optional  INSTANCE_NUMBER, DBID, STARTUP_TIME, BEGIN_INTERVAL_TIME, WAIT_CLASS
//
// The counters are cumulative since instance startup; SystemEventDeltas
// turns consecutive snapshots of an instance into per-window figures.

// SystemEventRow is one row of the extract: one event of one instance at
// one snapshot, its counters cumulative. A live reader of AWR ranges maps
// its SQL rows onto this type and hands them to SystemEventDeltas as the
// file reader does.
type SystemEventRow struct {
	Line            int // in the input, for messages; 0 for SQL rows
	DBID, Instance  string
	Startup         string // STARTUP_TIME as printed: a change is a restart
	StartupAt       time.Time
	Begin, End      time.Time
	WaitClass       string
	Event           string
	TotalWaits      float64
	TimeWaitedMicro float64
}

// EventDelta is what one event of one instance did between two snapshots.
type EventDelta struct {
	// Instance is INSTANCE_NUMBER, or DBID:INSTANCE_NUMBER when the input
	// holds several databases.
	Instance        string
	Begin, End      time.Time
	WaitClass       string
	Event           string
	Waits           float64
	TimeWaitedMicro float64
}

// sysEventColumns are the extract's columns by field; the first name found
// wins.
var sysEventColumns = [...][]string{
	seEnd: {"end_interval_time"}, seEvent: {"event_name", "event"}, seWaits: {"total_waits"},
	seTime: {"time_waited_micro"}, seInstance: {"instance_number", "inst_id"}, seDBID: {"dbid"},
	seStartup: {"startup_time"}, seBegin: {"begin_interval_time"}, seClass: {"wait_class"},
}

const (
	seEnd = iota
	seEvent
	seWaits
	seTime
	seInstance
	seDBID
	seStartup
	seBegin
	seClass
	seNumFields
	seRequired = seTime + 1 // fields before this one are required
)

// sysEventHeader maps the fields onto column indexes (−1: absent).
type sysEventHeader struct {
	col    [seNumFields]int
	layout layout
}

func newSysEventHeader(names []string, lay layout) (sysEventHeader, bool) {
	h := sysEventHeader{layout: lay}
	lower := make([]string, len(names))
	for i, n := range names {
		if !isIdentifier(n) {
			return h, false
		}
		lower[i] = strings.ToLower(n)
	}
	for f, wants := range sysEventColumns {
		h.col[f] = -1
		for _, w := range wants {
			if i := indexOf(lower, w); i >= 0 {
				h.col[f] = i
				break
			}
		}
		if f < seRequired && h.col[f] < 0 {
			return h, false
		}
	}
	return h, true
}

// IsSystemEventHeading says prefix (the start of an input) holds the
// extract's heading line, CSV or spool, before any data line.
func IsSystemEventHeading(prefix []byte) bool {
	lines := strings.Split(string(prefix), "\n")
	for i, l := range lines {
		if i >= detectMaxLines {
			break
		}
		t := strings.TrimSpace(l)
		if !hasFold(t, "time_waited_micro") {
			continue
		}
		if _, ok := sysEventCSVHeader(t); ok {
			return true
		}
		if i+1 < len(lines) {
			if _, ok := sysEventSpoolHeader(strings.TrimRight(l, "\r"), strings.TrimRight(lines[i+1], "\r")); ok {
				return true
			}
		}
	}
	return false
}

func sysEventCSVHeader(line string) (sysEventHeader, bool) {
	return csvHeading(line, newSysEventHeader)
}

func sysEventSpoolHeader(head, underline string) (sysEventHeader, bool) {
	return spoolHeading(head, underline, seRequired, newSysEventHeader)
}

// ErrNoSystemEventRows says an input held no row of the extract.
var ErrNoSystemEventRows = errors.New("no DBA_HIST_SYSTEM_EVENT rows (want a heading with END_INTERVAL_TIME, " +
	"EVENT_NAME, TOTAL_WAITS and TIME_WAITED_MICRO: sql/awr_system_event.sql)")

// ReadSystemEvents reads the extract from r. Times without an offset are
// in loc. A malformed data line is reported to diag with name:line and
// skipped; an input without a heading or rows is an error.
func ReadSystemEvents(r io.Reader, name string, loc *time.Location, diag *input.Diagnostics) ([]SystemEventRow, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineLen)
	rd := sysEventReader{name: name, diag: diag, times: timeReader{loc: loc}, others: timeReader{loc: loc}}
	var prev string
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimRight(sc.Text(), "\r")
		if n == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		rd.line(n, prev, text)
		prev = text
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	if len(rd.rows) == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrNoSystemEventRows)
	}
	return rd.rows, nil
}

type sysEventReader struct {
	name          string
	diag          *input.Diagnostics
	hdr           *sysEventHeader
	times, others timeReader
	fields        []string
	rows          []SystemEventRow
}

// line handles line n; prev is the line before it (a spool heading when
// this one is its underline).
func (rd *sysEventReader) line(n int, prev, text string) {
	t := strings.TrimSpace(text)
	if t == "" || isChatter(t) {
		return
	}
	if hasFold(t, "time_waited_micro") {
		if h, ok := sysEventCSVHeader(t); ok {
			rd.hdr = &h
			return
		}
		return // a spool heading: its underline follows
	}
	if isUnderline(t) {
		if h, ok := sysEventSpoolHeader(prev, text); ok {
			rd.hdr = &h
		}
		return
	}
	if rd.hdr == nil {
		return // SQL*Plus banners and settings before the heading
	}
	row, err := rd.row(text)
	if err != nil {
		rd.diag.Malformed(rd.name, n, err.Error())
		return
	}
	row.Line = n
	rd.rows = append(rd.rows, row)
}

func (rd *sysEventReader) row(text string) (SystemEventRow, error) {
	var err error
	rd.fields, err = rd.hdr.layout.split(text, rd.fields)
	if err != nil {
		return SystemEventRow{}, err
	}
	get := func(f int) string {
		if c := rd.hdr.col[f]; c >= 0 && c < len(rd.fields) {
			return rd.fields[c]
		}
		return ""
	}
	if c := rd.hdr.col; len(rd.fields) <= max(c[seEnd], c[seEvent], c[seWaits], c[seTime]) {
		return SystemEventRow{}, fmt.Errorf("%d fields, the heading has %d", len(rd.fields), len(rd.hdr.col))
	}
	r := SystemEventRow{DBID: get(seDBID), Instance: get(seInstance), Startup: get(seStartup),
		WaitClass: strings.Clone(get(seClass)), Event: strings.Clone(get(seEvent))}
	r.DBID, r.Instance, r.Startup = strings.Clone(r.DBID), strings.Clone(r.Instance), strings.Clone(r.Startup)
	if r.Event == "" {
		return r, errors.New("empty EVENT_NAME")
	}
	var ok bool
	if r.End, ok = rd.times.parse(get(seEnd)); !ok {
		return r, fmt.Errorf("END_INTERVAL_TIME %q is not a time", get(seEnd))
	}
	rd.others.setLocation(r.End.Location())
	if s := get(seBegin); s != "" {
		if r.Begin, ok = rd.others.parse(s); !ok {
			return r, fmt.Errorf("BEGIN_INTERVAL_TIME %q is not a time", s)
		}
	}
	if r.Startup != "" {
		if r.StartupAt, ok = rd.others.parse(r.Startup); !ok {
			return r, fmt.Errorf("STARTUP_TIME %q is not a time", r.Startup)
		}
	}
	for _, c := range []struct {
		name string
		f    int
		into *float64
	}{{"TOTAL_WAITS", seWaits, &r.TotalWaits}, {"TIME_WAITED_MICRO", seTime, &r.TimeWaitedMicro}} {
		v, err := parseNumber(get(c.f))
		if err != nil {
			return r, fmt.Errorf("%s: %w", c.name, err)
		}
		if v < 0 {
			return r, fmt.Errorf("%s %v is negative", c.name, v)
		}
		*c.into = v
	}
	return r, nil
}

// SystemEventDeltas turns cumulative rows into per-window figures: for each
// instance, each snapshot after its first gives the window from the
// previous snapshot's end to its own. A restart between two snapshots (a
// new STARTUP_TIME, or a counter going down) is never a negative delta:
// when the startup lies inside the window, the counts since it are the
// window's, from the startup on; otherwise the window is skipped. An event
// absent from the earlier snapshot had no waits then (AWR keeps only events
// that waited), so its whole count falls in the window. Rows may come in any
// order; a row repeating an instance's event at one snapshot is reported.
// Deltas come sorted by end, instance, event.
func SystemEventDeltas(rows []SystemEventRow, name string, diag *input.Diagnostics) []EventDelta {
	type instKey struct{ dbid, inst string }
	type snap struct {
		end       time.Time
		startup   string
		startupAt time.Time
		events    map[string]*SystemEventRow
	}
	dbids := map[string]bool{}
	byInst := map[instKey]map[int64]*snap{}
	for i := range rows {
		r := &rows[i]
		dbids[r.DBID] = true
		k := instKey{r.DBID, r.Instance}
		snaps := byInst[k]
		if snaps == nil {
			snaps = map[int64]*snap{}
			byInst[k] = snaps
		}
		s := snaps[r.End.UnixNano()]
		if s == nil {
			s = &snap{end: r.End, startup: r.Startup, startupAt: r.StartupAt, events: map[string]*SystemEventRow{}}
			snaps[r.End.UnixNano()] = s
		}
		if _, dup := s.events[r.Event]; dup {
			diag.Malformed(name, r.Line, fmt.Sprintf("a second row for %q of instance %q at %s", r.Event, r.Instance, r.End.Format(time.DateTime)))
			continue
		}
		s.events[r.Event] = r
	}
	var out []EventDelta
	for k, snaps := range byInst {
		label := k.inst
		if len(dbids) > 1 {
			label = k.dbid + ":" + k.inst
		}
		ordered := make([]*snap, 0, len(snaps))
		for _, s := range snaps {
			ordered = append(ordered, s)
		}
		slices.SortFunc(ordered, func(a, b *snap) int { return a.end.Compare(b.end) })
		for i := 1; i < len(ordered); i++ {
			prev, cur := ordered[i-1], ordered[i]
			begin := prev.end
			restarted := prev.startup != cur.startup
			if restarted {
				if cur.startupAt.IsZero() || !cur.startupAt.After(prev.end) {
					diag.Warn(name, "instance %s restarted before %s: the window before it is skipped", label, cur.end.Format(time.DateTime))
					continue
				}
				begin = cur.startupAt
			}
			for _, r := range cur.events {
				d := EventDelta{Instance: label, Begin: begin, End: cur.end, WaitClass: r.WaitClass, Event: r.Event,
					Waits: r.TotalWaits, TimeWaitedMicro: r.TimeWaitedMicro}
				if p, ok := prev.events[r.Event]; ok && !restarted {
					if r.TotalWaits < p.TotalWaits || r.TimeWaitedMicro < p.TimeWaitedMicro {
						diag.Warn(name, "%q of instance %s went down at %s (a restart without a new STARTUP_TIME?): that window is skipped for it",
							r.Event, label, cur.end.Format(time.DateTime))
						continue
					}
					d.Waits -= p.TotalWaits
					d.TimeWaitedMicro -= p.TimeWaitedMicro
				}
				out = append(out, d)
			}
		}
	}
	slices.SortFunc(out, func(a, b EventDelta) int {
		return cmp.Or(a.End.Compare(b.End), cmp.Compare(a.Instance, b.Instance), cmp.Compare(a.Event, b.Event))
	})
	return out
}
