package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/awr"
)

// AWRSystemEvents reads DBA_HIST_SYSTEM_EVENT over the AWR snapshot range
// of opts.DB (--awr-from/--awr-to or --awr-last) from the database of an
// oracle://user@host:port/service SOURCE, as the rows of the
// sql/awr_system_event.sql extract: `latscope awr` differences them as it
// does the file's. The password comes as for the live source.
func AWRSystemEvents(ctx context.Context, spec string, opts source.Options, diag *input.Diagnostics) ([]awr.SystemEventRow, error) {
	arg, ok := strings.CutPrefix(spec, "oracle:")
	if !ok {
		return nil, fmt.Errorf("%s: not an oracle:// SOURCE", redact(spec))
	}
	src, err := open(arg, opts, diag)
	if err != nil {
		return nil, err
	}
	ls := src.(*liveSource)
	rng, ok, _ := awrRangeOf(opts.DB)
	if !ok {
		return nil, fmt.Errorf("%s: latscope awr reads an AWR snapshot range: give --awr-from/--awr-to or --awr-last", ls.name)
	}
	db, err := sql.Open("oracle", ls.dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ls.name, err)
	}
	timeout := opts.DB.QueryTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second // a week of hourly snapshots is a few thousand rows per event
	}
	db.SetMaxOpenConns(1)
	rs := &sqlRowSource{db: db, timeout: timeout}
	defer rs.Close()
	return readAWRSystemEvents(ctx, rs, ls.name, diag, opts.Location, rng)
}

// readAWRSystemEvents runs the snapshot query, then the system-event query
// over the snapshots found, and joins them.
func readAWRSystemEvents(ctx context.Context, rs rowSource, name string, diag *input.Diagnostics, loc *time.Location,
	rng awrRange) ([]awr.SystemEventRow, error) {
	sr, err := rs.query(ctx, awrSnapshotQuery, rng.from, rng.to, rng.last)
	if err != nil {
		return nil, fmt.Errorf("%s: DBA_HIST_SNAPSHOT: %w", name, err)
	}
	snaps, err := readSnapshots(sr, loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(snaps.byKey) == 0 {
		return nil, fmt.Errorf("%s: no AWR snapshots of the current database in %s", name, rng)
	}
	er, err := rs.query(ctx, awrSystemEventQuery, snaps.from, snaps.to, snaps.dbid)
	if err != nil {
		return nil, fmt.Errorf("%s: DBA_HIST_SYSTEM_EVENT: %w", name, err)
	}
	out, bad := awrSystemEventRows(er, snaps)
	if bad != "" {
		diag.MalformedAt(name, time.Now(), bad)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", name, errors.New("no DBA_HIST_SYSTEM_EVENT rows in "+rng.String()))
	}
	return out, nil
}

// awrSystemEventRows joins DBA_HIST_SYSTEM_EVENT rows to their snapshots.
// Rows whose snapshot is unknown or whose counters cannot be read are left
// out; bad says how many and why the first was.
func awrSystemEventRows(h *rows, snaps awrSnapshots) ([]awr.SystemEventRow, string) {
	cc, ce, cw, ct := h.col("WAIT_CLASS"), h.col("EVENT_NAME"), h.col("TOTAL_WAITS"), h.col("TIME_WAITED_MICRO")
	if ce < 0 || cw < 0 || ct < 0 {
		return nil, "DBA_HIST_SYSTEM_EVENT result lacks EVENT_NAME, TOTAL_WAITS or TIME_WAITED_MICRO (has " +
			strings.Join(h.columns, ", ") + ")"
	}
	var out []awr.SystemEventRow
	bad := snaps.eachJoined(h, "DBA_HIST_SYSTEM_EVENT", func(line int, v []any, k snapKey, s snapInfo, skips *rowSkips) {
		r := awr.SystemEventRow{DBID: k.dbid, Instance: k.inst, Startup: s.startup, StartupAt: s.startupAt,
			Begin: s.begin, End: s.end, Event: asString(v[ce])}
		if cc >= 0 {
			r.WaitClass = asString(v[cc])
		}
		var ok bool
		if r.TotalWaits, ok = asFloat(v[cw]); !ok || r.TotalWaits < 0 {
			skips.skip("row %d: TOTAL_WAITS %q", line, asString(v[cw]))
			return
		}
		if r.TimeWaitedMicro, ok = asFloat(v[ct]); !ok || r.TimeWaitedMicro < 0 {
			skips.skip("row %d: TIME_WAITED_MICRO %q", line, asString(v[ct]))
			return
		}
		out = append(out, r)
	})
	return out, bad
}
