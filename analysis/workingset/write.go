package workingset

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// Output formats.
const (
	FormatTable = "table"
	FormatCSV   = "csv"
	FormatJSON  = "json"
)

// Write writes the result in format (table, csv or json).
func Write(w io.Writer, r *Result, format string) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case FormatCSV:
		err = writeCSV(bw, r)
	case FormatJSON:
		err = writeJSON(bw, r)
	case FormatTable, "":
		err = writeTable(bw, r)
	default:
		return fmt.Errorf("workingset: unknown format %q: want table, csv or json", format)
	}
	if err != nil {
		return fmt.Errorf("workingset: writing %s: %w", format, err)
	}
	return bw.Flush()
}

// sections lists the result's groups as the table and the CSV show them.
func sections(r *Result) []struct {
	name   string
	groups []Group
} {
	return []struct {
		name   string
		groups []Group
	}{
		{"total", []Group{r.Total}},
		{"class", r.Classes},
		{"file", r.Files},
		{"event", r.Events},
		{"bucket", r.Buckets},
	}
}

// num prints a figure with at most 6 decimals and no trailing zeros, the
// same in every format.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64) }

func writeJSON(w io.Writer, r *Result) error {
	out := *r
	// Empty lists print as [], not null: consumers need not test for both.
	for _, l := range []*[]Group{&out.Classes, &out.Files, &out.Events, &out.Buckets} {
		if *l == nil {
			*l = []Group{}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeCSV writes one row per group, the section first: pivot-ready.
func writeCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"section", "name", "file", "low_us", "high_us", "reads", "read_calls", "distinct_blocks",
		"exact", "relative_error", "reads_per_block", "reread_fraction"})
	for _, s := range sections(r) {
		for _, g := range s.groups {
			cw.Write([]string{s.name, g.Name, strconv.FormatUint(uint64(g.File), 10),
				strconv.FormatInt(g.LowUS, 10), strconv.FormatInt(g.HighUS, 10),
				strconv.FormatInt(g.Reads, 10), strconv.FormatInt(g.ReadCalls, 10), strconv.FormatInt(g.DistinctBlocks, 10),
				strconv.FormatBool(g.Exact), num(g.RelativeError), num(g.ReadsPerBlock), num(g.RereadFraction)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeTable writes the human table: a heading that says how exact the
// distinct counts are and where the classes split, then one row per group.
// Estimated counts carry a "~".
func writeTable(w *bufio.Writer, r *Result) error {
	if r.Exact {
		fmt.Fprintf(w, "Block-read working set: distinct blocks counted exactly (up to %d)\n", r.ExactLimit)
	} else {
		fmt.Fprintf(w, "Block-read working set: distinct blocks estimated (~, HyperLogLog p=%d, relative standard error %s %%) past %d\n",
			r.Precision, num(100*r.RelativeError), r.ExactLimit)
	}
	if r.SplitUS > 0 {
		fmt.Fprintf(w, "Classes: cache-like read calls < %d µs ≤ media-like\n", r.SplitUS)
	}
	if r.Skipped > 0 {
		fmt.Fprintf(w, "Skipped: %d malformed reads\n", r.Skipped)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "\t\treads\tread calls\tdistinct blocks\treads/block\tre-read\n")
	for _, s := range sections(r) {
		for _, g := range s.groups {
			distinct := strconv.FormatInt(g.DistinctBlocks, 10)
			if !g.Exact {
				distinct = "~" + distinct
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.2f\t%.1f%%\n", s.name, g.Name, g.Reads, g.ReadCalls, distinct,
				g.ReadsPerBlock, 100*g.RereadFraction)
		}
	}
	return tw.Flush()
}
