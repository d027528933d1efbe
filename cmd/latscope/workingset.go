package main

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
)

func newWorkingSetCommand(env environment) *cobra.Command {
	var (
		shared sharedFlags
		wc     driver.WorkingSetConfig
	)
	cmd := &cobra.Command{
		Use:   "workingset SOURCE...",
		Short: "Block-read working set: distinct blocks read, re-reads, reads per block, by file, event and latency class",
		Long: `Count the working set of an Oracle workload from the addresses of its block reads: the
file, first block and block count of every 'db file sequential read', 'db file scattered
read', 'direct path read' and 'direct path read temp' wait, from 10046 trace WAIT lines or
live from the Oracle wait-history sampler (oracle://... --sessions COND: X$KSLWH with
--fixed-tables, else V$SESSION_WAIT_HISTORY; their P1, P2, P3).

For all reads, per file, per event, per latency bucket and per latency class it prints the
block reads, the read calls, the distinct blocks read, reads per block and the re-read
fraction (the share of block reads that read a block read before). Classes split read calls
at the valley between their fastest latency mode and the next (cache-like below, media-like
above), or at --split; with one mode there are no classes.

Distinct blocks are counted exactly up to --exact-limit blocks, then estimated with
HyperLogLog; the output says which, and the estimate's relative standard error (0.81 % at
the default --precision 14). Memory stays bounded whatever the input (docs/workingset.md).

--format json|csv for scripts; -o FILE writes by extension (.json, .csv, else a table).`,
		Example: `  latscope workingset DBM11106_ora_6334.trc
  latscope workingset *.trc --split 1ms --format json | jq '.classes'
  latscope workingset 'oracle://system@db:1521/ORCL' --sessions "username = 'APP'" --duration 10m -o ws.json`,
		Args: requireSources,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := shared.config(env, args)
			if err != nil {
				return err
			}
			switch wc.Format {
			case "table", "csv", "json":
			default:
				return usagef("--format %q: want table, csv or json", wc.Format)
			}
			if ext := strings.ToLower(filepath.Ext(wc.Output)); ext == ".html" || ext == ".htm" {
				return usagef("-o %s: workingset writes .json, .csv or a table (no HTML page)", wc.Output)
			}
			if wc.Split < 0 {
				return usagef("--split must not be negative")
			}
			if p := wc.Counter.Precision; p != 0 && (p < 4 || p > 18) {
				return usagef("--precision %d: want 4 to 18", p)
			}
			if wc.Counter.ExactLimit < 0 {
				return usagef("--exact-limit must not be negative")
			}
			wc.Config = c
			return driver.WorkingSet(cmd.Context(), wc)
		},
	}
	shared.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&wc.Format, "format", "table", "stdout format: table, csv or json")
	fl.StringVarP(&wc.Output, "output", "o", "", "write to FILE (.json, .csv, else a table) instead of stdout")
	fl.DurationVar(&wc.Split, "split", 0, "latency dividing cache-like from media-like reads (default: the valley between the latency modes)")
	fl.BoolVar(&wc.NoClasses, "no-classes", false, "no cache-like/media-like classes")
	fl.IntVar(&wc.Counter.ExactLimit, "exact-limit", 0, "distinct blocks counted exactly before estimating (default 1048576, 32 MiB)")
	fl.Uint8Var(&wc.Counter.Precision, "precision", 0, "HyperLogLog precision of the estimates, 4 to 18 (default 14: 0.81 % error, 16 KiB a sketch)")
	return cmd
}
