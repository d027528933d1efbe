package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Output formats.
const (
	FormatTable = "table"
	FormatCSV   = "csv"
	FormatJSON  = "json"
	FormatHTML  = "html"
)

// writers write the clustering in each format.
var writers = map[string]func(*bufio.Writer, *Result) error{
	FormatTable: writeTable,
	"":          writeTable,
	FormatCSV:   writeCSV,
	FormatJSON:  func(w *bufio.Writer, r *Result) error { return writeJSON(w, r) },
	FormatHTML:  writeHTML,
}

// Write writes the clustering in format (table, csv, json or html).
func Write(w io.Writer, r *Result, format string) error {
	write, ok := writers[format]
	if !ok {
		return fmt.Errorf("cluster: unknown format %q: want table, csv, json or html", format)
	}
	bw := bufio.NewWriter(w)
	if err := write(bw, r); err != nil {
		return err
	}
	return bw.Flush()
}

// exact prints a figure with at most 6 decimals and no trailing zeros.
func exact(v float64) string { return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64) }

// short prints a figure to about 4 significant digits, without exponent.
func short(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := int(math.Floor(math.Log10(math.Abs(v)))) + 1
	return strconv.FormatFloat(v, 'f', min(max(4-digits, 0), 6), 64)
}

// Describe says how the clusters were made, in one line.
func (r *Result) Describe() string {
	how := string(r.Linkage) + " linkage"
	if r.Linkage == Single {
		how += " (minimum spanning tree)"
	}
	scaled := map[Scaling]string{ScaleZ: "z-scored demands per execution", ScaleLog: "z-scored ln(1 + demand per execution)",
		ScaleRange: "range-scaled demands per execution", ScaleNone: "raw demands per execution"}[r.Scaling]
	return fmt.Sprintf("%s on the Euclidean distance of %s", how, scaled)
}

// KReason says where the number of clusters came from.
func (r *Result) KReason() string {
	suggestion := "too few statements to suggest"
	for _, c := range r.Candidates {
		switch {
		case c.K != r.Suggested:
		case r.SuggestedBy == SuggestSilhouette && c.Silhouette != nil:
			suggestion = fmt.Sprintf("suggested %d: the largest mean silhouette (%.3f)", r.Suggested, *c.Silhouette)
		case r.SuggestedBy == SuggestSilhouette:
			suggestion = fmt.Sprintf("suggested %d: no cut has a silhouette", r.Suggested)
		default:
			suggestion = fmt.Sprintf("suggested %d: the largest gap between merge heights (%s)", r.Suggested, short(c.Gap))
		}
	}
	if r.KSuggested {
		return fmt.Sprintf("k=%d, %s; --k chooses", r.K, suggestion)
	}
	return fmt.Sprintf("k=%d as asked; %s", r.K, suggestion)
}

func sourceNames(r *Result) string {
	names := make([]string, len(r.Inputs))
	for i, in := range r.Inputs {
		names[i] = in.Source
	}
	return strings.Join(names, ", ")
}

func writeTable(w *bufio.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "Workload clusters of %d statements from %s\n", len(r.Members), sourceNames(r))
	fmt.Fprintf(w, "%s; %s", r.Describe(), r.KReason())
	if len(r.Clusters) < r.K {
		fmt.Fprintf(w, "; %d clusters, as merges tie at the cut", len(r.Clusters))
	}
	fmt.Fprintf(w, "\n\nCentroids (mean demand per execution)\n")
	fmt.Fprintf(tw, "cluster\tstatements\texecutions\t%s\t\n", strings.Join(r.Features, "\t"))
	for _, c := range r.Clusters {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t\n", c.ID, len(c.Members), c.Executions, cells(c.Centroid))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nTotals (demand over all executions)\n")
	fmt.Fprintf(tw, "cluster\t%s\t\n", strings.Join(r.Features, "\t"))
	for _, c := range r.Clusters {
		fmt.Fprintf(tw, "%d\t%s\t\n", c.ID, cells(c.Totals))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nMembers (demand per execution)\n")
	fmt.Fprintf(tw, "cluster\tstatement\texecutions\t%s\t  text\n", strings.Join(r.Features, "\t"))
	for _, c := range r.Clusters {
		for _, i := range c.Members {
			m := r.Members[i]
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t  %s\n", c.ID, displayKey(m.Key), m.Executions, cells(m.Demands), firstLine(m.Text, 60))
		}
	}
	tw.Flush()
	for _, in := range r.Inputs {
		if in.Malformed+in.Unexecuted > 0 {
			fmt.Fprintf(w, "\n%s: %d statements; skipped %d never executed, %d malformed rows", in.Source, in.Rows, in.Unexecuted, in.Malformed)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// displayKey shortens the key of a cursor without a PARSING line ("cursor
// #N of PATH") to the trace's base name.
func displayKey(key string) string {
	if before, file, ok := strings.Cut(key, " of "); ok && strings.HasPrefix(key, "cursor #") {
		return before + " of " + path.Base(filepath.ToSlash(file))
	}
	return key
}

func cells(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = short(x)
	}
	return strings.Join(s, "\t")
}

// firstLine shortens a statement's text to its first line, at most n bytes
// (not cutting a character).
func firstLine(text string, n int) string {
	text = strings.TrimSpace(text)
	cut := false
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		text, cut = text[:i], true
	}
	if len(text) > n {
		for n > 0 && text[n]&0xC0 == 0x80 {
			n--
		}
		text, cut = text[:n], true
	}
	if cut {
		text += "…"
	}
	return text
}

// writeCSV writes one row per statement: its cluster, identity and demands
// per execution.
func writeCSV(w *bufio.Writer, r *Result) error {
	w.WriteString("cluster,statement,source,kind,executions")
	for _, f := range r.Features {
		w.WriteString("," + f)
	}
	w.WriteString(",text\n")
	for _, c := range r.Clusters {
		for _, i := range c.Members {
			m := r.Members[i]
			fmt.Fprintf(w, "%d,%s,%s,%s,%d", c.ID, csvField(m.Key), csvField(m.Source), m.Kind, m.Executions)
			for _, v := range m.Demands {
				w.WriteString("," + exact(v))
			}
			w.WriteString("," + csvField(m.Text) + "\n")
		}
	}
	return nil
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

func writeJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Method  string `json:"method"`
		KReason string `json:"k_reason"`
		*Result
	}{r.Describe(), r.KReason(), r})
}
