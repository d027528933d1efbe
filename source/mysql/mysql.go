// Package mysql samples a live MySQL or MariaDB server's performance_schema:
// exact per-wait durations from events_waits_history_long (TIMER_WAIT, in
// picoseconds) per wait event, and statement durations from
// events_statements_history_long per digest, de-duplicated on (THREAD_ID,
// EVENT_ID). The capture ratio compares what the histories showed with
// what the server counted in its summaries in the same windows, instrument
// by instrument and in the server's units (table I/O in rows); ring
// overruns are detected directly (capture.go, summary.go, docs/mysql.md).
// Read-only, except for the performance_schema setup UPDATEs it runs with
// --setup.
package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// Defaults.
const (
	DefaultInterval     = time.Second
	DefaultPoll         = 10 * time.Millisecond
	DefaultQueryTimeout = 5 * time.Second
)

// Description documents the source for `latscope sources`.
const Description = "MySQL/MariaDB performance_schema sampler (mysql://user@host:port/, also mariadb://): " +
	"exact wait durations from events_waits_history_long polled every 10 ms, one series per EVENT_NAME " +
	"(wait/io/file/innodb/innodb_data_file, wait/io/table/sql/handler, ...), and statement durations " +
	"from events_statements_history_long, one series per digest (\"statement: <digest text>\"); " +
	"per-interval counts (not cumulative). Once per interval the server's exact counts and times per instrument " +
	"(events_waits_summary_global_by_event_name, events_statements_summary_global_by_event_name) give the " +
	"capture ratio, instrument by instrument, and mean series (\"summary mean: <instrument>\"; table I/O, which " +
	"the server counts in rows, \"summary mean per row: wait/io/table/sql/handler\"). Needs performance_schema=ON, the consumers " +
	"events_waits_current, events_waits_history_long, events_statements_current, " +
	"events_statements_history_long and the wait/io/file/% and wait/io/table/% instruments enabled and " +
	"timed (--setup enables them; --instruments chooses others); privileges: GRANT SELECT ON " +
	"performance_schema.* (and UPDATE on performance_schema.setup_consumers, setup_instruments for " +
	"--setup). Password from the URI, MYSQL_PWD or --password-file. " +
	"MySQL 8.0.19+ also: the deltas of events_statements_histogram_global (series \"statements (histogram)\") and " +
	"of events_statements_histogram_by_digest for the 20 digests with the most statements in the interval " +
	"(\"statement: <digest text> (histogram)\"), with the server's own 450 bucket edges (10 µs × 10^(n/50)); " +
	"MariaDB has no such tables. The history_long rings (performance_schema_events_waits_history_long_size, " +
	"..._statements_history_long_size; autosized, often 1000 rows) must hold one poll's events; the report " +
	"counts the polls that found a ring overrun (full, sharing no row with the previous poll) and only then " +
	"advises a bigger ring (startup options only; a longer scan per poll)."

// Probe returns the "mysql://" live source.
func Probe() source.Probe { return probe("mysql") }

// MariaDBProbe returns the same source under the "mariadb://" scheme.
func MariaDBProbe() source.Probe { return probe("mariadb") }

func probe(scheme string) source.Probe {
	return source.Probe{
		Scheme:      scheme,
		Description: Description,
		Open: func(arg string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
			return Open(context.Background(), scheme, arg, opts, diag)
		},
	}
}

// Open parses the URI, connects, and checks (or with opts.DB.Setup,
// applies) the performance_schema setup.
func Open(ctx context.Context, scheme, arg string, opts source.Options, diag *input.Diagnostics) (*Sampler, error) {
	t, err := parseURI(scheme, arg)
	if err != nil {
		return nil, err
	}
	if err := t.resolvePassword(opts.DB.PasswordFile); err != nil {
		return nil, err
	}
	s := &Sampler{
		name:     t.String(),
		opts:     opts,
		diag:     diag,
		interval: opts.Interval,
		poll:     DefaultPoll,
		timeout:  opts.DB.QueryTimeout,
		stats:    runStats{capture: newCaptureStats()},
		link:     source.NewLinkWatch(opts.DB.Link),
	}
	if s.interval <= 0 {
		s.interval = DefaultInterval
	}
	if s.timeout <= 0 {
		s.timeout = DefaultQueryTimeout
	}
	connector, err := mysql.NewConnector(t.config())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	s.db = sql.OpenDB(connector)
	s.db.SetMaxIdleConns(1)
	if err := s.prepare(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// prepare checks the setup and chooses the wait table.
func (s *Sampler) prepare(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	patterns := s.instruments()
	plan, err := checkSetup(ctx, s.db, patterns)
	if err != nil {
		return fmt.Errorf("%s at %s: %w", s.name, time.Now().Format(time.RFC3339), err)
	}
	if !plan.empty() && s.opts.DB.Setup && !plan.schemaOff {
		if err := applySetup(ctx, s.db, plan); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if plan, err = checkSetup(ctx, s.db, patterns); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	if !plan.empty() {
		return fmt.Errorf("%s", plan.message(s.name))
	}
	s.waitsTable = plan.waitsTable
	// MySQL 8.0.19+: native statement histograms; MariaDB has none, and
	// that is no reason to warn.
	if s.histograms, err = hasHistogramTables(ctx, s.db, "performance_schema"); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	if s.waitsTable != "events_waits_history_long" && s.diag != nil {
		s.diag.Warn(s.name, "consumer events_waits_history_long is off: sampling events_waits_history (10 waits per thread), expect a lower capture ratio")
	}
	return nil
}

// instruments returns the instrument patterns to require.
func (s *Sampler) instruments() []string {
	if len(s.opts.DB.Instruments) > 0 {
		return s.opts.DB.Instruments
	}
	return defaultInstruments
}
