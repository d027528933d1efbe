package main

import (
	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
)

func newClusterCommand(env environment) *cobra.Command {
	var (
		format, output, linkage, scale, suggest string
		k, maxK                                 int
	)
	cmd := &cobra.Command{
		Use:   "cluster SOURCE...",
		Short: "Workload characterization: cluster statements on their resource demands per execution",
		Long: `Group SQL statements into a few representative workloads by their demands per execution,
as capacity planners characterize a workload: each statement is a vector of CPU, logical and
physical reads and waits by wait class (User I/O, Commit, Concurrency, Network, ...; idle waits
left out), the vectors are scaled (--scale: z-score by default), and hierarchical clustering
merges the two closest clusters until one is left (--linkage single: the minimum spanning tree;
average; ward). The tree is cut into --k clusters, or into the suggested number: the cut below
the largest gap between merge heights, or (--suggest silhouette) the cut with the largest mean
silhouette. Prints each cluster's centroid (mean demand per execution, in the original units),
its totals over all executions and its members.

SOURCEs are Oracle 10046 traces (profiled together, statements merged by sqlid, as
latscope profile does), and CSV (or tab-separated) exports of pg_stat_statements and of
MySQL's performance_schema.events_statements_summary_by_digest, detected by their header
(docs/cluster.md lists the columns read), and postgres:// URIs, whose pg_stat_statements is
read live. -o FILE writes .html (tables, dendrogram and
principal-component projection on one self-contained page), .csv, .json or a table.`,
		Example: `  latscope cluster DBM11106_ora_6334.trc
  latscope cluster a.trc b.trc --linkage ward --k 4 -o clusters.html
  psql -c "\copy (select * from pg_stat_statements) to 'pgss.csv' csv header"
  latscope cluster pgss.csv --format csv
  latscope cluster postgres://postgres@db1/postgres --linkage average -o pg.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s needs at least one SOURCE: a 10046 trace, a pg_stat_statements or performance_schema digest CSV (or - for stdin); see --help", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "table", "csv", "json":
			default:
				return usagef("--format %q: want table, csv or json (-o FILE.html for a page)", format)
			}
			opts, err := driver.ClusterOptions(linkage, scale, k, maxK, suggest)
			if err != nil {
				return usagef("%v", err)
			}
			return driver.Cluster(cmd.Context(), driver.ClusterConfig{Sources: args, Format: format, Output: output, Options: opts,
				Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "table", "stdout format: table, csv or json")
	fl.StringVarP(&output, "output", "o", "", "write to FILE (.html, .csv, .json, else a table) instead of stdout")
	fl.StringVar(&linkage, "linkage", "single", "cluster distance: single (minimum spanning tree), average or ward")
	fl.StringVar(&scale, "scale", "z", "feature scaling: z (z-score), log (z-score of ln(1+demand)), range (min-max) or none (raw demands)")
	fl.IntVar(&k, "k", 0, "number of clusters (default: the suggested one)")
	fl.IntVar(&maxK, "max-k", driver.ClusterDefaultMaxK, "largest number of clusters to suggest")
	fl.StringVar(&suggest, "suggest", "gap", "suggest the number of clusters by the largest gap between merge heights (gap) or the largest mean silhouette (silhouette)")
	return cmd
}
