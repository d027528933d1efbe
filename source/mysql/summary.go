package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// The server counts every timed event exactly in its summary tables:
// COUNT_STAR and SUM_TIMER_WAIT per instrument (EVENT_NAME), cumulative.
// Once per window the sampler reads them and takes each instrument's
// delta on its own: the capture ratio compares them with the history rows
// seen, and the deltas are the exact means shown beside the sampled
// distributions.
//
// Table I/O is counted in rows: one wait/io/table/sql/handler event can
// fetch a batch of rows (a scan), its history row holding the row count in
// NUMBER_OF_BYTES, while COUNT_STAR grows by that count and SUM_TIMER_WAIT
// by the event's time once (checked on MariaDB 10.11: over a run, the
// history's NUMBER_OF_BYTES and TIMER_WAIT sums equal the summary's
// deltas). The table instruments' totals also go back when a table is
// dropped, renamed or rebuilt: its counts leave the summary with it.

// The history tables and the variables sizing them.
const (
	statementsTable        = "events_statements_history_long"
	waitsRingVariable      = "performance_schema_events_waits_history_long_size"
	statementsRingVariable = "performance_schema_events_statements_history_long_size"
)

// Series name prefixes of the summary means.
const (
	// summaryMeanPrefix names an instrument's exact mean per event.
	summaryMeanPrefix = "summary mean: "
	// summaryRowMeanPrefix names table I/O's exact mean per row.
	summaryRowMeanPrefix = "summary mean per row: "
)

const (
	waitSummarySQL = `SELECT s.EVENT_NAME, s.COUNT_STAR, s.SUM_TIMER_WAIT
		FROM performance_schema.events_waits_summary_global_by_event_name s
		JOIN performance_schema.setup_instruments i ON i.NAME = s.EVENT_NAME
		WHERE i.ENABLED = 'YES' AND i.TIMED = 'YES' AND s.EVENT_NAME LIKE 'wait/%' AND s.COUNT_STAR > 0`
	// The sampler's own statements are taken out per instrument.
	statementSummarySQL = `SELECT s.EVENT_NAME, s.COUNT_STAR, s.SUM_TIMER_WAIT, COALESCE(t.COUNT_STAR, 0), COALESCE(t.SUM_TIMER_WAIT, 0)
		FROM performance_schema.events_statements_summary_global_by_event_name s
		JOIN performance_schema.setup_instruments i ON i.NAME = s.EVENT_NAME
		LEFT JOIN performance_schema.events_statements_summary_by_thread_by_event_name t ON t.THREAD_ID = ? AND t.EVENT_NAME = s.EVENT_NAME
		WHERE i.ENABLED = 'YES' AND i.TIMED = 'YES' AND s.COUNT_STAR > 0`
)

// tableDroppingStatements are the statements that can take a table's
// counts out of the summary (DROP, ALTER and RENAME drop the table's
// instrumentation; TRUNCATE and OPTIMIZE rebuild InnoDB tables). A window
// in which one ran, or at whose end one is running, cannot use the table
// instruments' deltas even when they did not go back: the counts of the
// tables created in the window hide those of the table dropped.
var tableDroppingStatements = []string{
	"statement/sql/drop_table", "statement/sql/drop_db", "statement/sql/alter_table",
	"statement/sql/rename_table", "statement/sql/truncate", "statement/sql/optimize",
	"statement/sql/create_index", "statement/sql/drop_index", "statement/sql/drop_sequence",
}

// runningDropSQL counts the table-dropping statements running now.
var runningDropSQL = "SELECT COUNT(*) FROM performance_schema.events_statements_current WHERE END_EVENT_ID IS NULL AND EVENT_NAME IN (" +
	quoteList(tableDroppingStatements) + ")"

// isTableInstrument says whether a wait instrument's counts live with the
// tables (and go when a table is dropped).
func isTableInstrument(name string) bool {
	return strings.HasPrefix(name, "wait/io/table/") || strings.HasPrefix(name, "wait/lock/table/")
}

// countsInRows says whether the server counts an instrument in rows
// (NUMBER_OF_BYTES per event) rather than events.
func countsInRows(name string) bool { return strings.HasPrefix(name, "wait/io/table/") }

// counts is one instrument's cumulative summary: COUNT_STAR (events, or
// rows for table I/O) and SUM_TIMER_WAIT in picoseconds.
type counts struct{ n, ps uint64 }

// summary is every instrument's counts at one moment; instruments that
// counted nothing are absent.
type summary map[string]counts

// since returns what each instrument counted since prev. An instrument
// whose count or time went back (a dropped table, a TRUNCATE of the
// summary, an instrument disabled in between) is in back instead: its
// delta is unknown.
func (cur summary) since(prev summary) (delta summary, back map[string]bool) {
	delta, back = summary{}, map[string]bool{}
	for name, c := range cur {
		p := prev[name]
		switch {
		case c.n < p.n || c.ps < p.ps:
			back[name] = true
		case c.n > p.n:
			delta[name] = counts{c.n - p.n, c.ps - p.ps}
		}
	}
	for name := range prev {
		if _, ok := cur[name]; !ok {
			back[name] = true
		}
	}
	return delta, back
}

// readWaitSummary reads the timed wait instruments' counts.
func readWaitSummary(ctx context.Context, q querier) (summary, error) {
	rows, err := q.QueryContext(ctx, waitSummarySQL)
	if err != nil {
		return nil, fmt.Errorf("reading events_waits_summary_global_by_event_name: %w", err)
	}
	defer rows.Close()
	out := summary{}
	for rows.Next() {
		var name string
		var c counts
		if err := rows.Scan(&name, &c.n, &c.ps); err != nil {
			return nil, fmt.Errorf("reading events_waits_summary_global_by_event_name: %w", err)
		}
		out[name] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading events_waits_summary_global_by_event_name: %w", err)
	}
	return out, nil
}

// readStatementSummary reads the timed statement instruments' counts in
// sessions other than self.
func readStatementSummary(ctx context.Context, q querier, self uint64) (summary, error) {
	rows, err := q.QueryContext(ctx, statementSummarySQL, self)
	if err != nil {
		return nil, fmt.Errorf("reading events_statements_summary_global_by_event_name: %w", err)
	}
	defer rows.Close()
	out := summary{}
	for rows.Next() {
		var name string
		var all, own counts
		if err := rows.Scan(&name, &all.n, &all.ps, &own.n, &own.ps); err != nil {
			return nil, fmt.Errorf("reading events_statements_summary_global_by_event_name: %w", err)
		}
		if c := (counts{all.n - min(own.n, all.n), all.ps - min(own.ps, all.ps)}); c.n > 0 {
			out[name] = c
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading events_statements_summary_global_by_event_name: %w", err)
	}
	return out, nil
}

// runningDrops counts the table-dropping statements running now.
func runningDrops(ctx context.Context, q querier) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, runningDropSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading events_statements_current: %w", err)
	}
	return n, nil
}

// droppedTables says whether a statement delta holds a table-dropping
// statement, or one's count went back.
func droppedTables(stmts summary, back map[string]bool) bool {
	for _, name := range tableDroppingStatements {
		if stmts[name].n > 0 || back[name] {
			return true
		}
	}
	return false
}

// windowCounts is what the server counted in one window: the deltas of
// the instruments whose counts can be used.
type windowCounts struct {
	waits, stmts summary
	// back are the instruments (waits and statements) whose counts went
	// back: their deltas are unknown.
	back map[string]bool
	// tablesDropped says a table may have been dropped in the window: the
	// table instruments' deltas are unknown.
	tablesDropped bool
}

// countWindow takes the deltas of one window; dropping says a
// table-dropping statement was running at its end.
func countWindow(waits, prevWaits, stmts, prevStmts summary, dropping bool) windowCounts {
	var wc windowCounts
	var stmtBack map[string]bool
	wc.waits, wc.back = waits.since(prevWaits)
	wc.stmts, stmtBack = stmts.since(prevStmts)
	for name := range stmtBack {
		wc.back[name] = true
	}
	wc.tablesDropped = dropping || droppedTables(wc.stmts, stmtBack)
	for name := range wc.waits {
		if !wc.usable(name) {
			delete(wc.waits, name)
		}
	}
	return wc
}

// usable says whether an instrument's delta is known this window.
func (wc windowCounts) usable(name string) bool {
	return !wc.back[name] && !(wc.tablesDropped && isTableInstrument(name))
}

// means returns the window's exact means, one series per instrument that
// counted something, sorted by name; keep filters them (by instrument or
// series name).
func (wc windowCounts) means(keep func(instrument, series string) bool) []stream.SeriesMean {
	var out []stream.SeriesMean
	add := func(s summary) {
		for name, c := range s {
			series := summaryMeanPrefix + name
			if countsInRows(name) {
				series = summaryRowMeanPrefix + name
			}
			if !keep(name, series) {
				continue
			}
			out = append(out, stream.SeriesMean{Key: stream.Key{Event: series}, Count: float64(c.n),
				Sum: float64(c.ps) / 1e3, Unit: hist.Nanosecond})
		}
	}
	add(wc.waits)
	add(wc.stmts)
	sort.Slice(out, func(i, j int) bool { return out[i].Key.Event < out[j].Key.Event })
	return out
}

// readSummaries reads both summaries and whether a table-dropping
// statement is running, in that order: a drop that changed the wait
// summary either ended before the statement summary was read (it is in
// its delta) or is still running.
func readSummaries(ctx context.Context, c *sql.Conn, self uint64) (waits, stmts summary, dropping bool, err error) {
	if waits, err = readWaitSummary(ctx, c); err != nil {
		return nil, nil, false, err
	}
	if stmts, err = readStatementSummary(ctx, c, self); err != nil {
		return nil, nil, false, err
	}
	n, err := runningDrops(ctx, c)
	return waits, stmts, n > 0, err
}
