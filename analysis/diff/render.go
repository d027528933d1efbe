package diff

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Output formats.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatCSV   = "csv"
	FormatHTML  = "html"
)

// Write writes r in format (table, json, csv or html).
func Write(w io.Writer, r *Result, format string) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case FormatCSV:
		return WriteCSV(w, r)
	case FormatHTML:
		return WriteHTML(w, r)
	}
	return WriteTable(w, r)
}

// qName is "p50", "p99.9".
func qName(q float64) string { return "p" + strconv.FormatFloat(q*100, 'f', -1, 64) }

// latency formats µs with three significant digits and a unit.
func latency(us Num) string {
	v := float64(us)
	switch {
	case math.IsNaN(v):
		return "-"
	case math.IsInf(v, 0):
		return "∞"
	case v == 0:
		return "0"
	case v >= 1e6:
		return fmt.Sprintf("%.3gs", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gms", v/1e3)
	}
	return fmt.Sprintf("%.3gµs", v)
}

// times formats a ratio as ×1.23.
func times(r Num) string {
	switch {
	case math.IsNaN(float64(r)):
		return "-"
	case math.IsInf(float64(r), 1):
		return "∞"
	}
	return fmt.Sprintf("×%.3g", float64(r))
}

func number(v Num, format string) string {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return "-"
	}
	return fmt.Sprintf(format, float64(v))
}

// pValue formats a p-value: 3 significant digits, tiny ones as <1e-300.
func pValue(p Num) string {
	v := float64(p)
	switch {
	case math.IsNaN(v):
		return "-"
	case v < 1e-300:
		return "<1e-300"
	}
	return fmt.Sprintf("%.3g", v)
}

// Mark is SIGNIFICANT, — (tested, no shift) or the reason there is no test
// (one side only; too few events: the merged cells left one cell).
func (s Series) Mark() string {
	switch {
	case s.In == OnlyInA:
		return "only in A"
	case s.In == OnlyInB:
		return "only in B"
	case s.Test == nil || math.IsNaN(float64(s.Test.P)):
		return "untested (too few events)"
	case s.Significant:
		return "SIGNIFICANT"
	}
	return "—"
}

// Name is "event" or "event @instance".
func (s Series) Name() string { return SeriesKey{s.Event, s.Instance}.String() }

func (r *Result) correctionText() string {
	switch r.Correction {
	case CorrectNone:
		return "no correction for multiple tests"
	case CorrectBonferroni:
		return fmt.Sprintf("Bonferroni's correction over %d tested series", r.Tests)
	}
	return fmt.Sprintf("Holm's correction over %d tested series", r.Tests)
}

// sideLine describes a side: name, time span, observed seconds, windows.
func sideLine(label string, s SideSummary) string {
	span := "no data"
	if s.Start != nil {
		if s.Relative {
			span = fmt.Sprintf("%s … %s (relative)", s.Start.Sub(time.Unix(0, 0)), s.End.Sub(time.Unix(0, 0)))
		} else {
			span = s.Start.Format("2006-01-02 15:04:05 -07:00") + " … " + s.End.Format("15:04:05")
		}
	}
	return fmt.Sprintf("%s: %s  %s, %.1f s observed, %d windows, %d series", label, s.Name, span, s.Seconds, s.Windows, s.Series)
}

// WriteTable writes one line per series with its figures and mark, then
// every series' percentiles with their intervals and its test.
func WriteTable(w io.Writer, r *Result) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, sideLine("A", r.A))
	fmt.Fprintln(bw, sideLine("B", r.B))
	fmt.Fprintf(bw, "shift marked at α = %g with %s; percentile intervals %g %%\n\n", r.Alpha, r.correctionText(), 100*r.Level)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"series", "in", "events A", "events B", "rate A/s", "rate B/s", "rate", "waited"}
	for _, q := range Quantiles {
		head = append(head, qName(q))
	}
	head = append(head, "factor", "p adj", "shift")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, s := range r.Series {
		row := []string{s.Name(), s.In, number(s.CountA, "%.0f"), number(s.CountB, "%.0f"), number(s.RateA, "%.1f"), number(s.RateB, "%.1f"),
			times(s.RateRatio), times(s.TimeRatio)}
		for _, p := range s.Percentile {
			row = append(row, times(p.Ratio))
		}
		padj := "-"
		if s.Test != nil {
			padj = pValue(s.Test.PAdjusted)
		}
		row = append(row, times(s.Factor), padj, s.Mark())
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	for _, s := range r.Series {
		writeDetail(bw, s, r.Level)
	}
	fmt.Fprintf(bw, "\nmethod: %s\n", r.Method)
	return bw.Flush()
}

// writeDetail writes a series' percentiles with intervals, its test and grid.
func writeDetail(bw *bufio.Writer, s Series, level float64) {
	fmt.Fprintf(bw, "\n%s (%s)\n", s.Name(), s.Mark())
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tA\t%g %% interval\tB\t%g %% interval\tB/A\tinterval\t\n", 100*level, 100*level)
	for _, p := range s.Percentile {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", qName(p.Q), latency(p.A), interval(latency(p.ALow), latency(p.AHigh)),
			latency(p.B), interval(latency(p.BLow), latency(p.BHigh)), times(p.Ratio), interval(times(p.RatioLo), times(p.RatioHi)))
	}
	tw.Flush()
	time := "estimated from bucket midpoints"
	if s.TimeExact {
		time = "exact"
	}
	fmt.Fprintf(bw, "  time waited %s s → %s s (%s, %s)\n", number(s.TimeA, "%.6g"), number(s.TimeB, "%.6g"), times(s.TimeRatio), time)
	if t := s.Test; t != nil {
		disp := fmt.Sprintf("dispersion %.3g on %d df", float64(t.Dispersion), t.DispersionDF)
		if t.DispersionDF == 0 {
			disp = "dispersion 1 (no windows to estimate it from: events taken as independent)"
		}
		fmt.Fprintf(bw, "  test: χ² %s on %d df (%d cells), %s, F %s, p %s, adjusted %s\n", number(t.ChiSquare, "%.4g"), t.DF, t.Cells,
			disp, number(t.F, "%.3g"), pValue(t.P), pValue(t.PAdjusted))
	}
	if s.In == InBoth {
		fmt.Fprintf(bw, "  latency factor B/A %s (geometric mean of the p50, p90, p99 ratios)\n", times(s.Factor))
		fmt.Fprintf(bw, "  grid: %s\n", s.Grid)
	}
}

// interval formats [lo, hi]; "-" when neither end is known.
func interval(lo, hi string) string {
	if lo == "-" && hi == "-" {
		return "-"
	}
	return "[" + lo + ", " + hi + "]"
}

// WriteCSV writes one row per series, every figure a column.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	head := []string{"event", "instance", "in", "count_a", "count_b", "rate_a_per_s", "rate_b_per_s", "rate_ratio",
		"time_waited_a_s", "time_waited_b_s", "time_waited_ratio"}
	for _, q := range Quantiles {
		n := qName(q)
		head = append(head, n+"_a_us", n+"_a_low_us", n+"_a_high_us", n+"_b_us", n+"_b_low_us", n+"_b_high_us", n+"_ratio")
	}
	head = append(head, "factor", "chi_square", "df", "dispersion", "f", "p", "p_adjusted", "significant", "grid")
	if err := cw.Write(head); err != nil {
		return err
	}
	g := func(v Num) string {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return ""
		}
		return strconv.FormatFloat(float64(v), 'g', -1, 64)
	}
	for _, s := range r.Series {
		row := []string{s.Event, s.Instance, s.In, g(s.CountA), g(s.CountB), g(s.RateA), g(s.RateB), g(s.RateRatio),
			g(s.TimeA), g(s.TimeB), g(s.TimeRatio)}
		for _, p := range s.Percentile {
			row = append(row, g(p.A), g(p.ALow), g(p.AHigh), g(p.B), g(p.BLow), g(p.BHigh), g(p.Ratio))
		}
		row = append(row, g(s.Factor))
		if t := s.Test; t != nil {
			row = append(row, g(t.ChiSquare), strconv.Itoa(t.DF), g(t.Dispersion), g(t.F), g(t.P), g(t.PAdjusted))
		} else {
			row = append(row, "", "", "", "", "", "")
		}
		row = append(row, strconv.FormatBool(s.Significant), s.Grid)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
