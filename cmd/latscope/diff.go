package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
	"github.com/latscope/latscope/source"
)

func newDiffCommand(env environment) *cobra.Command {
	var (
		shared  sharedFlags
		dc      = driver.NewDiffConfig()
		windows [4]string // --a-from, --a-to, --b-from, --b-to
		match   string
	)
	cmd := &cobra.Command{
		Use:   "diff A B | diff SOURCE --a-from T --a-to T --b-from T --b-to T",
		Short: "Compare the latency of two sources or two windows: rate, time waited, percentile shifts, significance",
		Long: `Compare two SOURCEs (files, recordings, archives, servers, promql+http:// stores ...), or
two windows of one SOURCE (--a-from/--a-to/--b-from/--b-to, the forms --from takes), series
by series (event and instance, or the event alone with --match event; --event and --series
select as elsewhere):

  - events and rate (events/s of each side's observed time), time waited;
  - p50, p90, p99 and p99.9 of each side with --level confidence intervals (order statistics
    at the binomial ranks, n divided by the side's dispersion), and their ratio B/A; the
    latency factor the p50, p90 and p99 ratios agree on;
  - a chi-square test of homogeneity on the buckets both sides share (sparse cells merged
    until every expected count is 5 or more, to 16 cells at most), divided by the dispersion each side's windows
    show among themselves (a quasi-likelihood F test: real windows vary more than independent
    events would, and a plain chi-square flags two halves of any busy recording); the shift is
    marked SIGNIFICANT when its p-value, corrected for the number of series (--correction,
    Holm by default), is below --alpha.

Sources with different bucket edges are compared on the coarser one's edges: exactly when the
finer buckets nest in them, else with straddling buckets split by log-width overlap; the
output says which grid was used. Series found on one side only are listed as such.

--format json|csv|table to stdout; -o FILE by extension: .html (a self-contained page: the
bucket-by-bucket bars, a diverging strip of the share difference, and a difference heat map
over aligned time when both sides have windows), .json, .csv, else a table (docs/diff.md).`,
		Example: `  latscope diff before.lsr after.lsr
  latscope diff example_latency_data.txt --a-to '2013-08-26 16:28:38' --b-from '2013-08-26 16:28:38' --tz +02:00
  latscope diff /var/lib/latscope --a-from -14d --a-to -13d --b-from -7d --b-to -6d --series 'log file*'
  latscope diff node1.lsr node2.lsr --format json | jq '.series[] | select(.significant)'
  latscope diff before.trc after.trc --match event   # traces of two databases: events matched by name
  latscope diff fio_before.json fio_after.json -o diff.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("%s needs two SOURCEs, or one SOURCE with --a-from/--a-to/--b-from/--b-to; see --help", cmd.CommandPath())
			}
			if len(args) == 2 && args[0] == "-" && args[1] == "-" {
				return usagef("only one side can read standard input")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := shared.config(env, args)
			if err != nil {
				return err
			}
			if err := parseDiffWindows(&dc, windows, c, len(args)); err != nil {
				return err
			}
			switch match {
			case "event+instance", "instance":
			case "event":
				dc.EventOnly = true
			default:
				return usagef("--match %q: want event+instance or event", match)
			}
			if err := dc.Check(); err != nil {
				return usageError{err}
			}
			dc.Config = c
			return driver.Diff(cmd.Context(), dc)
		},
	}
	shared.register(cmd)
	shared.registerTo(cmd)
	fl := cmd.Flags()
	for i, w := range []struct{ name, usage string }{
		{"a-from", "side A: windows starting at or after this time (the forms of --from)"},
		{"a-to", "side A: windows starting before this time"},
		{"b-from", "side B: windows starting at or after this time"},
		{"b-to", "side B: windows starting before this time"},
	} {
		fl.StringVar(&windows[i], w.name, "", w.usage)
	}
	fl.Float64Var(&dc.Level, "level", dc.Level, "confidence level of the percentiles' intervals")
	fl.Float64Var(&dc.Alpha, "alpha", dc.Alpha, "significance level of the shift test, after the correction for multiple series")
	fl.StringVar(&dc.Correction, "correction", dc.Correction, "correction for testing many series: holm, bonferroni or none")
	fl.StringVar(&match, "match", "event+instance", "match series by event+instance, or by event alone (instances summed: traces of different databases)")
	fl.StringVar(&dc.Format, "format", dc.Format, "stdout format: table, json, csv or html")
	fl.StringVarP(&dc.Output, "output", "o", "", "write to FILE (.html, .json, .csv, else a table) instead of stdout")
	return cmd
}

// parseDiffWindows reads --a-from ... --b-to; one SOURCE needs windows,
// and its windows replace --from/--until.
func parseDiffWindows(dc *driver.DiffConfig, windows [4]string, c driver.Config, sources int) error {
	now := time.Now()
	into := []*time.Time{&dc.WindowA.From, &dc.WindowA.To, &dc.WindowB.From, &dc.WindowB.To}
	names := []string{"a-from", "a-to", "b-from", "b-to"}
	given := false
	for i, v := range windows {
		if v == "" {
			continue
		}
		t, err := source.ParseWhen(v, now, c.Read.Loc())
		if err != nil {
			return usagef("--%s: %v", names[i], err)
		}
		*into[i] = t
		given = true
	}
	for _, w := range []struct {
		name string
		w    driver.DiffWindow
	}{{"a", dc.WindowA}, {"b", dc.WindowB}} {
		if !w.w.From.IsZero() && !w.w.To.IsZero() && !w.w.From.Before(w.w.To) {
			return usagef("--%s-from is not before --%s-to", w.name, w.name)
		}
	}
	if sources == 1 {
		if !given {
			return usagef("one SOURCE is compared in two windows: give --a-from/--a-to and --b-from/--b-to (or two SOURCEs)")
		}
		if dc.WindowA == dc.WindowB {
			return usagef("windows A and B are the same")
		}
		if !c.Read.From.IsZero() || !c.Read.To.IsZero() {
			return usagef("--from/--until with one SOURCE: give the windows as --a-from/--a-to/--b-from/--b-to")
		}
	}
	return nil
}
