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
}

func (f *dbFlags) options() source.DBOptions {
	return source.DBOptions{
		PasswordFile: f.passwordFile, QueryTimeout: f.queryTimeout, Setup: f.setup, Instruments: f.instruments,
		Sessions: f.sessions, FixedTables: f.fixedTables, Instance: f.instance,
		Probe: f.probe, ProbeEvery: f.probeEvery,
	}
}
