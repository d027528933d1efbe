// Package hdrlog writes latscope's stream as an HdrHistogram interval log
// (.hlog, format 1.3, V2 compressed histograms, one tagged line per series
// per interval, values in nanoseconds), the format HdrHistogram's tools
// (HistogramLogProcessor, jHiccup's plotter, hdrhistogram-go and -py) read.
// Lines are encoded and written with the Go HdrHistogram library.
//
// Every latscope bucket's count is recorded at one integer nanosecond value
// inside the bucket (its midpoint) in a 3-significant-digit HdrHistogram,
// whose own buckets are narrower than latscope's finest, so other tools see
// each count at the right latency. Comment lines (documented in
// source/hdrlog) carry what HdrHistogram cannot: series keys, bucket grids
// and edges, sums, exact windows, and corrections for any count the line
// cannot hold; latscope reads its own logs back with every count, sum and
// window unchanged.
package hdrlog

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/sink"
	reader "github.com/latscope/latscope/source/hdrlog"
	"github.com/latscope/latscope/stream"
)

// Format returns the hdrlog output format.
func Format() sink.Format {
	return sink.Format{
		Name:        reader.FormatName,
		Extension:   ".hlog",
		Description: "HdrHistogram interval log 1.3: one tagged line per series and interval, values in ns",
		Keeps: "every count exactly, for HdrHistogram tools at one value inside each latscope bucket; " +
			"latscope comments keep bucket edges, sums and windows so latscope reads it back unchanged " +
			"(other tools: sums are estimates, a bucket is one value, windows to the microsecond)",
		Example: "latscope convert trace.trc --to hdrlog -o trace.hlog",
		New:     New,
	}
}

// sigFigs is the precision of the written histograms: buckets at most
// 1/1024 of their value wide, four times finer than latscope's finest grid.
const sigFigs = 3

// maxValue bounds recorded values: HdrHistogram's int64 range with room for
// its bucket arithmetic.
const maxValue = int64(1) << 62

// New returns a writer; the log header is written with the first interval.
func New(w io.Writer, o sink.Options) (sink.Writer, error) {
	bw := bufio.NewWriter(w)
	return &writer{out: bw, log: hdr.NewHistogramLogWriter(bw), opts: o,
		tags: map[stream.Key]string{}, usedTags: map[string]bool{}, grids: map[string]string{}}, nil
}

type writer struct {
	out      *bufio.Writer
	log      *hdr.HistogramLogWriter
	opts     sink.Options
	started  bool
	baseMs   int64
	tags     map[stream.Key]string
	usedTags map[string]bool
	grids    map[string]string // grid spec → id
	err      error
	warned   bool
}

// Close flushes the log.
func (w *writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.out.Flush()
}

// Write writes one interval: its window comment, then per series its hist
// comment and data line.
func (w *writer) Write(iv stream.Interval) error {
	if w.err != nil {
		return w.err
	}
	if !w.started {
		w.header(iv)
	}
	w.comment(reader.KindInterval, intervalFields(iv)...)
	if !iv.Gap {
		for _, s := range iv.Series {
			w.series(iv, s)
		}
	}
	return w.err
}

// header writes the version, start time, the latscope marker and the
// legend. Times are relative to BaseTime, the first interval's whole second.
func (w *writer) header(iv stream.Interval) {
	w.started = true
	w.check(w.log.OutputLogFormatVersion())
	if !iv.Relative {
		ms := iv.Start.UnixMilli()
		w.baseMs = ms - ms%1000
		w.check(w.log.OutputStartTime(ms))
		w.check(w.log.OutputBaseTime(w.baseMs))
		w.log.SetBaseTime(w.baseMs)
	} else {
		w.baseMs = stream.RelativeStart.UnixMilli()
		w.log.SetBaseTime(w.baseMs)
	}
	w.comment(reader.KindMarker, reader.Field{Key: reader.MarkerVersion, Flag: true}, reader.Field{Key: "values", Value: "ns"})
	w.check(w.log.OutputLegend())
}

func (w *writer) check(err error) {
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("%s: %w", w.opts.Name, err)
	}
}

func (w *writer) comment(kind string, fields ...reader.Field) {
	if w.err == nil {
		_, err := fmt.Fprintln(w.out, reader.FormatComment(kind, fields...))
		w.check(err)
	}
}

// intervalFields describe a window exactly.
func intervalFields(iv stream.Interval) []reader.Field {
	f := []reader.Field{
		{Key: "start", Value: iv.Start.Format(time.RFC3339Nano)},
		{Key: "duration", Value: strconv.FormatInt(int64(iv.Duration), 10)},
	}
	if iv.Relative {
		f = append(f, reader.Field{Key: "relative", Flag: true})
	}
	if iv.Gap {
		f = append(f, reader.Field{Key: "gap", Flag: true})
	}
	return f
}

// series writes one series' histogram.
func (w *writer) series(iv stream.Interval, s stream.SeriesHist) {
	tag := w.tagFor(s.Key)
	g := reader.GridOf(s.Hist)
	hh, fix := encode(s.Hist, g)
	w.warnLoss()
	hf := []reader.Field{
		{Key: "tag", Value: tag},
		{Key: "grid", Value: w.gridFor(g)},
		{Key: "sum", Value: strconv.FormatFloat(s.Hist.Sum, 'g', -1, 64)},
		{Key: "exact", Value: flag(s.Hist.SumExact)},
		{Key: "open", Value: flag(s.Hist.TopOpen)},
	}
	if fix != "" {
		hf = append(hf, reader.Field{Key: "fix", Value: fix})
	}
	w.comment(reader.KindHist, hf...)
	hh.SetTag(tag)
	hh.SetStartTimeMs(max(iv.Start.UnixMilli(), w.baseMs))
	hh.SetEndTimeMs(max(iv.End().UnixMilli(), w.baseMs))
	if w.err == nil {
		w.check(w.log.OutputIntervalHistogram(hh))
	}
}

// warnLoss says once what HdrHistogram tools other than latscope lose.
func (w *writer) warnLoss() {
	if w.warned {
		return
	}
	w.warned = true
	w.opts.Diag.Warn(w.opts.Name, "HdrHistogram tools other than latscope see each bucket as one value and no sums "+
		"(latscope's own comments in the log keep them exactly)")
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// tagFor returns the series' tag, declaring it on first use; names that
// sanitise to the same tag get a numeric suffix.
func (w *writer) tagFor(k stream.Key) string {
	if t, ok := w.tags[k]; ok {
		return t
	}
	name := k.Event
	if k.Instance != "" {
		name += "@" + k.Instance
	}
	if k.Source != "" {
		name += "[" + k.Source + "]"
	}
	base := reader.SafeTag(name)
	t := base
	for n := 2; w.usedTags[t]; n++ {
		t = base + "~" + strconv.Itoa(n)
	}
	w.tags[k], w.usedTags[t] = t, true
	w.comment(reader.KindSeries, reader.Field{Key: "tag", Value: t}, reader.Field{Key: "event", Value: k.Event, Quoted: true},
		reader.Field{Key: "instance", Value: k.Instance, Quoted: true}, reader.Field{Key: "source", Value: k.Source, Quoted: true})
	return t
}

// gridFor returns the grid's id, declaring it on first use.
func (w *writer) gridFor(g reader.Grid) string {
	spec := g.Spec()
	if id, ok := w.grids[spec]; ok {
		return id
	}
	id := "g" + strconv.Itoa(len(w.grids)+1)
	w.grids[spec] = id
	w.comment(reader.KindGrid, append([]reader.Field{{Key: "id", Value: id}}, g.Fields()...)...)
	return id
}

// encode records every bucket's count at a value inside it, then reads the
// result back as latscope will and lists as fixes the buckets whose count
// differs (fractional counts, buckets without an integer nanosecond of
// their own, values beyond HdrHistogram's range).
func encode(h *hist.Histogram, g reader.Grid) (*hdr.Histogram, string) {
	want := reader.CountsOf(h)
	type rec struct{ v, n int64 }
	var recs []rec
	top := int64(2)
	add := func(i int, count float64) {
		lo, hi := g.Edges(i)
		v, ok := valueIn(lo*float64(g.Unit), hi*float64(g.Unit))
		n := int64(math.Round(count))
		if ok && n > 0 && count < 1<<62 {
			recs = append(recs, rec{v, n})
			top = max(top, v)
		}
	}
	if want.Zero > 0 {
		add(reader.ZeroBucket, want.Zero)
	}
	for i, c := range want.Buckets {
		add(i, c)
	}
	hh := hdr.New(1, top, sigFigs)
	for _, r := range recs {
		_ = hh.RecordValues(r.v, r.n) // v ≤ top: in range
	}
	got, _ := reader.FromHDR(g, hist.Nanosecond, hh)
	return hh, fixes(want, got)
}

// valueIn returns the integer nanosecond at the middle of [lo, hi), clamped
// into it; ok is false when the bucket holds no integer or is out of range.
func valueIn(lo, hi float64) (int64, bool) {
	if !(hi > lo) || hi > float64(maxValue) {
		return 0, false
	}
	first, last := math.Ceil(lo), math.Ceil(hi)-1
	if first > last {
		return int64(math.Round(lo)), true // fixed up by the fix list
	}
	v := math.Floor((lo + hi) / 2)
	return int64(min(max(v, first), last)), true
}

// fixes lists every bucket whose count the log does not reproduce.
func fixes(want, got reader.Counts) string {
	var zero *float64
	if want.Zero != got.Zero {
		zero = &want.Zero
	}
	diff := map[int]float64{}
	for i, c := range want.Buckets {
		if got.Buckets[i] != c {
			diff[i] = c
		}
	}
	for i := range got.Buckets {
		if _, ok := want.Buckets[i]; !ok {
			diff[i] = 0
		}
	}
	if zero == nil && len(diff) == 0 {
		return ""
	}
	return reader.FormatFixes(zero, diff)
}
