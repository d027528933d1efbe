package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Formats the report can be written in.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatCSV   = "csv"
)

// maxTableBuckets is how many buckets the table lists before folding a
// source's own edges into power-of-two rows.
const maxTableBuckets = 32

// Options shape the human table.
type Options struct {
	// Intervals adds the per-interval rows to the table (JSON and CSV
	// always have them).
	Intervals bool
}

// Write writes the report in one of the formats.
func Write(w io.Writer, r Report, format string, o Options) error {
	switch format {
	case FormatTable, "":
		return WriteTable(w, r, o)
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatCSV:
		return WriteCSV(w, r)
	}
	return fmt.Errorf("unknown report format %q (want table, json or csv)", format)
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteCSV writes one long table: a "series" row per series, then its
// "bucket" and "interval" rows, all with the same columns.
func WriteCSV(w io.Writer, r Report) error {
	cw := csv.NewWriter(w)
	header := []string{"kind", "event", "instance", "source", "start", "offset_s", "seconds", "lower_us", "upper_us",
		"count", "sum_us", "sum_exact", "mean_us", "p50_us", "p90_us", "p99_us"}
	// Mean series add columns; without them the CSV keeps its columns.
	var pad []string
	quantities := hasQuantities(r.Means)
	if len(r.Means) > 0 {
		header = append(header, meanCSVHeader...)
		pad = make([]string, len(meanCSVHeader))
	}
	if quantities {
		header = append(header, quantityCSVHeader...)
		pad = make([]string, len(meanCSVHeader)+len(quantityCSVHeader))
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	num := csvNumber
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return num(*v)
	}
	for _, s := range r.Series {
		row := func(kind string, rest ...string) error {
			return cw.Write(append(s.csvRow(kind, rest...), pad...))
		}
		if err := row("series", "", "", "", "", "", num(s.Count), num(s.SumUs), strconv.FormatBool(s.SumExact),
			opt(s.MeanUs), opt(s.P50Us), opt(s.P90Us), opt(s.P99Us)); err != nil {
			return err
		}
		for _, b := range s.Buckets {
			if err := row("bucket", "", "", "", num(b.LowerUs), num(b.UpperUs), num(b.Count), num(b.SumUs), "", "", "", "", ""); err != nil {
				return err
			}
		}
		for _, iv := range s.Intervals {
			count := num(iv.Count)
			if iv.Gap {
				count = ""
			}
			if err := row("interval", iv.startOr(""), num(iv.OffsetS), num(iv.Seconds), "", "", count, num(iv.SumUs), "", "", "", "", ""); err != nil {
				return err
			}
		}
	}
	for _, m := range r.Means {
		if err := cw.WriteAll(meanCSVRows(m, quantities)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes the human report: per series a summary line and its
// latency buckets with shares of events and of time waited.
func WriteTable(w io.Writer, r Report, o Options) error {
	if len(r.Series) == 0 && len(r.Means) == 0 {
		_, err := fmt.Fprintln(w, "no latency data (no events were read)")
		return err
	}
	for name, st := range r.Samplers {
		fmt.Fprintf(w, "%s: %s, %.0f polls/s", name, st.Kind, st.PollsPerSecond)
		if st.CaptureRatio != nil {
			fmt.Fprintf(w, ", capture ratio %.3f", *st.CaptureRatio)
		}
		if st.Missed > 0 && len(st.Captures) == 0 {
			fmt.Fprintf(w, ", about %d events missed between polls", st.Missed)
		}
		fmt.Fprintln(w)
		writeSamplerDetail(w, st)
	}
	if len(r.Samplers) > 0 {
		fmt.Fprintln(w)
	}
	for i, s := range r.Series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeSeriesTable(w, s, o)
	}
	if len(r.Means) > 0 {
		if len(r.Series) > 0 {
			fmt.Fprintln(w)
		}
		writeMeansTable(w, r.Means, o)
	}
	return nil
}

func writeSeriesTable(w io.Writer, s Series, o Options) {
	name := s.key().String()
	if s.Idle {
		name += "  (idle wait)"
	}
	fmt.Fprintln(w, name)
	sumNote := "exact"
	if !s.SumExact {
		sumNote = "estimated from bucket midpoints"
	}
	fmt.Fprintf(w, "  events %s   time waited %s (%s)\n", groupDigits(s.Count), dur(s.SumUs), sumNote)
	if s.MeanUs != nil {
		fmt.Fprintf(w, "  mean %s   p50 %s   p90 %s   p99 %s\n", dur(*s.MeanUs), dur(*s.P50Us), dur(*s.P90Us), dur(*s.P99Us))
	}
	if s.TopCapped {
		fmt.Fprintln(w, "  the top bucket had no upper bound: read as [lower, 2×lower)")
	}
	buckets := s.Buckets
	if len(buckets) > maxTableBuckets && len(s.powerOfTwo) > 0 {
		fmt.Fprintf(w, "  the source's %d buckets folded into powers of two (--format json lists them)\n", len(buckets))
		buckets = s.powerOfTwo
	}
	if len(buckets) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  latency bucket\tevents\t%\ttime waited\t%\t")
		maxShare := 0.0
		for _, b := range buckets {
			maxShare = math.Max(maxShare, b.Count/s.Count)
		}
		for _, b := range buckets {
			share := 100 * b.Count / s.Count
			tshare := 0.0
			if s.SumUs > 0 {
				tshare = 100 * b.SumUs / s.SumUs
			}
			// The bar is the trailing cell, so it stays left-aligned.
			fmt.Fprintf(tw, "  %s\t%s\t%.1f\t%s\t%.1f\t %s\n", bucketRange(b), groupDigits(b.Count), share, dur(b.SumUs), tshare,
				bar(b.Count/s.Count/maxShare, 30))
		}
		tw.Flush()
	}
	if o.Intervals && len(s.Intervals) > 0 {
		writeIntervalRows(w, s.Intervals)
	}
}

func bucketRange(b Bucket) string {
	if b.LowerUs == 0 {
		return "< " + dur(b.UpperUs)
	}
	if b.Capped {
		return "≥ " + dur(b.LowerUs)
	}
	return dur(b.LowerUs) + " – " + dur(b.UpperUs)
}

// csvNumber prints a number in plain decimal with all its digits.
func csvNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// csvRow starts a CSV row with its kind and the series' key.
func (h SeriesHeader) csvRow(kind string, rest ...string) []string {
	return append([]string{kind, h.Event, h.Instance, h.Source}, rest...)
}

func dur(us float64) string { return hist.FormatDuration(us * 1e3) }

// groupDigits prints a count with thin groups of three digits; fractional
// counts (from rebinning) keep one decimal.
func groupDigits(v float64) string {
	if v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	s := strconv.FormatFloat(v, 'f', 0, 64)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func bar(frac float64, width int) string {
	n := int(math.Round(frac * float64(width)))
	return strings.Repeat("█", max(n, 0))
}

// writeSamplerDetail writes a sampler's capture per kind of event, its
// rings and its advice, one item a line.
func writeSamplerDetail(w io.Writer, st stream.SamplerStats) {
	for _, cp := range st.Captures {
		if cp.Windows == 0 {
			fmt.Fprintf(w, "  capture %s: not compared, all %d windows left out\n", cp.What, cp.LeftOut)
			continue
		}
		if cp.Seen == 0 && cp.Counted == 0 {
			fmt.Fprintf(w, "  capture %s: none seen or counted in %d windows", cp.What, cp.Windows)
		} else {
			fmt.Fprintf(w, "  capture %s: %d of %d %s", cp.What, cp.Seen, cp.Counted, cp.Unit)
		}
		if cp.Events > 0 {
			fmt.Fprintf(w, " (in %d events)", cp.Events)
		}
		if cp.Ratio != nil {
			fmt.Fprintf(w, ", ratio %.3f", *cp.Ratio)
		}
		fmt.Fprintf(w, ", %d windows", cp.Windows)
		if cp.LeftOut > 0 {
			fmt.Fprintf(w, " (%d left out)", cp.LeftOut)
		}
		fmt.Fprintln(w)
	}
	for _, r := range st.Rings {
		fmt.Fprintf(w, "  ring %s: %d rows, %d polls, %d overruns, %d new rows", r.Table, r.Size, r.Polls, r.Overruns, r.Rows)
		if r.IdleRows > 0 {
			fmt.Fprintf(w, " (%d idle)", r.IdleRows)
		}
		fmt.Fprintln(w)
	}
	for _, a := range st.Advice {
		fmt.Fprintf(w, "  advice: %s\n", a)
	}
}
