// Package prometheus writes latscope's stream as Prometheus classic
// histograms in the text exposition format: one scrape per interval end,
// with sample timestamps, metric latscope_latency_seconds{event, instance,
// source}, counts cumulative over time and in le. Each scrape is a complete
// exposition (# HELP, # TYPE, then the samples), as a /metrics endpoint
// would have served it at that time; latscope reads the file back.
package prometheus

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/stream"
)

// Name is the value of --to; Extension selects the format from -o.
const (
	Name       = "prometheus"
	Extension  = ".prom"
	MetricName = "latscope_latency_seconds"
)

// Format returns the Prometheus text exposition output format.
func Format() sink.Format {
	return sink.Format{
		Name:      Name,
		Extension: Extension,
		Description: "Prometheus classic histogram text exposition: " + MetricName + "{event,instance,source} " +
			"_bucket/_sum/_count, one scrape per interval end with sample timestamps (ms), counts cumulative over time and le",
		Keeps: "every bucket count and edge exactly (le = the histograms' own bucket edges in seconds, power-of-two or custom); " +
			"a gap becomes a counter reset, read back as a gap (lost before anything was counted, as is quiet time before the first series); " +
			"times are rounded to the millisecond; relative times are written as ms since 1970; " +
			"_sum cannot say that a sum was estimated; buckets of different layouts in one series are counted at the coarser edge",
		Example: "latscope convert trace.trc --to prometheus -o trace.prom",
		New: func(w io.Writer, o sink.Options) (sink.Writer, error) {
			return NewWriter(w, o), nil
		},
	}
}

// Writer writes intervals as scrapes. It is not safe for concurrent use.
type Writer struct {
	bw     *bufio.Writer
	opts   sink.Options
	series map[stream.Key]*series
	order  []stream.Key
	last   time.Time // time of the last scrape written
	wrote  bool
	warn   *sink.Warner // once per kind of loss
	err    error
}

// series is one histogram's cumulative state.
type series struct {
	labels []*dto.LabelPair
	edges  []float64           // union of finite bucket edges > 0, seconds, ascending
	counts map[float64]float64 // events by bucket upper edge (+Inf for open tops)
	lowest map[float64]float64 // the lowest lower edge of a bucket with that upper edge
	count  float64
	sum    float64 // seconds
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer, o sink.Options) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10), opts: o, series: map[stream.Key]*series{}, warn: sink.NewWarner(o)}
}

// Write writes the interval as the scrape at its end (preceded, when the
// stream is new or not contiguous, by a scrape at its start, so that a
// reader's deltas cover exactly the interval).
func (w *Writer) Write(iv stream.Interval) error {
	if w.err != nil {
		return w.err
	}
	if iv.Start.Truncate(time.Millisecond) != iv.Start || iv.Duration%time.Millisecond != 0 {
		w.warn.Once("ms", "interval times are rounded to the millisecond (sample timestamps are in ms)")
	}
	if w.wrote && iv.Start.Before(w.last) {
		w.warn.Once("order", "intervals overlap (several sources?); a reader will restart its counters where time goes back")
	}
	if iv.Gap {
		return w.writeGap(iv)
	}
	for _, s := range iv.Series {
		w.prepare(s)
	}
	if !w.wrote || !iv.Start.Equal(w.last) {
		if err := w.scrape(iv.Start); err != nil {
			return err
		}
	}
	for _, s := range iv.Series {
		w.add(s)
	}
	return w.scrape(iv.End())
}

// writeGap writes a gap as a counter reset: every series back to zero at
// the gap's end. A reader sees counters going backwards, which is a gap.
func (w *Writer) writeGap(iv stream.Interval) error {
	counted := false
	for _, k := range w.order {
		counted = counted || w.series[k].count > 0
	}
	if !counted {
		w.warn.Once("gap", "a gap before anything was counted cannot be written (it reads back as quiet time)")
		return nil
	}
	if !iv.Start.Equal(w.last) {
		if err := w.scrape(iv.Start); err != nil {
			return err
		}
	}
	for _, k := range w.order {
		s := w.series[k]
		clear(s.counts)
		s.count, s.sum = 0, 0
	}
	return w.scrape(iv.End())
}

// prepare makes sure the series exists and holds the edges of every bucket
// of h, so that the scrape before the interval already has them.
func (w *Writer) prepare(sh stream.SeriesHist) {
	s := w.series[sh.Key]
	if s == nil {
		s = &series{labels: labelsOf(sh.Key), counts: map[float64]float64{}, lowest: map[float64]float64{}}
		w.series[sh.Key] = s
		w.order = append(w.order, sh.Key)
	}
	for _, b := range bucketsOf(sh.Hist) {
		if b.lower > 0 {
			w.addEdge(s, b.lower)
		}
		if !math.IsInf(b.upper, 1) {
			w.addEdge(s, b.upper)
		}
	}
}

// addEdge adds an edge, warning when it splits a bucket already counted.
func (w *Writer) addEdge(s *series, e float64) {
	i, found := slices.BinarySearch(s.edges, e)
	if found {
		return
	}
	if i < len(s.edges) {
		if lo, ok := s.lowest[s.edges[i]]; ok && lo < e {
			w.warnStraddle()
		}
	}
	s.edges = slices.Insert(s.edges, i, e)
}

func (w *Writer) warnStraddle() {
	w.warn.Once("straddle", "a series mixes bucket layouts; buckets that straddle another layout's edges are counted at their upper edge")
}

// add counts an interval's histogram into the series.
func (w *Writer) add(sh stream.SeriesHist) {
	s := w.series[sh.Key]
	h := sh.Hist
	for _, b := range bucketsOf(h) {
		if i, _ := slices.BinarySearch(s.edges, b.lower); i < len(s.edges) && s.edges[i] > b.lower && s.edges[i] < b.upper {
			w.warnStraddle()
		}
		s.counts[b.upper] += b.count
		if lo, ok := s.lowest[b.upper]; !ok || b.lower < lo {
			s.lowest[b.upper] = b.lower
		}
		s.count += b.count
	}
	s.sum += seconds(h.Sum, h.Unit)
	if !h.SumExact && h.Count() > 0 {
		w.warn.Once("sum", "some sums are estimates from bucket midpoints; _sum cannot say so")
	}
}

// bucket is a histogram bucket in seconds; an open top has upper +Inf.
type bucket struct{ lower, upper, count float64 }

func bucketsOf(h *hist.Histogram) []bucket {
	bs := h.Buckets()
	out := make([]bucket, 0, len(bs))
	for _, b := range bs {
		o := bucket{lower: seconds(b.Lower, h.Unit), upper: seconds(b.Upper, h.Unit), count: b.Count}
		switch {
		case h.IsCustom() && b.Lower == 0:
			// hist flags a custom histogram's zero bucket as capped when it
			// is the only one with counts; its edge is Bounds[0] all the same.
			o.upper = seconds(h.Bounds[0], h.Unit)
		case b.Capped:
			o.upper = math.Inf(1)
		}
		out = append(out, o)
	}
	return out
}

// seconds converts a value in unit to seconds.
func seconds(v float64, unit hist.Unit) float64 {
	return v * float64(unit) / float64(hist.Second)
}

// labelsOf returns the series' labels, empty ones left out (Prometheus
// treats an empty label as absent).
func labelsOf(k stream.Key) []*dto.LabelPair {
	var out []*dto.LabelPair
	for _, l := range [][2]string{{"event", k.Event}, {"instance", k.Instance}, {"source", k.Source}} {
		if l[1] != "" {
			out = append(out, &dto.LabelPair{Name: proto.String(l[0]), Value: proto.String(l[1])})
		}
	}
	return out
}

// scrape writes every series' cumulative counters at time t.
func (w *Writer) scrape(t time.Time) error {
	if len(w.order) == 0 {
		return nil // nothing to write: no scrape a reader could see
	}
	w.last, w.wrote = t, true
	ts := proto.Int64(t.UnixMilli())
	mf := &dto.MetricFamily{Name: proto.String(MetricName), Help: proto.String("Latency histograms written by latscope."),
		Type: dto.MetricType_HISTOGRAM.Enum()}
	for _, k := range w.order {
		mf.Metric = append(mf.Metric, &dto.Metric{Label: w.series[k].labels, Histogram: w.series[k].histogram(), TimestampMs: ts})
	}
	if _, err := expfmt.MetricFamilyToText(w.bw, mf); err != nil {
		w.err = fmt.Errorf("writing %s: %w", w.opts.Name, err)
		return w.err
	}
	return nil
}

// histogram returns the series' cumulative buckets: at each edge, the
// events of buckets whose upper edge is at most that edge.
func (s *series) histogram() *dto.Histogram {
	uppers := make([]float64, 0, len(s.counts))
	for u := range s.counts {
		uppers = append(uppers, u)
	}
	sort.Float64s(uppers)
	h := &dto.Histogram{SampleSum: proto.Float64(s.sum)}
	cum, j := 0.0, 0
	for _, e := range s.edges {
		for j < len(uppers) && uppers[j] <= e {
			cum += s.counts[uppers[j]]
			j++
		}
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(e), CumulativeCountFloat: proto.Float64(cum)})
	}
	// The count continues the same sum (the open tops last), so that
	// rounding never puts +Inf below a finite edge.
	for ; j < len(uppers); j++ {
		cum += s.counts[uppers[j]]
	}
	h.SampleCountFloat = proto.Float64(cum)
	return h
}

// Close flushes the output; it does not close the io.Writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", w.opts.Name, err)
	}
	return nil
}
