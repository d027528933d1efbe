package postgres

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// statsPollDelay is how long after each window's end the statistics views
// are read: the delta since the previous read then covers (almost only)
// the window that just ended, and arrives well before it is emitted
// (lateGrace).
const statsPollDelay = 50 * time.Millisecond

// statementsQuery reads pg_stat_statements' counters without the query
// texts ($1 = showtext = false: no file is read; a parameter rather than a
// literal keeps the text of latscope's own statements recognisable). PostgreSQL 13 renamed
// total_time to total_exec_time; 14 added toplevel. %s are filled by
// statementsSQL.
const statementsQuery = `select userid, dbid, queryid, %TOPLEVEL%, calls, %TOTAL%
from pg_stat_statements($1) where queryid is not null`

// statementTextQuery reads the texts of the queryids not yet named.
const statementTextQuery = `select distinct on (queryid) queryid, query
from pg_stat_statements($1) where queryid = any($2) order by queryid`

// statementsResetQuery reads the time of the last full reset (14+).
const statementsResetQuery = `select stats_reset from pg_stat_statements_info`

// databaseQuery reads the connected database's block reads and their
// time (track_io_timing). pg_stat_database has no count of block writes
// (blk_write_time has no matching count), so only reads give a mean.
const databaseQuery = `select datname, blks_read, blk_read_time
from pg_stat_database where datname = current_database()`

// ioQuery reads pg_stat_io (PostgreSQL 16+; the columns are those of 16
// and 17, times in ms with track_io_timing, NULL where an operation does
// not apply).
const ioQuery = `select backend_type, object, context, reads, read_time, writes, write_time, fsyncs, fsync_time
from pg_stat_io`

// settingsQuery reads the version and what the means need.
const settingsQuery = `select current_setting('server_version_num')::int,
current_setting('shared_preload_libraries'),
exists (select 1 from pg_extension where extname = 'pg_stat_statements')`

// timingQuery reads a setting (a parameter rather than a literal, so that
// pg_stat_statements keeps the text as sent and it is known as our own).
const timingQuery = `select current_setting($1)`

// ownQueries are the texts of latscope's own statements, whose
// pg_stat_statements entries are left out of the means: they are the
// sampler's load, not the application's. (--probe's statement is kept:
// the user asked for that load.)
// Texts are compared normalised in full (pg_stat_statements replaces
// literals by $n).
func ownQueries(version int) map[string]bool {
	own := map[string]bool{}
	for _, q := range []string{activityQuery, historyQuery, historyDetectQuery, statementsSQL(version),
		statementTextQuery, statementsResetQuery, databaseQuery, ioQuery, timingQuery, settingsQuery} {
		own[ownKey(q)] = true
	}
	return own
}

// ownKey is a statement's text as compared with ownQueries.
func ownKey(text string) string { return normalize(text, len(text)+1) }

// statementsSQL returns statementsQuery for a server version.
func statementsSQL(version int) string {
	q := statementsQuery
	if version >= 130000 {
		q = strings.Replace(q, "%TOTAL%", "total_exec_time", 1)
	} else {
		q = strings.Replace(q, "%TOTAL%", "total_time", 1)
	}
	if version >= 140000 {
		return strings.Replace(q, "%TOPLEVEL%", "toplevel", 1)
	}
	return strings.Replace(q, "%TOPLEVEL%", "true", 1)
}

// statsPoller reads the statistics views once per window on its own
// connection.
type statsPoller struct {
	s *liveSource
	w *liveWindows

	version    int
	statements bool // pg_stat_statements usable
	timing     bool // track_io_timing on
	io         bool // pg_stat_io exists (16+)
	names      map[int64]string
	own        map[int64]bool // queryids of latscope's own statements
	stmts      statementTracker
	dbs        databaseTracker
	ios        ioTracker
	last       time.Time // previous successful poll
	once       *input.OnceWarnings
	forceIO    bool // tests: read pg_stat_io whatever the version
}

func (s *liveSource) newStats(w *liveWindows) *statsPoller {
	return &statsPoller{s: s, w: w, names: map[int64]string{}, own: map[int64]bool{}, once: input.NewOnceWarnings(s.diag, s.name), forceIO: s.forceStatIO}
}

// run polls every interval until ctx is done, reconnecting with backoff
// (the sampler reports connection failures).
func (p *statsPoller) run(ctx context.Context, interval time.Duration) {
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	backoff := 100 * time.Millisecond
	for {
		if conn == nil {
			c, err := p.s.connect(ctx)
			if err != nil {
				if !sleep(ctx, backoff) {
					return
				}
				backoff = min(2*backoff, maxBackoff)
				continue
			}
			conn, backoff = c, 100*time.Millisecond
			p.forget()
			p.detect(ctx, conn)
			p.poll(ctx, conn) // baseline
		}
		if !sleep(ctx, untilNextPoll(time.Now(), interval)) {
			return
		}
		if err := p.poll(ctx, conn); err != nil && (conn.IsClosed() || isConnError(err)) {
			conn.Close(context.Background())
			conn = nil
		}
	}
}

// untilNextPoll is the wait until statsPollDelay after the next window
// boundary.
func untilNextPoll(now time.Time, interval time.Duration) time.Duration {
	w := int64(interval)
	next := (floorDiv(now.UnixNano()-int64(statsPollDelay), w)+1)*w + int64(statsPollDelay)
	return time.Duration(next - now.UnixNano())
}

func (p *statsPoller) forget() {
	p.stmts.forget()
	p.dbs.forget()
	p.ios.forget()
	p.last = time.Time{}
}

// detect finds the server version, pg_stat_statements and track_io_timing,
// warning once with the fix for what is missing.
func (p *statsPoller) detect(ctx context.Context, conn *pgx.Conn) {
	qctx, cancel := context.WithTimeout(ctx, p.s.queryTimeout())
	defer cancel()
	var preload string
	var installed bool
	err := conn.QueryRow(qctx, settingsQuery).Scan(&p.version, &preload, &installed)
	if err != nil {
		p.s.diag.MalformedAt(p.s.name, time.Now(), "reading the server's settings failed: "+p.s.clean(err))
		return
	}
	loaded := strings.Contains(preload, "pg_stat_statements")
	p.statements = loaded && installed
	switch {
	case !loaded:
		p.once.Warn("statements", "pg_stat_statements is not loaded, so there are no statement means: set "+
			"shared_preload_libraries = 'pg_stat_statements' in postgresql.conf, restart the server, then run "+
			"CREATE EXTENSION pg_stat_statements in this database")
	case !installed:
		p.once.Warn("statements", "pg_stat_statements is loaded but not installed in this database, so there are "+
			"no statement means: run CREATE EXTENSION pg_stat_statements")
	}
	p.io = p.forceIO || p.version >= 160000
}

// poll reads the views and records their means into the window that the
// time since the previous poll mostly covers. A failed query is counted
// and drops the baselines (the next poll starts afresh).
func (p *statsPoller) poll(ctx context.Context, conn *pgx.Conn) error {
	now := time.Now()
	var means []stream.SeriesMean
	if err := p.pollTiming(ctx, conn); err != nil {
		return p.failed(now, err)
	}
	if p.statements {
		m, err := p.pollStatements(ctx, conn, now)
		if err != nil {
			return p.failed(now, err)
		}
		means = append(means, m...)
	}
	m, err := pollMeans(ctx, p, conn, databaseQuery, scanDBRow, p.dbs.update)
	if err != nil {
		return p.failed(now, err)
	}
	means = append(means, m...)
	if p.io {
		m, err := pollMeans(ctx, p, conn, ioQuery, scanIORow, p.ios.update)
		if err != nil {
			return p.failed(now, err)
		}
		means = append(means, m...)
	}
	if !p.last.IsZero() && len(means) > 0 {
		p.w.mean(p.last.Add(now.Sub(p.last)/2), means)
	}
	p.last = now
	return nil
}

func (p *statsPoller) failed(at time.Time, err error) error {
	p.s.diag.MalformedAt(p.s.name, at, "statistics poll failed: "+p.s.clean(err))
	p.forget()
	return err
}

// pollTiming rereads track_io_timing (it can be turned on without a
// restart); while it is off the I/O times stay 0, so no I/O mean is made.
func (p *statsPoller) pollTiming(ctx context.Context, conn *pgx.Conn) error {
	qctx, cancel := context.WithTimeout(ctx, p.s.queryTimeout())
	defer cancel()
	var setting string
	if err := conn.QueryRow(qctx, timingQuery, "track_io_timing").Scan(&setting); err != nil {
		return err
	}
	on := setting == "on"
	if !on {
		p.once.Warn("timing", "track_io_timing is off, so pg_stat_database and pg_stat_io hold no I/O times and no "+
			"block read means are shown: run ALTER SYSTEM SET track_io_timing = on; SELECT pg_reload_conf();")
	}
	if on != p.timing {
		p.dbs.forget() // times before the change do not match the counts
		p.ios.forget()
	}
	p.timing = on
	return nil
}

func (p *statsPoller) pollStatements(ctx context.Context, conn *pgx.Conn, now time.Time) ([]stream.SeriesMean, error) {
	qctx, cancel := context.WithTimeout(ctx, p.s.queryTimeout())
	defer cancel()
	// The reset time is read first: a reset between the two reads then
	// shows as entries going backwards now, and as a full reset at the
	// next poll (whose deltas hold the calls since the reset again; the
	// window is microseconds wide).
	var reset *time.Time
	if p.version >= 140000 {
		if err := conn.QueryRow(qctx, statementsResetQuery).Scan(&reset); err != nil {
			return nil, p.notLoaded(err)
		}
	}
	rows, err := conn.Query(qctx, statementsSQL(p.version), false)
	if err != nil {
		return nil, p.notLoaded(err)
	}
	var snap []stmtRow
	for rows.Next() {
		var r stmtRow
		if err := rows.Scan(&r.key.userID, &r.key.dbID, &r.key.queryID, &r.key.toplevel, &r.calls, &r.totalMs); err != nil {
			rows.Close()
			return nil, err
		}
		snap = append(snap, r)
	}
	if err := rows.Err(); err != nil {
		return nil, p.notLoaded(err)
	}
	if !p.statements {
		return nil, nil
	}
	deltas, fullReset := p.stmts.update(snap, reset)
	if fullReset {
		p.s.diag.MalformedAt(p.s.name, now, "pg_stat_statements was reset: the statements run between the previous "+
			"poll and the reset are not in this window's statement means")
	}
	if err := p.nameStatements(qctx, conn, deltas); err != nil {
		return nil, err
	}
	if p.last.IsZero() {
		return nil, nil // the baseline
	}
	deltas = slices.DeleteFunc(deltas, func(d stmtDelta) bool { return p.own[d.queryID] })
	return statementMeans(deltas, func(id int64) string { return p.names[id] }, maxStatementMeans), nil
}

// notLoaded turns the error of a pg_stat_statements installed but not
// preloaded into a warning and stops reading it; other errors are kept.
func (p *statsPoller) notLoaded(err error) error {
	if !strings.Contains(err.Error(), "must be loaded via") {
		return err
	}
	p.statements = false
	p.once.Warn("statements", "pg_stat_statements is installed but not loaded: set shared_preload_libraries = "+
		"'pg_stat_statements' in postgresql.conf and restart the server")
	return nil
}

// nameStatements reads the texts of the queryids not yet named.
func (p *statsPoller) nameStatements(ctx context.Context, conn *pgx.Conn, deltas []stmtDelta) error {
	var missing []int64
	for _, d := range deltas {
		if _, ok := p.names[d.queryID]; !ok && !containsID(missing, d.queryID) {
			missing = append(missing, d.queryID)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	rows, err := conn.Query(ctx, statementTextQuery, true, missing)
	if err != nil {
		return err
	}
	texts := map[int64]string{}
	for rows.Next() {
		var id int64
		var text *string
		if err := rows.Scan(&id, &text); err != nil {
			rows.Close()
			return err
		}
		if text != nil {
			texts[id] = *text
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	own := ownQueries(p.version)
	for _, id := range missing {
		text, ok := texts[id]
		p.names[id] = statementName(id, text, ok)
		p.own[id] = ok && own[ownKey(text)]
	}
	return nil
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// pollMeans reads one statistics view (q, each row read by scan) into means
// (update), and nothing while track_io_timing is off: pg_stat_database and
// pg_stat_io then hold no I/O times.
func pollMeans[T any](ctx context.Context, p *statsPoller, conn *pgx.Conn, q string,
	scan pgx.RowToFunc[T], update func([]T) []stream.SeriesMean) ([]stream.SeriesMean, error) {
	if !p.timing {
		return nil, nil
	}
	qctx, cancel := context.WithTimeout(ctx, p.s.queryTimeout())
	defer cancel()
	rows, err := conn.Query(qctx, q)
	if err != nil {
		return nil, err
	}
	snap, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, err
	}
	return update(snap), nil
}

// scanDBRow reads a row of databaseQuery.
func scanDBRow(row pgx.CollectableRow) (dbRow, error) {
	var r dbRow
	var name *string
	err := row.Scan(&name, &r.blksRead, &r.readMs)
	if name != nil {
		r.datname = *name
	}
	return r, err
}

// scanIORow reads a row of ioQuery.
func scanIORow(row pgx.CollectableRow) (ioRow, error) {
	var r ioRow
	err := row.Scan(&r.backendType, &r.object, &r.context, &r.reads, &r.readMs, &r.writes, &r.writeMs, &r.fsyncs, &r.fsyncMs)
	return r, err
}
