// Package pylatencymap writes PyLatencyMap records: the text format that
// LatencyMap.py (v1.3) and the OraLatencyMap-era connectors exchange, and
// that latscope's own pylatencymap reader reads back.
//
// PyLatencyMap draws one latency distribution from a stream of cumulative
// power-of-two histograms, so the writer makes one record stream:
//
//   - one event: the first event met; its instances and sources are summed,
//     as gv$ records sum RAC instances. Other events are dropped with a
//     warning (choose one with --event).
//   - Oracle semantics ("datasource, oracle"): value N counts [N/2, N), N = 1
//     counts [0, 1). PyLatencyMap weighs such buckets by 0.75·N and cannot
//     parse the 0 value that lower-bound sources need for [0, 1).
//   - one unit, the first histogram's (ns, µs or ms; seconds become ms).
//     Histograms in another unit, at a finer scale or with custom edges are
//     rebinned into power-of-two buckets, with one warning.
//   - cumulative counts that never go backwards: a record at the start of
//     the first window (the baseline), then one at the end of every window,
//     and one at the start of a window that does not follow the previous
//     one. Gaps are written as windows without events: a counter restart
//     is the only other way to say "no data", and PyLatencyMap turns it into
//     negative rates (v1.3 stops with a KeyError or a division by zero).
//
// Records are written when the next window begins (a source may report the
// same window twice) or at Close.
package pylatencymap

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/stream"
)

// FormatName is the value of --to.
const FormatName = "pylatencymap"

// Format returns the PyLatencyMap output format.
func Format() sink.Format {
	return sink.Format{
		Name:      FormatName,
		Extension: ".txt",
		Description: "PyLatencyMap records for LatencyMap.py v1.3 and OraLatencyMap-era tools: one event, " +
			"cumulative counts in power-of-two buckets, datasource oracle (value N counts [N/2, N))",
		Keeps: "one event's power-of-two bucket counts per window (instances and sources summed) and window times " +
			"to the µs; not exact sums (PyLatencyMap estimates them from the buckets), finer or custom buckets " +
			"(rebinned, with a warning), other events (dropped, with a warning), gaps (written as windows without events)",
		Example: "latscope convert trace.trc --event 'db file sequential read' --to pylatencymap -o feed.txt",
		New: func(w io.Writer, o sink.Options) (sink.Writer, error) {
			return NewWriter(w, o), nil
		},
	}
}

// maxExp is the largest bucket exponent written: N = 2^63 is the largest
// power of two a uint64 holds (latscope's reader) and within LatencyMap.py's
// 65 bucket slots.
const maxExp = 63

// maxCount caps cumulative counts so that they stay uint64 numbers
// (latscope's reader); real counters never get near it.
const maxCount = 1 << 63

// dateLayout is SQL*Plus' systimestamp with a four-digit year, which
// latscope's reader parses (two-digit years would stop at 2068).
const dateLayout = "02-Jan-2006 03.04.05.000000 PM -07:00"

// Writer writes one PyLatencyMap record stream.
type Writer struct {
	w    io.Writer
	opts sink.Options

	chosen   bool
	key      stream.Key // the first series written
	unit     hist.Unit
	clockSet bool
	relative bool
	base     int64 // µs subtracted from timestamps so that they are ≥ 0

	// cum[e] is the cumulative count of the bucket N = 2^e.
	cum     [maxExp + 1]float64
	pending *window
	// waiting holds the times of records written before the first event
	// fixed the label and unit (their counts are all zero).
	waiting []time.Time

	buf  []byte
	warn *sink.Warner // once per kind of loss
	err  error
}

// window is the interval whose record is written when the next one begins.
type window struct {
	start, end time.Time // rounded to the µs, end after start
	rows       [maxExp + 1]float64
	gap        bool // no report of the window had data
}

// NewWriter returns a Writer; nothing is written before the first record.
func NewWriter(w io.Writer, o sink.Options) *Writer {
	return &Writer{w: w, opts: o, warn: sink.NewWarner(o)}
}

// Write adds one interval.
func (w *Writer) Write(iv stream.Interval) error {
	if w.err != nil {
		return w.err
	}
	if !w.sameClock(iv) {
		return nil
	}
	rows, events := w.rows(iv)
	if w.err != nil { // writing the records that waited for the label
		return w.err
	}
	start := iv.Start.Round(time.Microsecond)
	end := iv.Start.Add(iv.Duration).Round(time.Microsecond)
	if !end.After(start) {
		end = start.Add(time.Microsecond) // a record per distinct µs
	}
	gap := iv.Gap && !events
	if p := w.pending; p != nil {
		if start.Before(p.end) {
			if !start.Equal(p.start) || !end.Equal(p.end) {
				w.warn.Once("overlap", "windows that overlap (several sources?) are written as one record stream: "+
					"the events of a window that starts before the previous one ended are counted in the previous one")
			}
			p.add(rows, gap)
			return nil
		}
		if err := w.flush(); err != nil {
			return err
		}
		if start.After(p.end) {
			// A window nobody reported: a record at its end keeps the
			// next window's start.
			if err := w.record(start); err != nil {
				return err
			}
		}
	} else if err := w.record(start); err != nil { // the baseline
		return err
	}
	w.pending = &window{start: start, end: end, rows: rows, gap: gap}
	return nil
}

// Close writes the last window's record (and, when no event ever came, the
// records of the empty windows). It does not close the io.Writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.pending != nil {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if len(w.waiting) > 0 {
		w.chosen, w.unit = true, hist.Millisecond
		return w.writeWaiting()
	}
	return nil
}

func (p *window) add(rows [maxExp + 1]float64, gap bool) {
	for e, c := range rows {
		p.rows[e] += c
	}
	p.gap = p.gap && gap
}

// sameClock keeps the stream on one kind of clock: relative times (counted
// from the source's start) cannot be placed among wall-clock times.
func (w *Writer) sameClock(iv stream.Interval) bool {
	if !w.clockSet {
		w.clockSet, w.relative = true, iv.Relative
		return true
	}
	if iv.Relative != w.relative {
		w.warn.Once("clock", "dropped the windows of %s: windows without wall-clock time cannot share a PyLatencyMap "+
			"record stream with dated ones", iv.Source)
		return false
	}
	return true
}

// flush writes the pending window's record at its end.
func (w *Writer) flush() error {
	p := w.pending
	w.pending = nil
	if p.gap {
		w.warn.Once("gap", "gaps (windows the source could not observe) are written as windows without events: "+
			"PyLatencyMap cannot say \"no data\", and a counter restart would make it draw negative rates")
	}
	for e, c := range p.rows {
		w.cum[e] += c
		if w.cum[e] > maxCount {
			w.cum[e] = maxCount
			w.warn.Once("huge", "bucket counts beyond 2^63 events are written as 2^63")
		}
	}
	return w.record(p.end)
}

// record writes a record at time t with the cumulative counts, or keeps its
// time until the first event sets the label and unit.
func (w *Writer) record(t time.Time) error {
	if !w.chosen {
		w.waiting = append(w.waiting, t)
		return nil
	}
	return w.writeRecord(t)
}

func (w *Writer) writeWaiting() error {
	waiting := w.waiting
	w.waiting = nil
	for _, t := range waiting {
		if err := w.writeRecord(t); err != nil {
			return err
		}
	}
	return nil
}

// writeRecord writes one record: header lines, then every bucket from the
// lowest to the highest that ever had an event (so a bucket never vanishes,
// which would read as a count going back to zero).
func (w *Writer) writeRecord(t time.Time) error {
	us := t.UnixMicro()
	if w.base == 0 && us < 0 {
		w.base = us // only for starts before 1970
	}
	b := append(w.buf[:0], "<begin record>\ntimestamp, microsec, "...)
	b = strconv.AppendInt(b, us-w.base, 10)
	b = append(b, ", "...)
	if !w.relative {
		b = append(b, strings.ToUpper(t.Format(dateLayout))...)
	}
	b = append(b, "\nlabel, "...)
	b = append(b, w.label()...)
	b = append(b, "\nlatencyunit, "...)
	b = append(b, unitName(w.unit)...)
	b = append(b, "\ndatasource, oracle\n"...)
	lo, hi := w.span()
	for e := lo; e <= hi; e++ {
		b = strconv.AppendUint(b, uint64(1)<<e, 10)
		b = append(b, ", "...)
		b = strconv.AppendFloat(b, math.Round(w.cum[e]), 'f', 0, 64)
		b = append(b, '\n')
	}
	b = append(b, "<end record>\n"...)
	w.buf = b
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("%s: %w", w.opts.Name, err)
	}
	return w.err
}

// span returns the exponents of the lowest and highest buckets with events
// so far (the [0, 1) bucket alone when there are none).
func (w *Writer) span() (lo, hi int) {
	lo, hi = -1, 0
	for e, c := range w.cum {
		if c > 0 {
			if lo < 0 {
				lo = e
			}
			hi = e
		}
	}
	if lo < 0 {
		return 0, 0
	}
	return lo, hi
}

// label is the event name with what PyLatencyMap cannot read replaced: it
// splits lines on commas (a comma in a label stops it) and reads lines.
func (w *Writer) label() string {
	l := strings.Map(func(r rune) rune {
		switch r {
		case ',':
			return ';'
		case '\n', '\r':
			return ' '
		}
		return r
	}, w.key.Event)
	if l != w.key.Event {
		w.warn.Once("label", "event %q written as label %q: PyLatencyMap cannot read commas or line breaks in a label", w.key.Event, l)
	}
	return l
}

func unitName(u hist.Unit) string {
	switch u {
	case hist.Nanosecond:
		return "nanosec"
	case hist.Microsecond:
		return "microsec"
	}
	return "millisec"
}
