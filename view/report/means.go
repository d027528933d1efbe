package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// meansTitle heads the table section: a mean series has a count and a total
// per interval, never a distribution, so it gets no percentiles or buckets.
const meansTitle = "Means (no distribution: count and total per interval)"

// Mean summarises a series the source reports only as a count and a total
// per window (pg_stat_statements, pg_stat_database block read time).
// Latencies are in microseconds; nil means no events. Interval means are the
// smallest and largest per-interval mean over intervals with events.
//
// A series of another quantity (host figures: r/s, %util, kB used) has
// Quantity set, Unit and SourceUnit its quantity, Count and Sum the
// denominator and numerator of its value (seconds and reads for r/s), Value
// and the interval values in the quantity; its per_s and *_us fields stay
// null and 0.
type Mean struct {
	SeriesHeader
	Quantity          stream.Quantity `json:"quantity,omitempty"`
	Count             float64         `json:"count"`
	PerS              *float64        `json:"per_s"`
	SumUs             float64         `json:"sum_us"`
	MeanUs            *float64        `json:"mean_us"`
	MinIntervalMeanUs *float64        `json:"min_interval_mean_us"`
	MaxIntervalMeanUs *float64        `json:"max_interval_mean_us"`
	Sum               *float64        `json:"sum,omitempty"`
	Value             *float64        `json:"value,omitempty"`
	MinIntervalValue  *float64        `json:"min_interval_value,omitempty"`
	MaxIntervalValue  *float64        `json:"max_interval_value,omitempty"`
	Intervals         []Interval      `json:"intervals"`
}

// summariseMean builds one mean series' summary; count/s divides by the
// observed time (gaps excluded).
func summariseMean(s *stream.MeanSeries) Mean {
	if !s.Quantity.IsLatency() {
		return summariseQuantity(s)
	}
	us := func(v float64) float64 { return s.Unit.Nanos(v) / 1e3 }
	out := Mean{SeriesHeader: newSeriesHeader(s.Key, s.Sources, s.Unit), Count: s.Count, SumUs: us(s.Sum), Intervals: []Interval{}}
	if s.Count > 0 {
		out.MeanUs = ptr(s.Mean() / 1e3)
	}
	if rate := s.Rate(); !math.IsNaN(rate) {
		out.PerS = ptr(rate)
	}
	if lo, hi, ok := s.MeanRange(); ok {
		out.MinIntervalMeanUs, out.MaxIntervalMeanUs = ptr(lo/1e3), ptr(hi/1e3)
	}
	for _, p := range s.Points {
		out.Intervals = append(out.Intervals, MeanRow(p, s.Unit, s.Quantity, s.Points[0].Start))
	}
	return out
}

// summariseQuantity builds the summary of a series that is not a latency.
func summariseQuantity(s *stream.MeanSeries) Mean {
	h := newSeriesHeader(s.Key, s.Sources, s.Unit)
	h.Unit, h.SourceUnit = string(s.Quantity), string(s.Quantity)
	out := Mean{SeriesHeader: h, Quantity: s.Quantity, Count: s.Count, Sum: ptr(s.Sum), Intervals: []Interval{}}
	if s.Count > 0 {
		out.Value = ptr(s.Mean())
	}
	if lo, hi, ok := s.MeanRange(); ok {
		out.MinIntervalValue, out.MaxIntervalValue = ptr(lo), ptr(hi)
	}
	for _, p := range s.Points {
		out.Intervals = append(out.Intervals, MeanRow(p, s.Unit, s.Quantity, s.Points[0].Start))
	}
	return out
}

// MeanRow is the row of one window of a mean series (sums in unit, or of
// quantity q), its offset counted from origin.
func MeanRow(p stream.MeanPoint, unit hist.Unit, q stream.Quantity, origin time.Time) Interval {
	iv := newInterval(p.Start, origin, p.Duration, p.Relative, p.Gap)
	switch {
	case p.Gap:
	case q.IsLatency():
		iv.Count, iv.SumUs = p.Count, unit.Nanos(p.Sum)/1e3
	default:
		iv.Count, iv.Sum = p.Count, ptr(p.Sum)
		if p.Count > 0 {
			iv.Value = ptr(p.Sum / p.Count)
		}
	}
	return iv
}

// formatValue prints a value of quantity q (not a latency) with its symbol.
func formatValue(v float64, q stream.Quantity) string {
	digits := 1
	if q == stream.Count || q == stream.Ratio {
		digits = 2
	}
	return strconv.FormatFloat(v, 'f', digits, 64) + q.Symbol()
}

// writeMeansTable writes the means section of the human table.
func writeMeansTable(w io.Writer, means []Mean, o Options) {
	fmt.Fprintln(w, meansTitle)
	for _, m := range means {
		fmt.Fprintln(w)
		fmt.Fprintln(w, m.key())
		if !m.Quantity.IsLatency() {
			writeQuantity(w, m, o)
			continue
		}
		rate := "-"
		if m.PerS != nil {
			rate = strconv.FormatFloat(*m.PerS, 'f', 1, 64)
		}
		fmt.Fprintf(w, "  events %s   %s/s   total %s\n", groupDigits(m.Count), rate, dur(m.SumUs))
		if m.MeanUs != nil {
			fmt.Fprintf(w, "  mean %s   interval means %s – %s\n", dur(*m.MeanUs), dur(*m.MinIntervalMeanUs), dur(*m.MaxIntervalMeanUs))
		}
		fmt.Fprintf(w, "  sources %s\n", joinOrDash(m.Sources))
		if o.Intervals && len(m.Intervals) > 0 {
			writeIntervalRows(w, m.Intervals)
		}
	}
}

// writeQuantity writes the table lines of a series that is not a latency:
// its value over the observed windows, the range of interval values, and
// each interval's value.
func writeQuantity(w io.Writer, m Mean, o Options) {
	if m.Value != nil {
		fmt.Fprintf(w, "  value %s   interval values %s – %s\n", formatValue(*m.Value, m.Quantity),
			formatValue(*m.MinIntervalValue, m.Quantity), formatValue(*m.MaxIntervalValue, m.Quantity))
	} else {
		fmt.Fprintln(w, "  value -")
	}
	fmt.Fprintf(w, "  sources %s\n", joinOrDash(m.Sources))
	if !o.Intervals || len(m.Intervals) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  start\tseconds\tvalue\t")
	for _, iv := range m.Intervals {
		value := "-"
		switch {
		case iv.Gap:
			value = "no data"
		case iv.Value != nil:
			value = formatValue(*iv.Value, m.Quantity)
		}
		fmt.Fprintf(tw, "  %s\t%.3f\t%s\t\n", iv.startOr(fmt.Sprintf("+%.1fs", iv.OffsetS)), iv.Seconds, value)
	}
	tw.Flush()
}

// writeIntervalRows writes per-interval rows: start, seconds, events,
// events/s and mean.
func writeIntervalRows(w io.Writer, ivs []Interval) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  start\tseconds\tevents\tevents/s\tmean\t")
	for _, iv := range ivs {
		start := iv.startOr(fmt.Sprintf("+%.1fs", iv.OffsetS))
		if iv.Gap {
			fmt.Fprintf(tw, "  %s\t%.3f\tno data\t\t\t\n", start, iv.Seconds)
			continue
		}
		mean := "-"
		if iv.Count > 0 {
			mean = dur(iv.SumUs / iv.Count)
		}
		fmt.Fprintf(tw, "  %s\t%.3f\t%s\t%.1f\t%s\t\n", start, iv.Seconds, groupDigits(iv.Count), iv.Count/iv.Seconds, mean)
	}
	tw.Flush()
}

func joinOrDash(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, ", ")
}

// meanCSVHeader extends the CSV header when the report has mean series, so
// reports without them keep their columns.
var meanCSVHeader = []string{"per_s", "min_interval_mean_us", "max_interval_mean_us"}

// quantityCSVHeader extends the CSV header further when the report has
// series of other quantities than latency: a latency report keeps its
// columns.
var quantityCSVHeader = []string{"quantity", "sum", "value", "min_interval_value", "max_interval_value"}

// hasQuantities reports whether any mean series is not a latency.
func hasQuantities(means []Mean) bool {
	return slices.ContainsFunc(means, func(m Mean) bool { return !m.Quantity.IsLatency() })
}

// meanCSVRows returns the "mean" and "mean_interval" rows of one mean series
// in the long CSV's columns plus meanCSVHeader's, plus quantityCSVHeader's
// when quantities.
func meanCSVRows(m Mean, quantities bool) [][]string {
	opt := func(v *float64) string {
		if v == nil || math.IsNaN(*v) {
			return ""
		}
		return csvNumber(*v)
	}
	row := func(r []string, q ...string) []string {
		if quantities {
			r = append(r, q...)
		}
		return r
	}
	isQ := !m.Quantity.IsLatency()
	rows := [][]string{row(m.csvRow("mean", "", "", "", "", "", csvNumber(m.Count), csvNumber(m.SumUs), "true", opt(m.MeanUs), "", "", "",
		opt(m.PerS), opt(m.MinIntervalMeanUs), opt(m.MaxIntervalMeanUs)),
		string(m.Quantity), opt(m.Sum), opt(m.Value), opt(m.MinIntervalValue), opt(m.MaxIntervalValue))}
	for _, iv := range m.Intervals {
		count, sum, mean := csvNumber(iv.Count), csvNumber(iv.SumUs), ""
		if iv.Gap {
			count, sum = "", ""
		} else if iv.Count > 0 && !isQ {
			mean = csvNumber(iv.SumUs / iv.Count)
		}
		rows = append(rows, row(m.csvRow("mean_interval", iv.startOr(""), csvNumber(iv.OffsetS), csvNumber(iv.Seconds), "", "", count, sum, "", mean, "", "", "", "", "", ""),
			string(m.Quantity), opt(iv.Sum), opt(iv.Value), "", ""))
	}
	return rows
}
