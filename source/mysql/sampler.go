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
var slackPS uint64 = 50e9 // 50 ms

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
	// link hears of lost and restored connections (opts.DB.Link).
	link *source.LinkWatch

	mu    sync.Mutex
	stats runStats
}

// runStats accumulates what SamplerStats reports.
type runStats struct {
	started time.Time
	elapsed time.Duration
	polls   int64
	capture captureStats
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
	s.stats.capture.fill(&st)
	return st
}

// CaptureRatios returns the waits' capture ratio of every window compared
// so far.
func (s *Sampler) CaptureRatios() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]float64(nil), s.stats.capture.ratios...)
}

// eventKey identifies one event in a history table.
type eventKey struct{ thread, event uint64 }

// clock follows one timer's newest TIMER_END seen. A history table can mix
// timers whose values lie far apart: MariaDB times idle waits with the
// MICROSECOND timer and the other waits with CYCLE (setup_timers), so a
// cut taken from one would hide every row of the other.
type clock struct{ maxEnd uint64 }

func (c *clock) cut() uint64 {
	if c.maxEnd < slackPS {
		return 0
	}
	return c.maxEnd - slackPS
}

// ring follows one history table: the newest TIMER_END seen per timer, and
// the keys returned by the last poll. A row absent from the last poll's
// answer was overwritten or fell below the cut, so it cannot come back:
// remembering only the last answer keeps the memory bounded by the ring
// size.
type ring struct {
	events, idle clock
	last         map[eventKey]struct{}
	// size is the ring's rows (0: unknown, as for the per-thread
	// events_waits_history); fresh the rows the last poll found new.
	size, fresh int
}

// answer gathers one poll's rows of a ring.
type answer struct {
	keys  map[eventKey]struct{}
	fresh int // rows the previous poll had not returned
	timed int // rows with a TIMER_END
	idle  int // fresh rows that were idle waits
}

func (r *ring) begin() answer { return answer{keys: make(map[eventKey]struct{}, len(r.last))} }

// row notes one row of the answer, timed by c, and says whether it is new.
func (r *ring) row(a *answer, k eventKey, end sql.Null[uint64], c *clock) bool {
	a.keys[k] = struct{}{}
	if end.Valid {
		a.timed++
		c.maxEnd = max(c.maxEnd, end.V)
	}
	if _, old := r.last[k]; old {
		return false
	}
	a.fresh++
	return true
}

// end closes the answer and says whether the ring overran: it held as
// many rows as it can and none of them was in the previous answer, so it
// wrapped since and the rows written in between are lost.
func (r *ring) end(a answer) (overrun bool) {
	overrun = r.size > 0 && r.last != nil && len(a.keys) >= r.size && a.fresh == len(a.keys)
	r.last, r.fresh = a.keys, a.fresh
	return overrun
}

// conn is one connection's state; a new connection starts from a baseline.
type conn struct {
	c     *sql.Conn
	self  uint64 // our own THREAD_ID, excluded from statements
	waits ring
	stmts ring
	// waitSum and stmtSum are the summaries read at the last window's end.
	waitSum, stmtSum summary
	// dropped says a table-dropping statement ran in the last window.
	dropped bool
	hist    *histPoller // nil without the histogram tables
}

// hurry says the last poll found so many new rows that waiting for the
// next tick would risk losing some: a poll that found more than half a
// ring is followed at once by the next (the ring holds only a few ms of a
// busy server).
func (cn *conn) hurry() bool {
	if cn == nil {
		return false
	}
	for _, r := range []*ring{&cn.waits, &cn.stmts} {
		if r.size > 0 && 2*r.fresh > r.size {
			return true
		}
	}
	return false
}

// window gathers one interval.
type window struct {
	start  time.Time
	gap    bool
	series map[string]*hist.Histogram
	order  []string
	// seen is the history rows per instrument (waits and statements);
	// edge the part of them that the window's closing poll found: the
	// events written while it scanned the ring are among them, seen in
	// this window but counted in the next (docs/mysql.md).
	seen, edge map[string]seenCount
	// closing says the window's closing poll is running.
	closing bool
	// maxBatch is the most rows one table I/O event fetched.
	maxBatch int64
	// means are the summaries' exact means, set when the window closes.
	means []stream.SeriesMean
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

// see counts one history row of an instrument: one event, units as the
// server counts them.
func (w *window) see(name string, units int64) {
	w.seen[name] = w.seen[name].plus(units)
	if w.closing {
		w.edge[name] = w.edge[name].plus(units)
	}
}

// Run polls until ctx is cancelled, emitting one interval per --interval.
// The queries themselves are never cancelled (each is bounded by the
// query timeout): cancelling one kills its connection, and the last,
// partial window needs it.
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
	due := w.start.Add(s.interval)
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
				s.link.Lost(fmt.Errorf("connection failed: %w", err))
			} else {
				backoff = 100 * time.Millisecond
				s.link.Reached()
			}
		}
		// A due window's closing poll reads the new rows itself: a poll just
		// before it would scan the rings twice in a row, and on a loaded
		// machine, where one scan can take longer than half an interval,
		// the sampler would fall further behind its grid every window
		// until the last window began after the deadline.
		closing := !now.Before(due)
		switch {
		case cn == nil:
			w.gap = true
		case !closing:
			if err := s.pollOnce(ctx, cn, &w); err != nil {
				cn = s.failed(ctx, cn, &w, err)
			}
		}
		if closing {
			if cn != nil {
				if err := s.closeWindow(ctx, cn, &w); err != nil {
					cn = s.failed(ctx, cn, &w, err)
				}
			}
			if err := emit(s.toInterval(w, now)); err != nil {
				return err
			}
			due = nextDue(due, now, s.interval, w.gap)
			s.mu.Lock()
			if w.gap {
				s.stats.capture.gap()
			}
			s.stats.elapsed = time.Since(s.stats.started)
			s.mu.Unlock()
			w = s.newWindow(now)
		}
		// Stopped: finish now. A select with the tick also ready picks
		// either, and polls of a busy server past the deadline could close
		// one more window.
		if ctx.Err() != nil {
			return s.finish(ctx, cn, w, emit)
		}
		if cn.hurry() {
			continue
		}
		select {
		case <-ctx.Done():
			return s.finish(ctx, cn, w, emit)
		case <-tick.C:
		}
	}
}

// nextDue returns when the window after the one due at due closes: on a
// fixed grid from the start, so that a slow poll does not shift the later
// windows and --duration D gives D / --interval windows. After a poll that
// stalled past the next grid point the next window is short, and the grid
// holds. Only a gap (no connection: a reconnect can take seconds) skips
// the grid points it missed, rather than emit a burst of empty gaps.
func nextDue(due, now time.Time, interval time.Duration, gap bool) time.Time {
	due = due.Add(interval)
	if late := now.Sub(due); gap && late >= 0 {
		due = due.Add((late/interval + 1) * interval)
	}
	return due
}

// queryContext bounds one round of queries by the query timeout, but not
// by ctx: see Run.
func (s *Sampler) queryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
}

// finish emits the last, partial window when sampling stops (--duration
// ends mid-window): its events were seen and counted like any other's. A
// window begun at or after the deadline is left out: a poll that ran just
// after the deadline closed the last window and began it.
func (s *Sampler) finish(ctx context.Context, cn *conn, w window, emit func(stream.Interval) error) error {
	now := time.Now()
	defer func() {
		s.mu.Lock()
		s.stats.elapsed = now.Sub(s.stats.started)
		s.mu.Unlock()
	}()
	if deadline, ok := ctx.Deadline(); cn == nil || !now.After(w.start) || ok && !w.start.Before(deadline) {
		return nil
	}
	if err := s.closeWindow(ctx, cn, &w); err != nil {
		s.diag.Warn(s.name, "the last, partial interval is left out: %v", err)
		return nil
	}
	return emit(s.toInterval(w, now))
}

func (s *Sampler) newWindow(start time.Time) window {
	return window{start: start, series: map[string]*hist.Histogram{}, seen: map[string]seenCount{}, edge: map[string]seenCount{}}
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
	iv.Means = w.means
	return iv
}

// connect opens a connection and takes the baselines: the summaries and
// the history rings' current contents, which are not recorded.
func (s *Sampler) connect(ctx context.Context) (*conn, error) {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	c, err := s.db.Conn(qctx)
	if err != nil {
		return nil, err
	}
	cn := &conn{c: c}
	if s.opts.DB.Setup {
		// A restarted server forgot the run-time setup: apply it again.
		err = s.reapplySetup(qctx, c)
	}
	if err == nil {
		err = c.QueryRowContext(qctx, "SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()").Scan(&cn.self)
	}
	if err == nil {
		s.ringSizes(qctx, cn)
	}
	// The first baseline poll reads the whole rings; the second, short
	// one reads the summaries with the rings' new rows, as every window's
	// end does.
	if err == nil {
		err = s.pollHistories(qctx, cn, nil, nil)
	}
	var sums summaries
	if err == nil {
		err = s.pollHistories(qctx, cn, nil, &sums)
		cn.waitSum, cn.stmtSum = sums.waits, sums.stmts
	}
	if err == nil && s.histograms {
		cn.hist = newHistPoller("performance_schema")
		_, _, err = cn.hist.poll(qctx, connQuery(c), time.Now())
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return cn, nil
}

// ringSizes reads the history rings' sizes (a restarted server may have
// new ones). Servers without the variables keep the fixed pace and no
// overrun detection.
func (s *Sampler) ringSizes(ctx context.Context, cn *conn) {
	size := func(variable string) int {
		var n sql.NullInt64
		if cn.c.QueryRowContext(ctx, "SELECT @@"+variable).Scan(&n) != nil || n.Int64 <= 0 {
			return 0
		}
		return int(n.Int64)
	}
	if s.waitsTable == "events_waits_history_long" {
		cn.waits.size = size(waitsRingVariable)
	}
	cn.stmts.size = size(statementsRingVariable)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.capture.rings[0] = ringTallyFor(s.stats.capture.rings[0], s.waitsTable, cn.waits.size, waitsRingVariable)
	s.stats.capture.rings[1] = ringTallyFor(s.stats.capture.rings[1], statementsTable, cn.stmts.size, statementsRingVariable)
}

// pollOnce reads the new rows of both histories into w.
func (s *Sampler) pollOnce(ctx context.Context, cn *conn, w *window) error {
	qctx, cancel := s.queryContext(ctx)
	defer cancel()
	return s.pollHistories(qctx, cn, w, nil)
}

// pollHistories reads both histories; w is nil for the baseline. With
// sums, each history's query reads its summary too, into sums.
func (s *Sampler) pollHistories(ctx context.Context, cn *conn, w *window, sums *summaries) error {
	s.mu.Lock()
	s.stats.polls++
	s.mu.Unlock()
	var waits, stmts summary
	if sums != nil {
		*sums = summaries{waits: summary{}, stmts: summary{}}
		waits, stmts = sums.waits, sums.stmts
	}
	if err := s.pollWaits(ctx, cn, w, waits); err != nil {
		return err
	}
	return s.pollStatements(ctx, cn, w, stmts)
}

// pollWaits reads the waits history's new rows. Every row of the ring
// newer than its timer's cut comes back, idle waits and untimed ones
// included: they take ring slots too, and overruns are found by the whole
// answer. A non-nil sum is filled from the wait summary, read first.
func (s *Sampler) pollWaits(ctx context.Context, cn *conn, w *window, sum summary) error {
	query := "SELECT 1, THREAD_ID, EVENT_ID, EVENT_NAME, TIMER_END, TIMER_WAIT, NUMBER_OF_BYTES FROM performance_schema." +
		s.waitsTable + " WHERE (EVENT_NAME <> 'idle' AND TIMER_END >= ?) OR (EVENT_NAME = 'idle' AND TIMER_END >= ?) OR TIMER_END IS NULL"
	if sum != nil {
		query = waitSummarySQL + query
	}
	rows, err := cn.c.QueryContext(ctx, query, cn.waits.events.cut(), cn.waits.idle.cut())
	if err != nil {
		return fmt.Errorf("polling %s: %w", s.waitsTable, err)
	}
	defer rows.Close()
	a := cn.waits.begin()
	for rows.Next() {
		var part int
		var thread, event, end, wait, number sql.Null[uint64]
		var name string
		if err := rows.Scan(&part, &thread, &event, &name, &end, &wait, &number); err != nil {
			return fmt.Errorf("reading %s: %w", s.waitsTable, err)
		}
		if part == summaryRow {
			sum[name] = counts{end.V, wait.V}
			continue
		}
		k := eventKey{thread.V, event.V}
		c := &cn.waits.events
		if name == "idle" {
			c = &cn.waits.idle
		}
		if !cn.waits.row(&a, k, end, c) {
			continue
		}
		if name == "idle" {
			a.idle++
		}
		if w == nil || !wait.Valid || !strings.HasPrefix(name, "wait/") {
			continue
		}
		units := int64(1)
		if countsInRows(name) && number.Valid {
			units = int64(number.V)
			w.maxBatch = max(w.maxBatch, units)
		}
		w.see(name, units)
		if s.opts.KeepEvent(name) {
			w.record(name, wait.V)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", s.waitsTable, err)
	}
	s.endPoll(&cn.waits, a, w != nil, 0)
	if a.timed == 0 {
		return s.checkRewind(ctx, cn, s.waitsTable, &cn.waits.events)
	}
	return nil
}

// endPoll closes a ring's answer and, outside the baseline, counts it in
// the ring's tally (rings[i]).
func (s *Sampler) endPoll(r *ring, a answer, counting bool, i int) {
	overrun := r.end(a)
	if !counting {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &s.stats.capture.rings[i]
	t.polls++
	t.rows += int64(a.fresh)
	t.idle += int64(a.idle)
	if overrun {
		t.overruns++
	}
}

// checkRewind handles a history table whose timer went back below the
// position reached (seen on VMs whose cycle counter jumps): every poll
// would then ask for rows "newer" than any row and see nothing, forever.
// When a poll returns nothing and the table's newest row lies below the
// cut, the position moves back to it. (Idle waits, on their own timer, do
// not move it; were their timer to go back, only the overrun detection
// would miss them.)
func (s *Sampler) checkRewind(ctx context.Context, cn *conn, table string, c *clock) error {
	cut := c.cut()
	if cut == 0 {
		return nil
	}
	var newest sql.Null[uint64]
	err := cn.c.QueryRowContext(ctx, "SELECT MAX(TIMER_END) FROM performance_schema."+table+" WHERE TIMER_WAIT IS NOT NULL AND EVENT_NAME <> 'idle'").Scan(&newest)
	if err != nil {
		return fmt.Errorf("reading the newest %s row: %w", table, err)
	}
	if newest.Valid && newest.V < cut {
		s.diag.Warn(s.name, "the server's %s timer went back by %.3f s; sampling goes on from its new position",
			table, float64(c.maxEnd-newest.V)/1e12)
		c.maxEnd = newest.V
	}
	return nil
}

// pollStatements reads the statements history's new rows; the sampler's
// own statements come back too (they take ring slots) but are not kept.
// A non-nil sum is filled from the statement summary, read first.
func (s *Sampler) pollStatements(ctx context.Context, cn *conn, w *window, sum summary) error {
	query := `SELECT 1, THREAD_ID, EVENT_ID, EVENT_NAME, TIMER_END, TIMER_WAIT, NULL, NULL, DIGEST_TEXT
		FROM performance_schema.` + statementsTable + ` WHERE TIMER_END >= ? OR TIMER_END IS NULL`
	args := []any{cn.stmts.events.cut()}
	if sum != nil {
		query, args = statementSummarySQL+query, append([]any{cn.self}, args...)
	}
	rows, err := cn.c.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("polling %s: %w", statementsTable, err)
	}
	defer rows.Close()
	a := cn.stmts.begin()
	for rows.Next() {
		var part int
		var thread, id, end, wait, ownN, ownPS sql.Null[uint64]
		var text sql.NullString
		var event string
		if err := rows.Scan(&part, &thread, &id, &event, &end, &wait, &ownN, &ownPS, &text); err != nil {
			return fmt.Errorf("reading %s: %w", statementsTable, err)
		}
		if part == summaryRow {
			sum.addStatement(event, counts{end.V, wait.V}, counts{ownN.V, ownPS.V})
			continue
		}
		k := eventKey{thread.V, id.V}
		if !cn.stmts.row(&a, k, end, &cn.stmts.events) || w == nil || !wait.Valid || k.thread == cn.self {
			continue
		}
		w.see(event, 1)
		if name := statementSeries(text, event); s.opts.KeepEvent(name) {
			w.record(name, wait.V)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", statementsTable, err)
	}
	s.endPoll(&cn.stmts, a, w != nil, 1)
	if a.timed == 0 {
		return s.checkRewind(ctx, cn, statementsTable, &cn.stmts.events)
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

// closeWindow reads the server's summaries with a last poll and compares
// them with the history read, per instrument, then asks whether a
// table-dropping statement is running: a drop that changed the wait
// summary either ended before the statement summary was read (it is in
// its delta) or is still running.
func (s *Sampler) closeWindow(ctx context.Context, cn *conn, w *window) error {
	qctx, cancel := s.queryContext(ctx)
	defer cancel()
	var sums summaries
	w.closing = true
	if err := s.pollHistories(qctx, cn, w, &sums); err != nil {
		return err
	}
	waits, stmts := sums.waits, sums.stmts
	n, err := runningDrops(qctx, cn.c)
	if err != nil {
		return err
	}
	dropping := n > 0
	if err := s.pollHistograms(qctx, cn, w); err != nil {
		return err
	}
	prevWaits, prevStmts := cn.waitSum, cn.stmtSum
	cn.waitSum, cn.stmtSum = waits, stmts
	if w.gap {
		return nil
	}
	wc := countWindow(waits, prevWaits, stmts, prevStmts, dropping, cn.dropped)
	cn.dropped = wc.droppedNow
	w.means = wc.means(s.keepMean)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.capture.add(w.seen, w.edge, wc)
	s.stats.capture.maxBatch = max(s.stats.capture.maxBatch, w.maxBatch)
	return nil
}

// keepMean says whether --event keeps an instrument's summary mean: by the
// instrument's name or the series'.
func (s *Sampler) keepMean(instrument, series string) bool {
	return s.opts.KeepEvent(instrument) || s.opts.KeepEvent(series)
}

// failed handles a poll error: a lost connection makes the window a gap and
// the next poll reconnects; any other error is counted and sampling goes on.
func (s *Sampler) failed(ctx context.Context, cn *conn, w *window, err error) *conn {
	if ctx.Err() != nil {
		return cn
	}
	pctx, cancel := s.queryContext(ctx)
	defer cancel()
	if errors.Is(err, driver.ErrBadConn) || cn.c.PingContext(pctx) != nil {
		cn.c.Close()
		w.gap = true
		s.link.Lost(fmt.Errorf("connection lost: %w", err))
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
