// Package csv writes latscope's stream as a long CSV table for spreadsheets
// and data frames: one row per (interval, series, non-empty bucket), one row
// per series without events, one row per (interval, mean series), and one
// row per interval without either (a window with no events, or a gap), so
// that every window appears. A mean series (a count and a total per window,
// no distribution) has no bucket edges; its row alone fills mean_us and
// unit. Each row
// repeats its window and its series' count and sum, so a pivot table needs
// no lookup. docs/interchange.md documents the columns.
package csv

import (
	"bufio"
	stdcsv "encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/stream"
)

// FormatName is the value of --to.
const FormatName = "csv"

// Header is the first row.
var Header = []string{"start", "offset_s", "seconds", "gap", "event", "instance", "source", "input",
	"lower_us", "upper_us", "count", "capped", "series_count", "series_sum_us", "sum_exact", "mean_us", "unit"}

// Format returns the CSV output format.
func Format() sink.Format {
	return sink.Format{
		Name:      FormatName,
		Extension: ".csv",
		Description: "CSV long table: one row per interval, series and non-empty bucket (edges in µs), counts per interval, " +
			"and one row per interval and mean series (count, sum, mean), for spreadsheets and data frames",
		Keeps: "windows (start, offset, duration, gaps), series keys, every non-empty bucket's edges in µs and count, " +
			"each series' count and sum, and mean series (count and total per window: count, sum and mean in µs, " +
			"with the source's unit); not the histogram's native layout (grid scale, empty buckets) nor time zone names",
		Example: "latscope convert trace.trc --to csv -o trace.csv",
		New: func(w io.Writer, o sink.Options) (sink.Writer, error) {
			return NewWriter(w), nil
		},
	}
}

// Writer writes CSV rows.
type Writer struct {
	bw     *bufio.Writer
	cw     *stdcsv.Writer
	header bool
	row    []string
	clock  sink.WindowClock
	err    error
}

// NewWriter returns a Writer on w; the header is written with the first
// interval (or at Close).
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	return &Writer{bw: bw, cw: stdcsv.NewWriter(bw), row: make([]string, len(Header))}
}

// Write writes the interval's rows.
func (w *Writer) Write(iv stream.Interval) error {
	if w.err != nil {
		return w.err
	}
	w.writeHeader()
	w.window(iv)
	if len(iv.Series) == 0 && len(iv.Means) == 0 {
		w.put()
	}
	for _, s := range iv.Series {
		w.series(s)
	}
	for _, m := range iv.Means {
		w.mean(m)
	}
	// Whole intervals at once: a live conversion piped on shows each
	// window as it ends.
	return w.flush()
}

// Close writes the header if nothing else was, and flushes; it does not
// close the io.Writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	w.writeHeader()
	return w.flush()
}

// flush writes the rows so far through to the io.Writer.
func (w *Writer) flush() error {
	w.cw.Flush()
	if err := w.check(); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("writing CSV: %w", err)
	}
	return w.err
}

func (w *Writer) writeHeader() {
	if !w.header {
		w.header = true
		w.err = w.cw.Write(Header)
	}
}

func (w *Writer) check() error {
	if w.err == nil {
		w.err = w.cw.Error()
	}
	if w.err != nil {
		w.err = fmt.Errorf("writing CSV: %w", w.err)
	}
	return w.err
}

// Column indexes.
const (
	colStart = iota
	colOffset
	colSeconds
	colGap
	colEvent
	colInstance
	colSource
	colInput
	colLower
	colUpper
	colCount
	colCapped
	colSeriesCount
	colSeriesSum
	colSumExact
	colMean
	colUnit
)

// window fills the columns every row of the interval shares and clears the
// others.
func (w *Writer) window(iv stream.Interval) {
	for i := range w.row {
		w.row[i] = ""
	}
	start, _, offset := w.clock.Times(iv)
	w.row[colStart], w.row[colOffset] = start, number(offset)
	w.row[colSeconds] = number(iv.Duration.Seconds())
	w.row[colGap] = strconv.FormatBool(iv.Gap)
	w.row[colInput] = iv.Source
	w.row[colCount] = "0"
}

// series writes a series' rows: one per non-empty bucket, or one without
// bucket edges when it has no events.
func (w *Writer) series(s stream.SeriesHist) {
	w.row[colEvent], w.row[colInstance], w.row[colSource] = s.Key.Event, s.Key.Instance, s.Key.Source
	h := s.Hist
	if h == nil {
		h = &hist.Histogram{Unit: hist.Microsecond}
	}
	toUs := float64(h.Unit) / float64(hist.Microsecond)
	w.row[colSeriesCount] = number(h.Count())
	w.row[colSeriesSum] = number(h.Sum * toUs)
	w.row[colSumExact] = strconv.FormatBool(h.SumExact)
	buckets := h.Buckets()
	if len(buckets) == 0 {
		w.row[colLower], w.row[colUpper], w.row[colCount], w.row[colCapped] = "", "", "0", ""
		w.put()
		return
	}
	for _, b := range buckets {
		w.row[colLower] = number(b.Lower * toUs)
		w.row[colUpper] = number(b.Upper * toUs)
		w.row[colCount] = number(b.Count)
		w.row[colCapped] = strconv.FormatBool(b.Capped)
		w.put()
	}
}

// mean writes a mean series' row: no bucket edges, count and series_count
// the events, series_sum_us their total (the source's measured total, hence
// exact), mean_us the mean (empty without events) and unit the source's
// unit.
//
// A series that is not a latency (a host figure, docs/host.md) has unit its
// quantity, series_sum_us its sum as reported (not µs) and mean_us empty:
// its value is series_sum_us / series_count in the quantity.
func (w *Writer) mean(m stream.SeriesMean) {
	w.row[colEvent], w.row[colInstance], w.row[colSource] = m.Key.Event, m.Key.Instance, m.Key.Source
	if !m.Quantity.IsLatency() {
		w.row[colLower], w.row[colUpper], w.row[colCapped] = "", "", ""
		w.row[colCount], w.row[colSeriesCount] = number(m.Count), number(m.Count)
		w.row[colSeriesSum], w.row[colSumExact], w.row[colMean] = number(m.Sum), "true", ""
		w.row[colUnit] = string(m.Quantity)
		w.put()
		return
	}
	toUs := float64(m.Unit) / float64(hist.Microsecond)
	w.row[colLower], w.row[colUpper], w.row[colCapped] = "", "", ""
	w.row[colCount] = number(m.Count)
	w.row[colSeriesCount] = number(m.Count)
	w.row[colSeriesSum] = number(m.Sum * toUs)
	w.row[colSumExact] = "true"
	w.row[colMean] = ""
	if m.Count > 0 {
		w.row[colMean] = number(m.Mean() / float64(hist.Microsecond))
	}
	w.row[colUnit] = m.Unit.String()
	w.put()
}

func (w *Writer) put() {
	if w.err == nil {
		w.err = w.cw.Write(w.row)
	}
}

// number prints v in plain decimal (no exponent, which some spreadsheets
// read as text), with as many digits as it takes to read back exactly.
func number(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}
