package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// slackPS is how far below the newest TIMER_END a poll looks again, in
// picoseconds: a thread may be descheduled between timing a wait and
// writing it into the history ring, so rows can arrive out of order.
const slackPS = 50e9 // 50 ms

// maxDigestText bounds the statement text in series names.
const maxDigestText = 60

// Sampler is the live performance_schema source.
type Sampler struct {
	name       string
	opts       source.Options
	diag       *input.Diagnostics
	db         *sql.DB
	interval   time.Duration
	poll       time.Duration
	timeout    time.Duration
	waitsTable string
	// histograms: the server has MySQL 8's statement histogram tables.
	histograms bool

	mu    sync.Mutex
	stats runStats
}

// runStats accumulates what SamplerStats reports.
type runStats struct {
	started       time.Time
	elapsed       time.Duration
	polls         int64
	seen, counted int64 // waits seen / counted by the server, in full windows
	// statements seen / counted by the server (other threads), in full windows
	stmtSeen, stmtCounted int64
	ratios                []float64
}

// Name returns the URI without password.
func (s *Sampler) Name() string { return s.name }

// SamplerStats implements stream.Sampler.
func (s *Sampler) SamplerStats() stream.SamplerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := stream.SamplerStats{Kind: "mysql " + s.waitsTable + " sampler"}
	if secs := s.stats.elapsed.Seconds(); secs > 0 {
		st.PollsPerSecond = float64(s.stats.polls) / secs
	}
	if s.stats.counted > 0 {
		r := float64(s.stats.seen) / float64(s.stats.counted)
		st.CaptureRatio = &r
		if miss := s.stats.counted - s.stats.seen; miss > 0 {
			st.Missed = miss
		}
	}
	return st
}

// CaptureRatios returns the wait capture ratio of every full window so far.
func (s *Sampler) CaptureRatios() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]float64(nil), s.stats.ratios...)
}

// StatementCaptureRatio returns the statements seen over the statements
// the server counted (other sessions, timed instruments), over the full
// windows so far; ok is false before the first.
func (s *Sampler) StatementCaptureRatio() (ratio float64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats.stmtCounted == 0 {
		return 0, false
	}
	return float64(s.stats.stmtSeen) / float64(s.stats.stmtCounted), true
}

// eventKey identifies one event in a history table.
type eventKey struct{ thread, event uint64 }

// ring follows one history table: the newest TIMER_END seen, and the keys
// returned by the last poll. A row absent from the last poll's answer was
// overwritten or fell below the cut, so it cannot come back: remembering
// only the last answer keeps the memory bounded by the ring size.
type ring struct {
	maxEnd uint64
	last   map[eventKey]struct{}
}

func (r *ring) cut() uint64 {
	if r.maxEnd < slackPS {
		return 0
	}
	return r.maxEnd - slackPS
}

// conn is one connection's state; a new connection starts from a baseline.
type conn struct {
	c         *sql.Conn
	self      uint64 // our own THREAD_ID, excluded from statements
	waits     ring
	stmts     ring
	stmtCount uint64 // statements the server counted, other threads
	baseline  bool   // the next poll only sets the rings' positions
	count     uint64
	hasCount  bool
	hist      *histPoller // nil without the histogram tables
	// waitRing is the waits history's size; newWaits the rows the last
	// poll found new. A poll that found more than half a ring is followed
	// at once by the next: the ring holds only a few ms of a busy server.
	waitRing, newWaits int
}

// hurry says the last poll found so many new rows that waiting for the
// next tick would risk losing some.
func (cn *conn) hurry() bool { return cn != nil && cn.waitRing > 0 && 2*cn.newWaits > cn.waitRing }

// window gathers one interval.
type window struct {
	start  time.Time
	gap    bool
	series map[string]*hist.Histogram
	order  []string
	seen   int64
	stmts  int64 // statements seen
}

func (w *window) record(name string, ps uint64) {
	h := w.series[name]
	if h == nil {
		h = hist.NewExact(hist.Microsecond, -10)
		w.series[name] = h
		w.order = append(w.order, name)
	}
	h.Record(float64(ps) / 1e6)
}

// Run polls until ctx is cancelled, emitting one interval per --interval.
func (s *Sampler) Run(ctx context.Context, emit func(stream.Interval) error) error {
	defer s.db.Close()
	s.mu.Lock()
	s.stats.started = time.Now()
	s.mu.Unlock()
	var cn *conn
	defer func() {
		if cn != nil {
			cn.c.Close()
		}
	}()
	backoff, nextDial := 100*time.Millisecond, time.Time{}
	w := s.newWindow(time.Now())
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	for {
		now := time.Now()
		if cn == nil && !now.Before(nextDial) {
			var err error
			if cn, err = s.connect(ctx); err != nil {
				w.gap = true
				nextDial = now.Add(backoff)
				backoff = min(backoff*2, 10*time.Second)
			} else {
				backoff = 100 * time.Millisecond
			}
		}
		if cn != nil {
			if err := s.pollOnce(ctx, cn, &w); err != nil {
				cn = s.failed(ctx, cn, &w, err)
			}
		} else {
			w.gap = true
		}
		if end := w.start.Add(s.interval); !now.Before(end) {
			if cn != nil {
				if err := s.closeWindow(ctx, cn, &w); err != nil {
					cn = s.failed(ctx, cn, &w, err)
				}
			}
			if err := emit(s.toInterval(w, now)); err != nil {
				return err
			}
			w = s.newWindow(now)
			s.mu.Lock()
			s.stats.elapsed = time.Since(s.stats.started)
			s.mu.Unlock()
		}
		if cn.hurry() && ctx.Err() == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return s.finish(ctx, cn, w, emit)
		case <-tick.C:
		}
	}
}

// finish emits the last, partial window when sampling stops (--duration
// ends mid-window): its events were seen and counted like any other's.
func (s *Sampler) finish(ctx context.Context, cn *conn, w window, emit func(stream.Interval) error) error {
	now := time.Now()
	defer func() {
		s.mu.Lock()
		s.stats.elapsed = now.Sub(s.stats.started)
		s.mu.Unlock()
	}()
	if cn == nil || !now.After(w.start) {
		return nil
	}
	if err := s.closeWindow(context.WithoutCancel(ctx), cn, &w); err != nil {
		return nil // the window cannot be completed; it is left out
	}
	return emit(s.toInterval(w, now))
}

func (s *Sampler) newWindow(start time.Time) window {
	return window{start: start, series: map[string]*hist.Histogram{}}
}

// toInterval turns a finished window into the emitted interval; a window
// the sampler could not fully observe is a Gap without series.
func (s *Sampler) toInterval(w window, end time.Time) stream.Interval {
	iv := stream.Interval{Source: s.name, Start: w.start, Duration: end.Sub(w.start), Gap: w.gap}
	if w.gap {
		return iv
	}
	sort.Strings(w.order)
	for _, name := range w.order {
		iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: name}, Hist: w.series[name]})
	}
	return iv
}

// connect opens a connection and takes the baselines: the wait count and
// the history rings' current contents, which are not recorded.
func (s *Sampler) connect(ctx context.Context) (*conn, error) {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	c, err := s.db.Conn(qctx)
	if err != nil {
		return nil, err
	}
	cn := &conn{c: c, baseline: true}
	if s.opts.DB.Setup {
		// A restarted server forgot the run-time setup: apply it again.
		err = s.reapplySetup(qctx, c)
	}
	if err == nil {
		err = c.QueryRowContext(qctx, "SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()").Scan(&cn.self)
	}
	if err == nil && s.waitsTable == "events_waits_history_long" {
		// Absent on servers without the variable: keep the fixed pace.
		var size sql.NullInt64
		if c.QueryRowContext(qctx, "SELECT @@performance_schema_events_waits_history_long_size").Scan(&size) == nil && size.Int64 > 0 {
			cn.waitRing = int(size.Int64)
		}
	}
	if err == nil {
		cn.count, err = s.waitCount(qctx, cn)
		cn.hasCount = err == nil
	}
	if err == nil {
		cn.stmtCount, err = s.statementCount(qctx, cn)
	}
	if err == nil {
		err = s.pollHistories(qctx, cn, nil)
	}
	if err == nil && s.histograms {
		cn.hist = newHistPoller("performance_schema")
		_, _, err = cn.hist.poll(qctx, connQuery(c), time.Now())
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	cn.baseline = false
	return cn, nil
}

// waitCount is the number of timed waits the server counted so far, over
// the instruments that are enabled and timed (those the history holds).
func (s *Sampler) waitCount(ctx context.Context, cn *conn) (uint64, error) {
	var n sql.NullInt64
	err := cn.c.QueryRowContext(ctx, `SELECT SUM(s.COUNT_STAR) FROM performance_schema.events_waits_summary_global_by_event_name s
		JOIN performance_schema.setup_instruments i ON i.NAME = s.EVENT_NAME
		WHERE i.ENABLED = 'YES' AND i.TIMED = 'YES' AND s.EVENT_NAME LIKE 'wait/%'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("reading events_waits_summary_global_by_event_name: %w", err)
	}
	return uint64(n.Int64), nil
}

// statementCount is the number of timed statements the server counted so
// far in sessions other than the sampler's own.
func (s *Sampler) statementCount(ctx context.Context, cn *conn) (uint64, error) {
	var all, own sql.NullInt64
	err := cn.c.QueryRowContext(ctx, `SELECT
		(SELECT SUM(s.COUNT_STAR) FROM performance_schema.events_statements_summary_global_by_event_name s
			JOIN performance_schema.setup_instruments i ON i.NAME = s.EVENT_NAME
			WHERE i.ENABLED = 'YES' AND i.TIMED = 'YES'),
		(SELECT SUM(COUNT_STAR) FROM performance_schema.events_statements_summary_by_thread_by_event_name WHERE THREAD_ID = ?)`,
		cn.self).Scan(&all, &own)
	if err != nil {
		return 0, fmt.Errorf("reading events_statements_summary_global_by_event_name: %w", err)
	}
	return uint64(max(all.Int64-own.Int64, 0)), nil
}

// pollOnce reads the new rows of both histories into w.
func (s *Sampler) pollOnce(ctx context.Context, cn *conn, w *window) error {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.pollHistories(qctx, cn, w)
}

func (s *Sampler) pollHistories(ctx context.Context, cn *conn, w *window) error {
	s.mu.Lock()
	s.stats.polls++
	s.mu.Unlock()
	if err := s.pollWaits(ctx, cn, w); err != nil {
		return err
	}
	return s.pollStatements(ctx, cn, w)
}

func (s *Sampler) pollWaits(ctx context.Context, cn *conn, w *window) error {
	rows, err := cn.c.QueryContext(ctx, "SELECT THREAD_ID, EVENT_ID, EVENT_NAME, TIMER_END, TIMER_WAIT FROM performance_schema."+
		s.waitsTable+" WHERE TIMER_END >= ? AND TIMER_WAIT IS NOT NULL AND EVENT_NAME LIKE 'wait/%'", cn.waits.cut())
	if err != nil {
		return fmt.Errorf("polling %s: %w", s.waitsTable, err)
	}
	defer rows.Close()
	next := make(map[eventKey]struct{}, len(cn.waits.last))
	cn.newWaits = 0
	for rows.Next() {
		var k eventKey
		var name string
		var end, wait uint64
		if err := rows.Scan(&k.thread, &k.event, &name, &end, &wait); err != nil {
			return fmt.Errorf("reading %s: %w", s.waitsTable, err)
		}
		next[k] = struct{}{}
		cn.waits.maxEnd = max(cn.waits.maxEnd, end)
		if _, old := cn.waits.last[k]; old || w == nil {
			continue
		}
		cn.newWaits++
		w.seen++
		if s.opts.KeepEvent(name) {
			w.record(name, wait)
		}
	}
	cn.waits.last = next
	if err := rows.Err(); err != nil {
		return err
	}
	if len(next) == 0 {
		return s.checkRewind(ctx, cn, s.waitsTable, &cn.waits)
	}
	return nil
}

// checkRewind handles a history table whose timer went back below the
// position reached (seen on VMs whose cycle counter jumps): every poll
// would then ask for rows "newer" than any row and see nothing, forever.
// When a poll returns nothing and the table's newest row lies below the
// cut, the position moves back to it.
func (s *Sampler) checkRewind(ctx context.Context, cn *conn, table string, r *ring) error {
	cut := r.cut()
	if cut == 0 {
		return nil
	}
	var newest sql.NullInt64
	err := cn.c.QueryRowContext(ctx, "SELECT MAX(TIMER_END) FROM performance_schema."+table+" WHERE TIMER_WAIT IS NOT NULL").Scan(&newest)
	if err != nil {
		return fmt.Errorf("reading the newest %s row: %w", table, err)
	}
	if newest.Valid && uint64(newest.Int64) < cut {
		s.diag.Warn(s.name, "the server's %s timer went back by %.3f s; sampling goes on from its new position",
			table, float64(r.maxEnd-uint64(newest.Int64))/1e12)
		r.maxEnd = uint64(newest.Int64)
	}
	return nil
}

func (s *Sampler) pollStatements(ctx context.Context, cn *conn, w *window) error {
	rows, err := cn.c.QueryContext(ctx, `SELECT THREAD_ID, EVENT_ID, TIMER_END, TIMER_WAIT, DIGEST_TEXT, EVENT_NAME
		FROM performance_schema.events_statements_history_long
		WHERE TIMER_END >= ? AND TIMER_WAIT IS NOT NULL AND THREAD_ID <> ?`, cn.stmts.cut(), cn.self)
	if err != nil {
		return fmt.Errorf("polling events_statements_history_long: %w", err)
	}
	defer rows.Close()
	next := make(map[eventKey]struct{}, len(cn.stmts.last))
	for rows.Next() {
		var k eventKey
		var end, wait uint64
		var text sql.NullString
		var event string
		if err := rows.Scan(&k.thread, &k.event, &end, &wait, &text, &event); err != nil {
			return fmt.Errorf("reading events_statements_history_long: %w", err)
		}
		next[k] = struct{}{}
		cn.stmts.maxEnd = max(cn.stmts.maxEnd, end)
		if _, old := cn.stmts.last[k]; old || w == nil {
			continue
		}
		w.stmts++
		if name := statementSeries(text, event); s.opts.KeepEvent(name) {
			w.record(name, wait)
		}
	}
	cn.stmts.last = next
	if err := rows.Err(); err != nil {
		return err
	}
	if len(next) == 0 {
		return s.checkRewind(ctx, cn, "events_statements_history_long", &cn.stmts)
	}
	return nil
}

// statementSeries names a digest's series: "statement: " and the digest
// text, shortened to maxDigestText characters; statements without a digest
// (protocol commands such as statement/com/Prepare) by their EVENT_NAME.
func statementSeries(text sql.NullString, event string) string {
	if !text.Valid || text.String == "" {
		return "statement: " + event
	}
	r := []rune(strings.Join(strings.Fields(text.String), " "))
	if len(r) > maxDigestText {
		return "statement: " + string(r[:maxDigestText-3]) + "..."
	}
	return "statement: " + string(r)
}

// closeWindow reads the server's wait count, then polls once more so the
// waits it counted are in the history we read, and keeps the ratio.
func (s *Sampler) closeWindow(ctx context.Context, cn *conn, w *window) error {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	count, err := s.waitCount(qctx, cn)
	if err != nil {
		return err
	}
	stmtCount, err := s.statementCount(qctx, cn)
	if err != nil {
		return err
	}
	if err := s.pollHistories(qctx, cn, w); err != nil {
		return err
	}
	if err := s.pollHistograms(qctx, cn, w); err != nil {
		return err
	}
	prev, had := cn.count, cn.hasCount
	prevStmts := cn.stmtCount
	cn.count, cn.hasCount, cn.stmtCount = count, true, stmtCount
	if !had || w.gap || count < prev {
		return nil
	}
	counted := int64(count - prev)
	s.mu.Lock()
	defer s.mu.Unlock()
	if stmtCount >= prevStmts {
		s.stats.stmtSeen += w.stmts
		s.stats.stmtCounted += int64(stmtCount - prevStmts)
	}
	s.stats.seen += w.seen
	s.stats.counted += counted
	if counted > 0 {
		s.stats.ratios = append(s.stats.ratios, float64(w.seen)/float64(counted))
	}
	return nil
}

// failed handles a poll error: a lost connection makes the window a gap and
// the next poll reconnects; any other error is counted and sampling goes on.
func (s *Sampler) failed(ctx context.Context, cn *conn, w *window, err error) *conn {
	if ctx.Err() != nil {
		return cn
	}
	pctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if errors.Is(err, driver.ErrBadConn) || cn.c.PingContext(pctx) != nil {
		cn.c.Close()
		w.gap = true
		return nil
	}
	if s.diag != nil {
		s.diag.MalformedAt(s.name, time.Now(), err.Error())
	}
	return cn
}

func (s *Sampler) reapplySetup(ctx context.Context, c *sql.Conn) error {
	plan, err := checkSetup(ctx, c, s.instruments())
	if err != nil || plan.empty() || plan.schemaOff {
		return err
	}
	return applySetup(ctx, c, plan)
}

// pollHistograms adds the native statement histograms' deltas (MySQL 8) to
// the window. Counts that went back (TRUNCATE of the tables) leave this
// window without histogram series, never with negative counts.
func (s *Sampler) pollHistograms(ctx context.Context, cn *conn, w *window) error {
	if cn.hist == nil {
		return nil
	}
	series, reset, err := cn.hist.poll(ctx, connQuery(cn.c), time.Now())
	if err != nil {
		return err
	}
	if reset {
		s.diag.Warn(s.name, "the statement histogram counters went back (TRUNCATE or restart): histograms start again from the next interval")
	}
	for _, sh := range series {
		if w.series[sh.Key.Event] == nil {
			w.order = append(w.order, sh.Key.Event)
		}
		w.series[sh.Key.Event] = sh.Hist
	}
	return nil
}
