package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// DefaultInstruments are the instrument patterns --setup enables and the
// check requires when --instruments does not name others.
var defaultInstruments = []string{"wait/io/file/%", "wait/io/table/%"}

// requiredConsumers must be enabled for the sampler (global and thread
// instrumentation are on by default but gate everything else).
var requiredConsumers = []string{
	"global_instrumentation", "thread_instrumentation",
	"events_waits_current", "events_waits_history_long",
	"events_statements_current", "events_statements_history_long",
}

// ErrSetup is wrapped by errors saying performance_schema is not ready.
var ErrSetup = fmt.Errorf("performance_schema is not set up for sampling")

// setupPlan is what the server lacks.
type setupPlan struct {
	schemaOff   bool     // performance_schema=OFF: needs a restart
	consumers   []string // consumers to enable
	instruments []string // patterns with disabled or untimed instruments
	waitsTable  string   // the wait history table to sample
}

func (p setupPlan) empty() bool {
	return !p.schemaOff && len(p.consumers) == 0 && len(p.instruments) == 0
}

// statements returns the UPDATEs that enable what is missing.
func (p setupPlan) statements() []string {
	var out []string
	if len(p.consumers) > 0 {
		out = append(out, "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN ("+quoteList(p.consumers)+")")
	}
	for _, pat := range p.instruments {
		out = append(out, "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME LIKE "+quote(pat))
	}
	return out
}

// message explains what to do, for the error shown to the user.
func (p setupPlan) message(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v:", name, ErrSetup)
	if p.schemaOff {
		b.WriteString("\n  start the server with performance_schema=ON (my.cnf [mysqld] section, or --performance-schema=ON); it cannot be enabled at run time. If latscope then reports ring overruns (a busy server: the autosized 1000-row ring holds ~20 ms of waits at 50,000 waits/s), raise performance_schema_events_waits_history_long_size there too; only overruns call for it")
		return b.String()
	}
	b.WriteString(" run as a user allowed to UPDATE performance_schema.setup_consumers and setup_instruments (or pass --setup):")
	for _, s := range p.statements() {
		b.WriteString("\n  " + s + ";")
	}
	b.WriteString("\n  (these settings last until the server restarts; to keep them, use performance-schema-consumer-* and performance-schema-instrument options in my.cnf)")
	return b.String()
}

// checkSetup reads what the sampler needs from the server.
func checkSetup(ctx context.Context, q querier, instruments []string) (setupPlan, error) {
	var plan setupPlan
	var on int
	if err := q.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		return plan, fmt.Errorf("reading @@performance_schema: %w", err)
	}
	if on == 0 {
		plan.schemaOff = true
		return plan, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT NAME, ENABLED FROM performance_schema.setup_consumers")
	if err != nil {
		return plan, fmt.Errorf("reading setup_consumers: %w", err)
	}
	enabled := map[string]bool{}
	for rows.Next() {
		var name, yes string
		if err := rows.Scan(&name, &yes); err != nil {
			rows.Close()
			return plan, fmt.Errorf("reading setup_consumers: %w", err)
		}
		enabled[name] = strings.EqualFold(yes, "YES")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return plan, fmt.Errorf("reading setup_consumers: %w", err)
	}
	plan.waitsTable = "events_waits_history_long"
	for _, c := range requiredConsumers {
		if c == "events_waits_history_long" && !enabled[c] && enabled["events_waits_history"] {
			// The per-thread ring (10 waits a thread) is enough to sample,
			// less reliably: the capture ratio shows what is lost.
			plan.waitsTable = "events_waits_history"
			continue
		}
		if !enabled[c] {
			plan.consumers = append(plan.consumers, c)
		}
	}
	for _, pat := range instruments {
		var off, all int
		err := q.QueryRowContext(ctx, "SELECT COALESCE(SUM(ENABLED <> 'YES' OR TIMED <> 'YES'), 0), COUNT(*) FROM performance_schema.setup_instruments WHERE NAME LIKE ?", pat).Scan(&off, &all)
		if err != nil {
			return plan, fmt.Errorf("reading setup_instruments %s: %w", pat, err)
		}
		if off > 0 {
			plan.instruments = append(plan.instruments, pat)
		}
	}
	return plan, nil
}

// applySetup runs the plan's UPDATEs (only with --setup).
func applySetup(ctx context.Context, q querier, plan setupPlan) error {
	for _, s := range plan.statements() {
		if _, err := q.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("--setup: %s: %w", s, err)
		}
	}
	return nil
}

// querier is what *sql.Conn and *sql.DB share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// quote makes a SQL string literal (backslashes are escapes by default).
func quote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}
