package driver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

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

// ClusterDefaultMaxK is the largest number of clusters suggested by default.
const ClusterDefaultMaxK = cluster.DefaultMaxSuggested

// ClusterOptions checks the clustering's flags: a linkage, a scaling, the
// number of clusters (0: suggested), the largest suggested and the
// criterion of the suggestion.
func ClusterOptions(linkage, scale string, k, maxK int, suggest string) (cluster.Options, error) {
	l, err := cluster.ParseLinkage(linkage)
	if err != nil {
		return cluster.Options{}, fmt.Errorf("--%w", err)
	}
	s, err := cluster.ParseScaling(scale)
	if err != nil {
		return cluster.Options{}, fmt.Errorf("--%w", err)
	}
	if k < 0 || maxK < 2 {
		return cluster.Options{}, errors.New("--k must not be negative and --max-k must be at least 2")
	}
	if suggest != cluster.SuggestGap && suggest != cluster.SuggestSilhouette {
		return cluster.Options{}, fmt.Errorf("--suggest %q: want gap or silhouette", suggest)
	}
	return cluster.Options{Linkage: l, Scaling: s, K: k, MaxSuggested: maxK, Suggest: suggest}, nil
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
		if isPostgresURI(name) {
			ws, stats, err := postgresStatements(ctx, name, diag)
			if err != nil {
				return err
			}
			workloads, inputs = append(workloads, ws...), append(inputs, stats)
			continue
		}
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
		p, err := profile.Build(ctx, traces, profile.Options{Read: cc.Read})
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

func isPostgresURI(name string) bool {
	return strings.HasPrefix(name, "postgres://") || strings.HasPrefix(name, "postgresql://")
}

// postgresStatements reads pg_stat_statements from a live server (PG*
// variables and the URI's parameters apply, as for psql): the rows a CSV
// export of it holds, through the same reader.
func postgresStatements(ctx context.Context, uri string, diag *input.Diagnostics) ([]*cluster.Workload, cluster.ReadStats, error) {
	name := uri
	if u, err := url.Parse(uri); err == nil {
		name = u.Redacted()
	}
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		return nil, cluster.ReadStats{}, fmt.Errorf("%s: %w", name, err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "select * from pg_stat_statements", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, cluster.ReadStats{}, fmt.Errorf("%s: reading pg_stat_statements (is the extension created, and preloaded?): %w", name, err)
	}
	defer rows.Close()
	var header []string
	for _, f := range rows.FieldDescriptions() {
		header = append(header, f.Name)
	}
	rd, err := cluster.NewRowReader(name, header)
	if err != nil {
		return nil, cluster.ReadStats{}, err
	}
	cells := make([]string, len(header))
	for n := 1; rows.Next(); n++ {
		// The simple protocol returns every value as text, as a CSV export
		// holds it.
		for i, raw := range rows.RawValues() {
			cells[i] = string(raw)
		}
		rd.Row(cells, n, diag)
	}
	if err := rows.Err(); err != nil {
		return nil, cluster.ReadStats{}, fmt.Errorf("%s: reading pg_stat_statements: %w", name, err)
	}
	ws, stats := rd.Workloads()
	return ws, stats, nil
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
