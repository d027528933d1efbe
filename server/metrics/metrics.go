// Package metrics is latscope serve's Prometheus exposition (GET
// /metrics): every archived interval is counted into a promnative.Mapper,
// and a scrape is answered with its cumulative series, as native
// histograms with their classic `le` buckets in the protobuf exposition
// when the scraper asks for it (Prometheus with native histograms
// enabled), as classic histograms in the text format 0.0.4 otherwise.
package metrics

import (
	"context"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/stream"
)

// Path is the exposition route.
const Path = "/metrics"

// help is the metric family's HELP text.
const help = "Latency of database waits, I/O and network round trips measured by latscope, per job, event and instance."

// Counting returns a writer that writes each interval to out (the archive)
// and then counts it into m, so that a scrape shows only what is archived.
// The job is the interval's source: the runner names it after the job.
func Counting(out jobs.Writer, m *promnative.Mapper) jobs.Writer {
	return jobs.Then(out, func(_ context.Context, iv stream.Interval) {
		m.Add(iv.Source, iv)
		m.AddMeans(iv.Source, iv)
	})
}

// Register adds GET /metrics for viewers; a nil mapper exposes nothing.
func Register(rt *httpsec.Router, m *promnative.Mapper) {
	rt.Handle("GET", Path, auth.Viewer, handler(m))
}

// acceptedFormats are the expositions offered, by preference: the
// protobuf one carries native histograms, the text one only classic
// buckets (and is the answer to any other Accept).
var acceptedFormats = []expfmt.Format{expfmt.NewFormat(expfmt.TypeProtoDelim), expfmt.NewFormat(expfmt.TypeTextPlain)}

func handler(m *promnative.Mapper) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		format := expfmt.NegotiateAccept(r.Header, acceptedFormats...)
		w.Header().Set("Content-Type", string(format))
		enc := expfmt.NewEncoder(w, format)
		var series []promnative.Series
		var means []promnative.MeanSeries
		if m != nil {
			series, means = m.Series(), m.MeanSeries()
		}
		for _, mf := range append(Families(series), MeanFamilies(means)...) {
			if err := enc.Encode(mf); err != nil {
				return // the client left: the status is already sent
			}
		}
		if c, ok := enc.(expfmt.Closer); ok {
			_ = c.Close()
		}
	}
}

// Families groups series by metric name into metric families, each
// series a histogram with both its native buckets and its classic ones
// (as client_golang exposes a native histogram). Series carry no
// timestamp: a scrape stamps the state it reads, as for any exporter.
func Families(series []promnative.Series) []*dto.MetricFamily {
	var out []*dto.MetricFamily
	byName := map[string]*dto.MetricFamily{}
	for _, s := range series {
		name, labels := splitName(s.Labels)
		mf := byName[name]
		if mf == nil {
			mf = &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: dto.MetricType_HISTOGRAM.Enum()}
			byName[name] = mf
			out = append(out, mf)
		}
		mf.Metric = append(mf.Metric, &dto.Metric{Label: labels, Histogram: Histogram(s)})
	}
	return out
}

// meanHelp are the HELP texts of the mean series' two counters.
var meanHelp = [2]string{
	"Total of latscope's mean series (host figures such as r/s, %util or r_await, statement times): rate(_sum) / rate(_count) is the value over any window, in the quantity label's unit.",
	"Denominator of latscope's mean series (events, seconds or milliseconds observed): rate(_sum) / rate(_count) is the value over any window.",
}

// MeanFamilies exposes mean series as the counters promnative.MeanMetric
// _sum and _count (none when there are none).
func MeanFamilies(means []promnative.MeanSeries) []*dto.MetricFamily {
	if len(means) == 0 {
		return nil
	}
	sum := &dto.MetricFamily{Name: proto.String(promnative.MeanMetric + "_sum"), Help: proto.String(meanHelp[0]), Type: dto.MetricType_COUNTER.Enum()}
	count := &dto.MetricFamily{Name: proto.String(promnative.MeanMetric + "_count"), Help: proto.String(meanHelp[1]), Type: dto.MetricType_COUNTER.Enum()}
	for _, ms := range means {
		_, labels := splitName(ms.Labels)
		sum.Metric = append(sum.Metric, &dto.Metric{Label: labels, Counter: &dto.Counter{Value: proto.Float64(ms.Sum)}})
		count.Metric = append(count.Metric, &dto.Metric{Label: labels, Counter: &dto.Counter{Value: proto.Float64(ms.Count)}})
	}
	return []*dto.MetricFamily{sum, count}
}

// splitName returns the __name__ label's value and the other labels.
func splitName(ls []promnative.Label) (string, []*dto.LabelPair) {
	name := ""
	var out []*dto.LabelPair
	for _, l := range ls {
		if l.Name == "__name__" {
			name = l.Value
			continue
		}
		out = append(out, &dto.LabelPair{Name: proto.String(l.Name), Value: proto.String(l.Value)})
	}
	return name, out
}

// Histogram is a series as a dto histogram: classic buckets (the +Inf one
// implied by the count, as the exposition formats want) and native ones.
func Histogram(s promnative.Series) *dto.Histogram {
	n, c := s.Native, s.Classic
	h := &dto.Histogram{
		SampleCount:   proto.Uint64(c.Count),
		SampleSum:     proto.Float64(c.Sum),
		Schema:        proto.Int32(n.Schema),
		ZeroThreshold: proto.Float64(n.ZeroThreshold),
		ZeroCount:     proto.Uint64(n.ZeroCount),
		PositiveDelta: n.Deltas,
	}
	for i, le := range c.Bounds {
		if i == len(c.Bounds)-1 {
			break // +Inf
		}
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(le), CumulativeCount: proto.Uint64(c.Cumulative[i])})
	}
	for _, sp := range n.Spans {
		h.PositiveSpan = append(h.PositiveSpan, &dto.BucketSpan{Offset: proto.Int32(sp.Offset), Length: proto.Uint32(sp.Length)})
	}
	if len(h.PositiveSpan) == 0 && n.ZeroCount == 0 {
		// client_golang's marker of a native histogram with no buckets yet:
		// without it a scraper would read a classic histogram.
		h.PositiveSpan = []*dto.BucketSpan{{Offset: proto.Int32(0), Length: proto.Uint32(0)}}
	}
	return h
}
