package main

import (
	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
)

func newProfileCommand(env environment) *cobra.Command {
	var (
		format, output, span string
		top                  int
	)
	cmd := &cobra.Command{
		Use:   "profile TRACE...",
		Short: "Response-time profile of Oracle 10046 traces: calls' CPU, waits, per-SQL resource profiles",
		Long: `Profile where the response time of Oracle extended SQL traces (event 10046) went, as
Method R asks: the span of each trace (last tim − first tim, exact to 1 µs; with --span start
from the earliest start a line implies, tim − e or tim − ela, as TVD$XTAT measures it) split into the
CPU of its top-level calls (dep=0: their c= includes their recursive calls'), its waits by
event (inside calls, and between calls such as SQL*Net message from client) and the
unaccounted-for time; then the database calls by type and depth, every SQL statement
(by sqlid, or hash value before 11g) sorted by elapsed time with executions, rows,
elapsed, CPU, waits and per-execution figures (tkprof's figures), and for the --top
statements their calls, waits by event and call-latency distribution.

Several traces are profiled together: spans and times add up, statements are merged by
sqlid. -o FILE writes .html (one self-contained page), .json or a table (docs/profile.md).`,
		Example: `  latscope profile DBM11106_ora_6334.trc
  latscope profile DBM11106_ora_6334.trc --top 3 -o profile.html
  latscope profile a.trc b.trc.gz --format json | jq '.statements[0]'`,
		Args: requireTraces,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "table", "json":
			default:
				return usagef("--format %q: want table or json", format)
			}
			switch span {
			case "tim", "start":
			default:
				return usagef("--span %q: want tim or start", span)
			}
			if top < 0 {
				return usagef("--top must not be negative")
			}
			return driver.Profile(cmd.Context(), driver.ProfileConfig{Traces: args, Format: format, Output: output, Top: top, Span: span,
				Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "table", "stdout format: table or json")
	fl.StringVarP(&output, "output", "o", "", "write to FILE (.html, .json, else a table) instead of stdout")
	fl.StringVar(&span, "span", "tim", "how a trace's span is measured: tim (last tim − first tim) or start (last tim − the earliest tim − e or tim − ela, as TVD$XTAT measures it)")
	fl.IntVar(&top, "top", 5, "how many statements to detail (calls, waits, latency distribution)")
	return cmd
}

func requireTraces(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usagef("%s needs at least one 10046 trace file (or - for stdin); see --help", cmd.CommandPath())
	}
	return nil
}
