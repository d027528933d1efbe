package driver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/latscope/latscope/analysis/cluster"
	"github.com/latscope/latscope/analysis/profile"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// ClusterConfig is what `latscope cluster` runs.
type ClusterConfig struct {
	Sources []string
	Read    source.Options
	cluster.Options
	// Format is table, csv, json or html (stdout); Output writes by
	// extension: .html, .csv, .json, else a table.
	Format string
	Output string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Cluster reads statements' demands from 10046 traces (profiled together,
// statements merged by sqlid, as `latscope profile` does) and
// pg_stat_statements or performance_schema digest exports (detected by
// their header), clusters them and writes the clusters.
func Cluster(ctx context.Context, cc ClusterConfig) error {
	diag := input.NewDiagnostics(cc.Stderr, input.DefaultReportLimit)
	var (
		workloads []*cluster.Workload
		inputs    []cluster.ReadStats
		traces    []profile.Input
		names     []string
	)
	opener := ProfileConfig{Stdin: cc.Stdin}
	for _, name := range cc.Sources {
		in, closeIn, err := opener.openTrace(name, diag)
		if err != nil {
			return err
		}
		defer closeIn()
		br := bufio.NewReaderSize(in.Reader, 64<<10)
		in.Reader = br
		if !isStatementCSV(br) {
			traces, names = append(traces, in), append(names, name)
			continue
		}
		ws, stats, err := cluster.ReadCSV(name, br, diag)
		if err != nil {
			return err
		}
		workloads, inputs = append(workloads, ws...), append(inputs, stats)
	}
	if len(traces) > 0 {
		p, err := profile.Build(ctx, traces, cc.Read)
		if err != nil {
			return err
		}
		ws, stats := cluster.FromProfile(strings.Join(names, ", "), p)
		if len(p.Calls) == 0 {
			return fmt.Errorf("%s: no database call: not a 10046 trace, pg_stat_statements or performance_schema digest export?", stats.Source)
		}
		workloads, inputs = append(workloads, ws...), append(inputs, stats)
	}
	diag.PrintSummary(cc.Stderr)
	if len(workloads) == 0 {
		return errors.New(strings.Join(cc.Sources, ", ") + ": no statement with executions to cluster")
	}
	r, err := cluster.Analyze(cluster.NewDataset(workloads), cc.Options)
	if err != nil {
		return err
	}
	r.Inputs = inputs
	if cc.Output != "" {
		format := cluster.FormatTable
		switch strings.ToLower(filepath.Ext(cc.Output)) {
		case ".html", ".htm":
			format = cluster.FormatHTML
		case ".csv":
			format = cluster.FormatCSV
		case ".json":
			format = cluster.FormatJSON
		}
		return writeFile(cc.Output, func(w *bufio.Writer) error { return cluster.Write(w, r, format) })
	}
	return cluster.Write(cc.Stdout, r, cc.Format)
}

// isStatementCSV peeks at the first line for a statement-statistics
// export's header.
func isStatementCSV(br *bufio.Reader) bool {
	head, _ := br.Peek(4096)
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	return cluster.IsStatementCSV(string(head))
}
