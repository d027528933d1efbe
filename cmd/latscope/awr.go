package main

import (
	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
)

func newAWRCommand(env environment) *cobra.Command {
	var (
		shared sharedFlags
		ac     driver.AWRConfig
	)
	cmd := &cobra.Command{
		Use:   "awr EXPORT...",
		Short: "AWR wait-event analytics: top events per snapshot, wait class and instance, day × hour pivot, trends",
		Long: `Analyse AWR exports as PerfSheet4 does: the top wait events by time waited per snapshot, by
wait class and per instance; time waited by day of week and hour of day; the trends of the
top events' mean latency and wait counts.

EXPORT is best a DBA_HIST_SYSTEM_EVENT extract (sql/awr_system_event.sql: exact time waited,
wait classes; counters cumulative, differenced per instance, a new STARTUP_TIME is a
restart). Any other SOURCE latscope reads (DBA_HIST_EVENT_HISTOGRAM exports from
sql/awr_event_histogram.sql, V$ polls, traces) gives its waits per window and a time waited
estimated from bucket midpoints, without wait classes. Idle events are left out unless
--idle.

--format csv is the long, pivot-ready table (snapshot_time, instance, wait_class, event,
waits, time_s, mean_ms; one row per snapshot window, instance and event); json holds every
ranking, the pivot and the trends; -o FILE writes by extension: .html (a self-contained
page with tables, the pivot and trend charts), .csv, .json, else a table (docs/awr.md).`,
		Example: `  latscope awr awr_system_event.csv
  latscope awr awr_system_event.csv -o awr.html
  latscope awr awr_system_event.csv --format csv > awr_long.csv   # pivot it in a spreadsheet
  latscope awr awr_system_event.csv --top 10 --format json | jq '.wait_classes'
  latscope awr awr.csv --tz Europe/Zurich   # a DBA_HIST_EVENT_HISTOGRAM export`,
		Args: requireSources,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := shared.config(env, args)
			if err != nil {
				return err
			}
			switch ac.Format {
			case "table", "csv", "json", "html":
			default:
				return usagef("--format %q: want table, csv, json or html", ac.Format)
			}
			if ac.Top < 1 {
				return usagef("--top must be 1 or more")
			}
			ac.Config = c
			return driver.AWR(cmd.Context(), ac)
		},
	}
	shared.register(cmd)
	shared.registerTo(cmd)
	fl := cmd.Flags()
	fl.StringVar(&ac.Format, "format", "table", "stdout format: table, csv, json or html")
	fl.StringVarP(&ac.Output, "output", "o", "", "write to FILE (.html, .csv, .json, else a table) instead of stdout")
	fl.IntVar(&ac.Top, "top", 5, "events each ranking and the trends keep")
	fl.BoolVar(&ac.Idle, "idle", false, "keep events of the Idle wait class (SQL*Net message from client ...)")
	return cmd
}
