package mysql

import (
	"context"
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

// The summaries are read in the same statement as the history they are
// compared with, ahead of it (UNION ALL, first part first): no client
// round trip, and no scheduling of a busy client, runs between the two.
// The ring scan that follows still takes time, and the events written
// meanwhile are seen in one window but counted in the next (docs/mysql.md).
// Every row has the same columns: part (0: summary, 1: history),
// THREAD_ID, EVENT_ID, EVENT_NAME, then the numbers (summary: COUNT_STAR,
// SUM_TIMER_WAIT and, for statements, the sampler's own COUNT_STAR and
// SUM_TIMER_WAIT; history: TIMER_END, TIMER_WAIT and, for waits,
// NUMBER_OF_BYTES) and, for statements, the digest text.
const (
	waitSummarySQL = `SELECT 0, NULL, NULL, s.EVENT_NAME, s.COUNT_STAR, s.SUM_TIMER_WAIT, NULL
		FROM performance_schema.events_waits_summary_global_by_event_name s
		JOIN performance_schema.setup_instruments i ON i.NAME = s.EVENT_NAME
		WHERE i.ENABLED = 'YES' AND i.TIMED = 'YES' AND s.EVENT_NAME LIKE 'wait/%' AND s.COUNT_STAR > 0 UNION ALL `
	// The sampler's own statements are taken out per instrument.
	statementSummarySQL = `SELECT 0, NULL, NULL, s.EVENT_NAME, s.COUNT_STAR, s.SUM_TIMER_WAIT, COALESCE(t.COUNT_STAR, 0), COALESCE(t.SUM_TIMER_WAIT, 0), NULL
		FROM performance_schema.events_statements_summary_global_by_event_name s
		JOIN performance_schema.setup_instruments i ON i.NAME = s.EVENT_NAME
		LEFT JOIN performance_schema.events_statements_summary_by_thread_by_event_name t ON t.THREAD_ID = ? AND t.EVENT_NAME = s.EVENT_NAME
		WHERE i.ENABLED = 'YES' AND i.TIMED = 'YES' AND s.COUNT_STAR > 0 UNION ALL `
)

// summaryRow is a summary row of a history poll's answer.
const summaryRow = 0

// summaries are the two summaries read at one window's end.
type summaries struct{ waits, stmts summary }

// addStatement adds a statement instrument's counts less the sampler's own.
func (sm summary) addStatement(name string, all, own counts) {
	if c := (counts{all.n - min(own.n, all.n), all.ps - min(own.ps, all.ps)}); c.n > 0 {
		sm[name] = c
	}
}

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
	// tablesDropped says a table may have been dropped in the window or
	// the one before: the table instruments' deltas are unknown.
	tablesDropped bool
	// droppedNow says a table-dropping statement ran in this window.
	droppedNow bool
}

// countWindow takes the deltas of one window; dropping says a
// table-dropping statement was running at its end, droppedBefore that one
// ran in the window before: a dropped table's counts can leave the summary
// only when the server releases the table after the statement, in the
// next window, hidden in the growth of the tables created since.
func countWindow(waits, prevWaits, stmts, prevStmts summary, dropping, droppedBefore bool) windowCounts {
	var wc windowCounts
	var stmtBack map[string]bool
	wc.waits, wc.back = waits.since(prevWaits)
	wc.stmts, stmtBack = stmts.since(prevStmts)
	for name := range stmtBack {
		wc.back[name] = true
	}
	wc.droppedNow = dropping || droppedTables(wc.stmts, stmtBack)
	wc.tablesDropped = wc.droppedNow || droppedBefore
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
