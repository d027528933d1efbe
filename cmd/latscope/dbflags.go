package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/latscope/latscope/source"
)

// dbFlags are the live database sources' flags, shared by every data
// command (postgres://, mysql://, oracle:// SOURCEs).
type dbFlags struct {
	passwordFile   string
	queryTimeout   time.Duration
	setup          bool
	instruments    []string
	sessions       string
	fixedTables    bool
	instance       int
	log, probe     string
	probeEvery     time.Duration
	awrFrom, awrTo int
	awrLast        int
	stats          bool
}

func (f *dbFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.passwordFile, "password-file", "", "database password from this file (else the URI or PGPASSWORD/MYSQL_PWD/ORACLE_PASSWORD)")
	fl.DurationVar(&f.queryTimeout, "query-timeout", 0, "give up on a database query after this long (default 5s)")
	fl.BoolVar(&f.setup, "setup", false, "mysql://: enable the performance_schema consumers and instruments the sampler needs")
	fl.StringArrayVar(&f.instruments, "instruments", nil, "mysql:// --setup: instrument name patterns to enable instead of the defaults (repeatable)")
	fl.StringVar(&f.sessions, "sessions", "", "oracle://: sample the wait history of the sessions matching this SQL condition, e.g. \"username like 'APP%'\"")
	fl.BoolVar(&f.fixedTables, "fixed-tables", false, "oracle://: sample X$KSLWH (needs SYS) instead of V$SESSION_WAIT_HISTORY")
	fl.StringVar(&f.probe, "probe", "", "postgres://: also time this statement from the client side, e.g. \"select 1\"")
	fl.DurationVar(&f.probeEvery, "probe-every", 0, "postgres://: interval of --probe (default 100ms)")
	fl.IntVar(&f.instance, "instance", 0, "oracle://: keep only this RAC instance (default: every instance, merged per event)")
	fl.StringVar(&f.log, "log", "", "postgres://: also follow this server log (stderr, csvlog or jsonlog) for exact statement durations")
	fl.IntVar(&f.awrFrom, "awr-from", 0, "oracle://: read AWR event histograms from this snapshot (SNAP_ID) instead of polling")
	fl.IntVar(&f.awrTo, "awr-to", 0, "oracle://: last AWR snapshot to read (default: the latest)")
	fl.IntVar(&f.awrLast, "awr-last", 0, "oracle://: read the last N AWR snapshots instead of polling")
	fl.BoolVar(&f.stats, "stats", false, "live databases: show latscope's own CPU use, polls/s and queries/s while sampling")
}

func (f *dbFlags) options() source.DBOptions {
	return source.DBOptions{
		PasswordFile: f.passwordFile, QueryTimeout: f.queryTimeout, Setup: f.setup, Instruments: f.instruments,
		Sessions: f.sessions, FixedTables: f.fixedTables, Instance: f.instance,
		Probe: f.probe, ProbeEvery: f.probeEvery, Log: f.log,
		AWRFrom: f.awrFrom, AWRTo: f.awrTo, AWRLast: f.awrLast, Stats: f.stats,
	}
}
