// Package report summarises a recording per series: events, total and mean
// latency, percentiles, power-of-two buckets and per-interval rows, as a
// human table, JSON or CSV.
package report

import (
	"math"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// Report is the whole report; its JSON form is latscope's machine-readable
// summary (see docs/report-format.md).
type Report struct {
	Series []Series `json:"series"`
	// Means are the series known only as a count and a total per
	// interval (absent when there are none).
	Means    []Mean          `json:"means,omitempty"`
	Sources  []SourceSummary `json:"sources"`
	Warnings []string        `json:"warnings"`
	// Source describes the sampling source when the report has one (a
	// live database): its technique, polling rate and capture ratio.
	// Samplers holds every sampler's by source name when there are more.
	Source   *stream.SamplerStats           `json:"source,omitempty"`
	Samplers map[string]stream.SamplerStats `json:"samplers,omitempty"`
}

// AddSampler records a sampling source's statistics.
func (r *Report) AddSampler(name string, st stream.SamplerStats) {
	if r.Samplers == nil {
		r.Samplers = map[string]stream.SamplerStats{}
	}
	r.Samplers[name] = st
	if len(r.Samplers) == 1 {
		r.Source = &st
	} else {
		r.Source = nil
	}
}

// SourceSummary says how much of a source was skipped.
type SourceSummary struct {
	Name      string `json:"name"`
	Malformed int    `json:"malformed_lines"`
}

// SeriesHeader heads every series' summary, of histograms or of means: the
// series' key, the sources that reported it and its units.
type SeriesHeader struct {
	Event    string   `json:"event"`
	Instance string   `json:"instance"`
	Source   string   `json:"source,omitempty"`
	Sources  []string `json:"sources"`
	// Unit is the report's, always "us"; SourceUnit the source's.
	Unit       string `json:"unit"`
	SourceUnit string `json:"source_unit"`
}

func newSeriesHeader(k stream.Key, sources []string, unit hist.Unit) SeriesHeader {
	if sources == nil {
		sources = []string{}
	}
	return SeriesHeader{Event: k.Event, Instance: k.Instance, Source: k.Source, Sources: sources, Unit: "us", SourceUnit: unit.String()}
}

// key returns the series' key.
func (h SeriesHeader) key() stream.Key {
	return stream.Key{Event: h.Event, Instance: h.Instance, Source: h.Source}
}

// Series is one series' summary. Latencies are in microseconds whatever the
// source's unit; nil percentiles mean no events.
type Series struct {
	SeriesHeader
	Idle      bool       `json:"idle"`
	Count     float64    `json:"count"`
	SumUs     float64    `json:"sum_us"`
	SumExact  bool       `json:"sum_exact"`
	TopCapped bool       `json:"top_capped"`
	MeanUs    *float64   `json:"mean_us"`
	P50Us     *float64   `json:"p50_us"`
	P90Us     *float64   `json:"p90_us"`
	P99Us     *float64   `json:"p99_us"`
	Buckets   []Bucket   `json:"buckets"`
	Intervals []Interval `json:"intervals"`
	// powerOfTwo folds custom edges into power-of-two rows for the table
	// when the source has too many buckets to read (fio's 1856 bins).
	powerOfTwo []Bucket
}

// Bucket is one power-of-two latency bucket [LowerUs, UpperUs).
type Bucket struct {
	LowerUs float64 `json:"lower_us"`
	UpperUs float64 `json:"upper_us"`
	Count   float64 `json:"count"`
	SumUs   float64 `json:"sum_us"`
	Capped  bool    `json:"capped,omitempty"`
}

// Interval is one observation window of the series. Start is RFC 3339 with
// the source's UTC offset, absent when the source had no wall clock;
// OffsetS counts seconds from the first interval of the series.
type Interval struct {
	Start   *string `json:"start"`
	OffsetS float64 `json:"offset_s"`
	Seconds float64 `json:"seconds"`
	Gap     bool    `json:"gap,omitempty"`
	Count   float64 `json:"count"`
	SumUs   float64 `json:"sum_us"`
	// Sum and Value are a quantity series' (not a latency's) numerator and
	// Sum/Count.
	Sum   *float64 `json:"sum,omitempty"`
	Value *float64 `json:"value,omitempty"`
}

// startOr returns the interval's start, or none without a wall clock.
func (iv Interval) startOr(none string) string {
	if iv.Start == nil {
		return none
	}
	return *iv.Start
}

// newInterval starts the row of one window: its start (none without a wall
// clock), its offset from the series' first window and its length.
func newInterval(start, origin time.Time, d time.Duration, relative, gap bool) Interval {
	iv := Interval{OffsetS: start.Sub(origin).Seconds(), Seconds: d.Seconds(), Gap: gap}
	if !relative {
		iv.Start = ptr(start.Format(time.RFC3339Nano))
	}
	return iv
}

// HistRow is the row of one window of a histogram series, its offset
// counted from origin.
func HistRow(p stream.Point, origin time.Time) Interval {
	iv := newInterval(p.Start, origin, p.Duration, p.Relative, p.Gap)
	if p.Hist != nil {
		iv.Count = p.Hist.Count()
		iv.SumUs = p.Hist.Unit.Nanos(p.Hist.Sum) / 1e3
	}
	return iv
}

// Build summarises the recording; diag (may be nil) adds skipped-input
// counts and warnings.
func Build(rec *stream.Recording, diag *input.Diagnostics) Report {
	r := Report{Series: []Series{}, Sources: []SourceSummary{}, Warnings: diag.Warnings()}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	for _, p := range diag.Problems() {
		r.Sources = append(r.Sources, SourceSummary{Name: p.Source, Malformed: p.Count})
	}
	for _, s := range rec.Series() {
		r.Series = append(r.Series, summarise(s))
	}
	for _, m := range rec.MeanSeries() {
		r.Means = append(r.Means, summariseMean(m))
	}
	return r
}

func summarise(s *stream.Series) Series {
	t := s.Total
	us := func(v float64) float64 { return t.Unit.Nanos(v) / 1e3 }
	out := Series{
		SeriesHeader: newSeriesHeader(s.Key, s.Sources, t.Unit), Idle: s.Idle,
		Count: t.Count(), SumUs: us(t.Sum), SumExact: t.SumExact, TopCapped: t.TopOpen,
	}
	if out.Count > 0 {
		out.MeanUs = ptr(us(t.Mean()))
		out.P50Us = ptr(us(t.Quantile(0.5)))
		out.P90Us = ptr(us(t.Quantile(0.9)))
		out.P99Us = ptr(us(t.Quantile(0.99)))
	}
	out.powerOfTwo = powerOfTwoBuckets(t)
	out.Buckets = out.powerOfTwo
	if t.IsCustom() {
		out.Buckets = nativeBuckets(t)
	}
	for _, p := range s.Points {
		out.Intervals = append(out.Intervals, HistRow(p, s.Points[0].Start))
	}
	if out.Intervals == nil {
		out.Intervals = []Interval{}
	}
	return out
}

// powerOfTwoBuckets folds a grid histogram into power-of-two rows: the buckets
// Oracle, DTrace and TVD$XTAT print, whatever the source's resolution.
func powerOfTwoBuckets(h *hist.Histogram) []Bucket {
	rows := h.Rows()
	toUs := func(v float64) float64 { return h.Unit.Nanos(v) / 1e3 }
	out := []Bucket{}
	if rows.ZeroCount > 0 {
		out = append(out, Bucket{LowerUs: 0, UpperUs: toUs(math.Ldexp(1, rows.ZeroPow)), Count: rows.ZeroCount, SumUs: toUs(rows.ZeroTime)})
	}
	for j, c := range rows.Counts {
		if c == 0 {
			continue
		}
		lo := math.Ldexp(1, rows.First+j)
		b := Bucket{LowerUs: toUs(lo), UpperUs: toUs(2 * lo), Count: c, SumUs: toUs(rows.Times[j])}
		if h.TopOpen && j == len(rows.Counts)-1 {
			b.Capped = true
		}
		out = append(out, b)
	}
	return out
}

// nativeBuckets lists a custom-edged histogram's own buckets (NetApp,
// Prometheus, linear DTrace rows): folding them into powers of two would
// blur edges the source had. Bucket times are midpoint estimates.
func nativeBuckets(h *hist.Histogram) []Bucket {
	toUs := func(v float64) float64 { return h.Unit.Nanos(v) / 1e3 }
	out := []Bucket{}
	for _, b := range h.Buckets() {
		out = append(out, Bucket{LowerUs: toUs(b.Lower), UpperUs: toUs(b.Upper), Count: b.Count, SumUs: toUs(b.Count * b.Mid()), Capped: b.Capped})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
