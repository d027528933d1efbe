package report

import (
	"fmt"
	"io"
	"math"
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
type Mean struct {
	SeriesHeader
	Count             float64    `json:"count"`
	PerS              *float64   `json:"per_s"`
	SumUs             float64    `json:"sum_us"`
	MeanUs            *float64   `json:"mean_us"`
	MinIntervalMeanUs *float64   `json:"min_interval_mean_us"`
	MaxIntervalMeanUs *float64   `json:"max_interval_mean_us"`
	Intervals         []Interval `json:"intervals"`
}

// summariseMean builds one mean series' summary; count/s divides by the
// observed time (gaps excluded).
func summariseMean(s *stream.MeanSeries) Mean {
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
		out.Intervals = append(out.Intervals, MeanRow(p, s.Unit, s.Points[0].Start))
	}
	return out
}

// MeanRow is the row of one window of a mean series (sums in unit), its
// offset counted from origin.
func MeanRow(p stream.MeanPoint, unit hist.Unit, origin time.Time) Interval {
	iv := newInterval(p.Start, origin, p.Duration, p.Relative, p.Gap)
	if !p.Gap {
		iv.Count, iv.SumUs = p.Count, unit.Nanos(p.Sum)/1e3
	}
	return iv
}

// writeMeansTable writes the means section of the human table.
func writeMeansTable(w io.Writer, means []Mean, o Options) {
	fmt.Fprintln(w, meansTitle)
	for _, m := range means {
		fmt.Fprintln(w)
		fmt.Fprintln(w, m.key())
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

// meanCSVRows returns the "mean" and "mean_interval" rows of one mean series
// in the long CSV's columns plus meanCSVHeader's.
func meanCSVRows(m Mean) [][]string {
	opt := func(v *float64) string {
		if v == nil || math.IsNaN(*v) {
			return ""
		}
		return csvNumber(*v)
	}
	rows := [][]string{m.csvRow("mean", "", "", "", "", "", csvNumber(m.Count), csvNumber(m.SumUs), "true", opt(m.MeanUs), "", "", "",
		opt(m.PerS), opt(m.MinIntervalMeanUs), opt(m.MaxIntervalMeanUs))}
	for _, iv := range m.Intervals {
		count, sum, mean := csvNumber(iv.Count), csvNumber(iv.SumUs), ""
		if iv.Gap {
			count, sum = "", ""
		} else if iv.Count > 0 {
			mean = csvNumber(iv.SumUs / iv.Count)
		}
		rows = append(rows, m.csvRow("mean_interval", iv.startOr(""), csvNumber(iv.OffsetS), csvNumber(iv.Seconds), "", "", count, sum, "", mean, "", "", "", "", "", ""))
	}
	return rows
}
