package oracle

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/awr"
	"github.com/latscope/latscope/stream"
)

// awrRange is the AWR snapshot selection: SNAP_IDs from..to (inclusive), or
// the last N deltas (the last N+1 snapshots).
type awrRange struct{ from, to, last int }

// awrRangeOf reads --awr-from/--awr-to/--awr-last; ok is false when none is
// given (the source polls GV$EVENT_HISTOGRAM instead).
func awrRangeOf(db source.DBOptions) (r awrRange, ok bool, err error) {
	r = awrRange{from: db.AWRFrom, to: db.AWRTo, last: db.AWRLast}
	switch {
	case r.from == 0 && r.to == 0 && r.last == 0:
		return r, false, nil
	case r.from < 0 || r.to < 0 || r.last < 0:
		return r, true, fmt.Errorf("--awr-from, --awr-to and --awr-last take positive numbers")
	case r.last > 0 && (r.from != 0 || r.to != 0):
		return r, true, fmt.Errorf("give either --awr-last or --awr-from/--awr-to, not both")
	case r.last == 0 && (r.from == 0 || r.to == 0):
		return r, true, fmt.Errorf("--awr-from and --awr-to go together (SNAP_IDs, inclusive)")
	case r.last == 0 && r.from >= r.to:
		return r, true, fmt.Errorf("--awr-from %d must be below --awr-to %d: a delta needs two snapshots", r.from, r.to)
	}
	return r, true, nil
}

// snapKey identifies one instance's snapshot.
type snapKey struct {
	dbid, inst string
	snap       int64
}

// snapInfo is a DBA_HIST_SNAPSHOT row, times read.
type snapInfo struct {
	begin, end, startupAt time.Time
	startup               string
}

// awrSnapshots is the result of awrSnapshotQuery, read.
type awrSnapshots struct {
	byKey    map[snapKey]snapInfo
	dbid     string
	from, to int64 // the smallest and largest SNAP_ID
}

// readSnapshots reads the DBA_HIST_SNAPSHOT rows. Times without an offset
// are in loc (--tz), else in the database's current UTC offset
// (DB_UTC_OFFSET), since AWR keeps the server's local times.
func readSnapshots(r *rows, loc *time.Location) (awrSnapshots, error) {
	out := awrSnapshots{byKey: map[snapKey]snapInfo{}}
	cs, cd, ci := r.col("SNAP_ID"), r.col("DBID"), r.col("INSTANCE_NUMBER")
	cb, ce, cu, co := r.col("BEGIN_INTERVAL_TIME"), r.col("END_INTERVAL_TIME"), r.col("STARTUP_TIME"), r.col("DB_UTC_OFFSET")
	if cs < 0 || cd < 0 || ci < 0 || cb < 0 || ce < 0 || cu < 0 {
		return out, fmt.Errorf("DBA_HIST_SNAPSHOT result lacks SNAP_ID, DBID, INSTANCE_NUMBER, BEGIN_INTERVAL_TIME, "+
			"END_INTERVAL_TIME or STARTUP_TIME (has %s)", strings.Join(r.columns, ", "))
	}
	for i, v := range r.values {
		snap, ok := asInt(v[cs])
		if !ok {
			return out, fmt.Errorf("DBA_HIST_SNAPSHOT row %d: SNAP_ID %q", i+1, asString(v[cs]))
		}
		zone := loc
		if zone == nil {
			zone = time.Local
			if co >= 0 {
				if z, ok := parseOffset(asString(v[co])); ok {
					zone = z
				}
			}
		}
		end, ok := asTime(v[ce], zone)
		if !ok {
			return out, fmt.Errorf("DBA_HIST_SNAPSHOT row %d: END_INTERVAL_TIME %q", i+1, asString(v[ce]))
		}
		s := snapInfo{end: end, startup: asString(v[cu])}
		s.begin, _ = asTime(v[cb], end.Location())
		s.startupAt, _ = asTime(v[cu], end.Location())
		k := snapKey{dbid: asString(v[cd]), inst: asString(v[ci]), snap: snap}
		out.byKey[k] = s
		if out.dbid == "" {
			out.dbid = k.dbid
		}
		if out.from == 0 || snap < out.from {
			out.from = snap
		}
		out.to = max(out.to, snap)
	}
	return out, nil
}

// parseOffset reads a TZH:TZM text such as "+01:00".
func parseOffset(s string) (*time.Location, bool) {
	t, err := time.Parse("-07:00", strings.TrimSpace(s))
	if err != nil {
		return nil, false
	}
	_, off := t.Zone()
	return time.FixedZone(s, off), true
}

// awrRows joins DBA_HIST_EVENT_HISTOGRAM rows to their snapshots and maps
// them to awr.Rows (ms bounds). Rows whose snapshot is not among snaps, or
// whose values cannot be read, are left out; bad says how many and why the
// first was.
func awrRows(h *rows, snaps awrSnapshots) ([]awr.Row, string) {
	ce, cb, cc := h.col("EVENT_NAME"), h.col("WAIT_TIME_MILLI"), h.col("WAIT_COUNT")
	if ce < 0 || cb < 0 || cc < 0 {
		return nil, "DBA_HIST_EVENT_HISTOGRAM result lacks EVENT_NAME, WAIT_TIME_MILLI or WAIT_COUNT (has " +
			strings.Join(h.columns, ", ") + ")"
	}
	var out []awr.Row
	bad := snaps.eachJoined(h, "DBA_HIST_EVENT_HISTOGRAM", func(line int, v []any, k snapKey, s snapInfo, skips *rowSkips) {
		r := awr.Row{Line: line, DBID: k.dbid, Instance: k.inst, End: s.end, Begin: s.begin, Startup: s.startup,
			StartupAt: s.startupAt, Event: asString(v[ce]), Unit: hist.Millisecond}
		var ok bool
		if r.Bound, ok = asFloat(v[cb]); !ok {
			skips.skip("row %d: WAIT_TIME_MILLI %q", line, asString(v[cb]))
			return
		}
		if r.Count, ok = asFloat(v[cc]); !ok {
			skips.skip("row %d: WAIT_COUNT %q", line, asString(v[cc]))
			return
		}
		out = append(out, r)
	})
	return out, bad
}

// eachJoined calls f with every row of h (a DBA_HIST_* view's result) whose
// snapshot is among snaps, and returns what rowSkips.summary says of the
// rows left out, by it or by f.
func (snaps awrSnapshots) eachJoined(h *rows, view string, f func(line int, v []any, k snapKey, s snapInfo, skips *rowSkips)) string {
	cs, cd, ci := h.col("SNAP_ID"), h.col("DBID"), h.col("INSTANCE_NUMBER")
	if cs < 0 || cd < 0 || ci < 0 {
		return view + " result lacks SNAP_ID, DBID or INSTANCE_NUMBER (has " + strings.Join(h.columns, ", ") + ")"
	}
	var skips rowSkips
	for i, v := range h.values {
		line := i + 1
		if k, s, ok := snaps.of(v, line, cs, cd, ci, &skips); ok {
			f(line, v, k, s, &skips)
		}
	}
	return skips.summary(view, len(h.values))
}

// rowSkips counts the result rows left out and keeps why the first was.
type rowSkips struct {
	n     int
	first string
}

func (s *rowSkips) skip(format string, args ...any) {
	if s.n++; s.n == 1 {
		s.first = fmt.Sprintf(format, args...)
	}
}

// summary says how many rows of view were skipped and why the first was;
// "" when none was.
func (s *rowSkips) summary(view string, total int) string {
	if s.n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d %s rows skipped (first: %s)", s.n, total, view, s.first)
}

// of finds the snapshot of result row v, whose SNAP_ID, DBID and
// INSTANCE_NUMBER are in columns cs, cd, ci; a row without one is skipped.
func (snaps awrSnapshots) of(v []any, line, cs, cd, ci int, skips *rowSkips) (snapKey, snapInfo, bool) {
	snap, ok := asInt(v[cs])
	if !ok {
		skips.skip("row %d: SNAP_ID %q", line, asString(v[cs]))
		return snapKey{}, snapInfo{}, false
	}
	k := snapKey{dbid: asString(v[cd]), inst: asString(v[ci]), snap: snap}
	s, ok := snaps.byKey[k]
	if !ok {
		skips.skip("row %d: no DBA_HIST_SNAPSHOT row for snapshot %d of instance %s", line, snap, k.inst)
	}
	return k, s, ok
}

// runAWR reads the snapshot range once, emits its intervals (per instance,
// with the snapshots' real times) and returns.
func runAWR(ctx context.Context, rs rowSource, name string, diag *input.Diagnostics, opts source.Options,
	rng awrRange, events string, emit func(stream.Interval) error) error {
	sr, err := rs.query(ctx, awrSnapshotQuery, rng.from, rng.to, rng.last)
	if err != nil {
		return fmt.Errorf("%s: DBA_HIST_SNAPSHOT: %w", name, err)
	}
	snaps, err := readSnapshots(sr, opts.Location)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(snaps.byKey) == 0 {
		diag.Warn(name, "no AWR snapshots of the current database in %s", rng)
		return nil
	}
	hr, err := rs.query(ctx, awrHistogramQuery, snaps.from, snaps.to, snaps.dbid, events)
	if err != nil {
		return fmt.Errorf("%s: DBA_HIST_EVENT_HISTOGRAM: %w", name, err)
	}
	rowsOut, bad := awrRows(hr, snaps)
	if bad != "" {
		diag.MalformedAt(name, time.Now(), bad)
	}
	m := awr.NewMapper(awr.MapperConfig{Name: name, Diag: diag, Cumulative: true, Batch: true, Emit: emit})
	for _, r := range rowsOut {
		if err := m.Add(r); err != nil {
			return err
		}
	}
	return m.Finish()
}

// String names the range in messages.
func (r awrRange) String() string {
	if r.last > 0 {
		return "the last " + strconv.Itoa(r.last+1) + " snapshots"
	}
	return fmt.Sprintf("snapshots %d to %d", r.from, r.to)
}
