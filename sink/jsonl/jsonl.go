// Package jsonl writes latscope's stream as JSON Lines: one object per
// (interval, series) and per (interval, mean series), plus one object for an
// interval without either (a window with no events, or a gap), so that jq,
// pandas or a notebook can read every window. A mean series (a count and a
// total per window, no distribution) has a "mean" object and no buckets. Buckets are given twice: as [lower, upper) in µs for
// plotting, and in the histogram's native layout (grid or custom edges, in
// its unit) so that the file is lossless. docs/interchange.md documents
// every field.
package jsonl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/stream"
)

// FormatName is the value of --to.
const FormatName = "jsonl"

// Format returns the JSON Lines output format.
func Format() sink.Format {
	return sink.Format{
		Name:      FormatName,
		Extension: ".jsonl",
		Description: "JSON Lines: one object per interval and series, counts per interval, buckets in µs and in the native layout, " +
			"and one object per interval and mean series with its count, sum and mean (for jq, pandas)",
		Keeps: "everything: windows (start, offset, duration, gaps), series keys, counts, sums and their exactness, " +
			"every bucket edge and count in the histogram's own unit and layout, and mean series (count and total " +
			"per window: count, sum and mean in their unit); not time zone names (only offsets) " +
			"nor bytes that are not UTF-8 in names (each becomes U+FFFD)",
		Example: "latscope convert trace.trc --to jsonl -o trace.jsonl",
		New: func(w io.Writer, o sink.Options) (sink.Writer, error) {
			return NewWriter(w), nil
		},
	}
}

// Line is one JSON line. Pointer fields are null when they do not apply.
type Line struct {
	// Start is the window's start in RFC 3339 with its UTC offset; null for
	// windows without wall-clock time.
	Start *string `json:"start"`
	// OffsetS is, for dated windows, the seconds since the start of the
	// file's first dated window; for windows without wall-clock time, the
	// seconds since their source began.
	OffsetS float64 `json:"offset_s"`
	Seconds float64 `json:"seconds"`
	Gap     bool    `json:"gap"`
	// Input is the SOURCE the window came from (a file name or a probe).
	Input string `json:"input"`
	// Event, Instance and Source are the series key; Event is null on the
	// line of an interval without series, Source is set only when series
	// are kept apart per file (--by file).
	Event    *string  `json:"event"`
	Instance string   `json:"instance"`
	Source   string   `json:"source"`
	Unit     *string  `json:"unit"`
	Count    Num      `json:"count"`
	SumUs    Num      `json:"sum_us"`
	SumExact bool     `json:"sum_exact"`
	TopOpen  bool     `json:"top_open"`
	Buckets  []Bucket `json:"buckets"`
	Layout   *Layout  `json:"layout"`
	// Mean is set only on the line of a mean series (a count and a total
	// per window, no distribution: buckets is empty, layout null).
	Mean *Mean `json:"mean,omitempty"`
}

// Mean is a mean series over one window, exactly as the source reported
// it, in its unit.
type Mean struct {
	Unit  string `json:"unit"`
	Count Num    `json:"count"`
	Sum   Num    `json:"sum"`
	// MeanUs is sum/count in µs; null without events.
	MeanUs Num `json:"mean_us"`
	// Quantity is set when the series is not a latency (host figures: see
	// docs/host.md); then Unit is the quantity too, Value is sum/count in
	// it (null without a count), and mean_us and the line's sum_us are
	// null.
	Quantity string `json:"quantity,omitempty"`
	Value    *Num   `json:"value,omitempty"`
}

// Bucket is one non-empty bucket in µs.
type Bucket struct {
	LowerUs Num `json:"lower_us"`
	UpperUs Num `json:"upper_us"`
	Count   Num `json:"count"`
	// Capped says upper_us was set to 2·lower_us: the source's top bucket
	// had no upper bound.
	Capped bool `json:"capped,omitempty"`
}

// Layout is the histogram exactly as latscope holds it, in its unit.
type Layout struct {
	Kind string `json:"kind"` // "grid" or "custom"
	Unit string `json:"unit"`
	// Grid: bucket i covers [2^(i/2^scale), 2^((i+1)/2^scale)) units,
	// the zero bucket [0, 2^zero_pow); counts[j] is bucket offset+j.
	Scale   *int `json:"scale,omitempty"`
	ZeroPow *int `json:"zero_pow,omitempty"`
	Offset  *int `json:"offset,omitempty"`
	// Custom: bucket j covers [edges[j], edges[j+1]), the zero bucket
	// [0, edges[0]); a null last edge is +Inf (an open top).
	Edges     []Num `json:"edges,omitempty"`
	ZeroCount Num   `json:"zero_count"`
	Counts    []Num `json:"counts"`
	Sum       Num   `json:"sum"` // in unit
}

// Num is a number as encoding/json writes a float64, or null when it is
// not finite (JSON has no NaN or infinity): a custom top edge +Inf, or a
// broken value that must not stop the conversion.
type Num float64

// MarshalJSON writes the number, or null when it is not finite.
func (n Num) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(n), 0) || math.IsNaN(float64(n)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

func nums(v []float64) []Num {
	out := make([]Num, len(v))
	for i, x := range v {
		out[i] = Num(x)
	}
	return out
}

// Writer writes JSON lines.
type Writer struct {
	bw    *bufio.Writer
	enc   *json.Encoder
	clock sink.WindowClock
	err   error
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &Writer{bw: bw, enc: enc}
}

// Write writes the interval's lines.
func (w *Writer) Write(iv stream.Interval) error {
	if w.err != nil {
		return w.err
	}
	for _, l := range w.lines(iv) {
		if err := w.enc.Encode(l); err != nil {
			w.err = fmt.Errorf("writing JSON lines: %w", err)
			return w.err
		}
	}
	// Whole intervals at once: a live conversion piped into jq sees each
	// window as it ends.
	return w.flush()
}

// Close flushes; it does not close the io.Writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.flush()
}

// flush writes the lines so far through to the io.Writer.
func (w *Writer) flush() error {
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("writing JSON lines: %w", err)
	}
	return w.err
}

// lines returns the lines of one interval: one per series, or one without
// a series when it has none.
func (w *Writer) lines(iv stream.Interval) []Line {
	base := Line{Input: iv.Source, Seconds: iv.Duration.Seconds(), Gap: iv.Gap, Buckets: []Bucket{}}
	start, dated, offset := w.clock.Times(iv)
	if base.OffsetS = offset; dated {
		base.Start = &start
	}
	if len(iv.Series) == 0 && len(iv.Means) == 0 {
		return []Line{base}
	}
	out := make([]Line, 0, len(iv.Series)+len(iv.Means))
	for _, s := range iv.Series {
		l := base
		event := s.Key.Event
		l.Event, l.Instance, l.Source = &event, s.Key.Instance, s.Key.Source
		if s.Hist != nil {
			fill(&l, s.Hist)
		}
		out = append(out, l)
	}
	for _, m := range iv.Means {
		l := base
		event := m.Key.Event
		l.Event, l.Instance, l.Source = &event, m.Key.Instance, m.Key.Source
		fillMean(&l, m)
		out = append(out, l)
	}
	return out
}

// fillMean sets a mean series line's fields: count and sum_us as for a
// histogram (the sum is the source's measured total, hence exact), and the
// mean object in the series' own unit.
func fillMean(l *Line, m stream.SeriesMean) {
	if !m.Quantity.IsLatency() {
		fillQuantity(l, m)
		return
	}
	unit := m.Unit.String()
	toUs := float64(m.Unit) / float64(hist.Microsecond)
	l.Unit = &unit
	l.Count = Num(m.Count)
	l.SumUs = Num(m.Sum * toUs)
	l.SumExact = true
	l.Mean = &Mean{Unit: unit, Count: Num(m.Count), Sum: Num(m.Sum), MeanUs: Num(m.Mean() / float64(hist.Microsecond))}
}

// fillQuantity sets the line of a series that is not a latency: count and
// sum as reported, the value sum/count in its quantity.
func fillQuantity(l *Line, m stream.SeriesMean) {
	q := string(m.Quantity)
	value := Num(m.Mean())
	l.Unit = &q
	l.Count = Num(m.Count)
	l.SumUs = Num(math.NaN())
	l.SumExact = true
	l.Mean = &Mean{Unit: q, Count: Num(m.Count), Sum: Num(m.Sum), MeanUs: Num(math.NaN()), Quantity: q, Value: &value}
}

// fill sets a line's histogram fields.
func fill(l *Line, h *hist.Histogram) {
	unit := h.Unit.String()
	toUs := float64(h.Unit) / float64(hist.Microsecond)
	l.Unit = &unit
	l.Count = Num(h.Count())
	l.SumUs = Num(h.Sum * toUs)
	l.SumExact, l.TopOpen = h.SumExact, h.TopOpen
	for _, b := range h.Buckets() {
		l.Buckets = append(l.Buckets, Bucket{LowerUs: Num(b.Lower * toUs), UpperUs: Num(b.Upper * toUs), Count: Num(b.Count), Capped: b.Capped})
	}
	lay := &Layout{Kind: "grid", Unit: unit, ZeroCount: Num(h.ZeroCount), Counts: nums(h.Counts), Sum: Num(h.Sum)}
	if h.IsCustom() {
		lay.Kind, lay.Edges = "custom", nums(h.Bounds)
	} else {
		scale, zeroPow, offset := h.Scale, h.ZeroPow, h.Offset
		lay.Scale, lay.ZeroPow, lay.Offset = &scale, &zeroPow, &offset
	}
	l.Layout = lay
}
