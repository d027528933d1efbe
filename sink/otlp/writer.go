// Package otlp sends latscope's stream as OpenTelemetry exponential
// histograms over OTLP/HTTP (protobuf), through the OpenTelemetry Go SDK's
// otlpmetrichttp exporter. Each interval's series becomes one delta data
// point of the metric latscope.latency (unit "s") covering exactly the
// interval, so nothing is carried from one interval to the next.
package otlp

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/stream"
)

// Name is the value of --to; MetricName the metric of the histograms,
// MeanSumName and MeanCountName those of the mean series.
const (
	Name          = "otlp"
	MetricName    = "latscope.latency"
	MeanSumName   = "latscope.mean.sum"
	MeanCountName = "latscope.mean.count"
	ScopeName     = "github.com/latscope/latscope/sink/otlp"
	DefaultPath   = "/v1/metrics"
	// batchPoints is how many data points one request carries at most.
	batchPoints = 1000
)

// Format returns the OTLP/HTTP output, which is sent to Options.Endpoint.
func Format() sink.Format {
	return sink.Format{
		Name: Name,
		Sent: true,
		Description: "OpenTelemetry exponential histograms over OTLP/HTTP (protobuf, gzip) to --otlp-endpoint: metric " + MetricName +
			` (unit s), one delta data point per interval and series, attributes event, instance, source, sum_exact; mean series (host figures, statement means) as the delta sums ` +
			MeanSumName + ` and ` + MeanCountName + ` with a quantity attribute; resource service.name=latscope, host.name`,
		Keeps: "counts and sums exactly, interval times to the ns; buckets rebinned into seconds at the source's scale (64 per octave for exact durations, " +
			"scale 0 for power-of-two and custom buckets): a count may move to a neighbouring bucket; " +
			"gaps are not sent; open top buckets are closed at twice their lower edge; no min/max",
		Example: "latscope convert trace.trc --to otlp --otlp-endpoint http://127.0.0.1:4318",
		New: func(_ io.Writer, o sink.Options) (sink.Writer, error) {
			return New(context.Background(), o)
		},
	}
}

// Writer batches data points and exports them. It is not safe for
// concurrent use.
type Writer struct {
	ctx      context.Context
	exp      *otlpmetrichttp.Exporter
	resource *resource.Resource
	opts     sink.Options
	points   []metricdata.ExponentialHistogramDataPoint[float64]
	// meanSums and meanCounts are the mean series' deltas: their ratio
	// over any window is the series' value (docs/fleet.md, mean series).
	meanSums, meanCounts []metricdata.DataPoint[float64]
	warn                 *sink.Warner // once per kind of loss
}

// New returns a Writer sending to o.Endpoint (a URL; without a path the
// OTLP default /v1/metrics is used), with o.Headers. More headers and
// TLS settings come from the SDK's usual OTEL_EXPORTER_OTLP_* variables.
func New(ctx context.Context, o sink.Options) (*Writer, error) {
	endpoint, err := EndpointURL(o.Endpoint)
	if err != nil {
		return nil, err
	}
	opts := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpointURL(endpoint), otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression)}
	if len(o.Headers) > 0 {
		opts = append(opts, otlpmetrichttp.WithHeaders(o.Headers))
	}
	exp, err := otlpmetrichttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp exporter for %s: %w", endpoint, err)
	}
	host := o.Host
	if host == "" {
		host, _ = os.Hostname() // an unknown host name leaves host.name empty
	}
	res := resource.NewSchemaless(attribute.String("service.name", "latscope"), attribute.String("host.name", host))
	return &Writer{ctx: ctx, exp: exp, resource: res, opts: o, warn: sink.NewWarner(o)}, nil
}

// EndpointURL checks an OTLP/HTTP endpoint and gives it the default
// metrics path when it has none. The SDK silently falls back to
// localhost:4318 on a URL it cannot parse, so latscope checks first.
func EndpointURL(raw string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("--to %s sends to an OTLP/HTTP receiver: give --otlp-endpoint URL (for example http://127.0.0.1:4318)", Name)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("otlp endpoint %q: want http://HOST:PORT or https://HOST:PORT[/PATH]", raw)
	}
	if strings.Trim(u.Path, "/") == "" {
		u.Path = DefaultPath
	}
	return u.String(), nil
}

// Write adds the interval's series as data points, exporting a batch when
// it is full.
func (w *Writer) Write(iv stream.Interval) error {
	if iv.Gap {
		w.warn.Once("gap", "gaps are not sent (a delta stream has no way to say that a window was not observed)")
		return nil
	}
	for _, m := range iv.Means {
		sum, count := w.meanPoints(iv, m)
		w.meanSums, w.meanCounts = append(w.meanSums, sum), append(w.meanCounts, count)
	}
	if iv.Relative {
		w.warn.Once("relative", "the source has no wall-clock time: its windows are sent as times since 1970")
	}
	for _, s := range iv.Series {
		w.points = append(w.points, w.dataPoint(iv, s))
		if w.pending() >= batchPoints {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	if w.pending() >= batchPoints {
		return w.Flush()
	}
	return nil
}

// pending is the number of data points buffered.
func (w *Writer) pending() int { return len(w.points) + 2*len(w.meanSums) }

// meanPoints maps one mean series of an interval to its two delta
// points: the total (in seconds for a latency) and the count, with the
// series' quantity ("seconds" for a latency) as an attribute.
func (w *Writer) meanPoints(iv stream.Interval, m stream.SeriesMean) (sum, count metricdata.DataPoint[float64]) {
	quantity, total := string(m.Quantity), m.Sum
	if m.Quantity.IsLatency() {
		quantity, total = "seconds", m.Unit.Nanos(m.Sum)/1e9
	}
	source := m.Key.Source
	if source == "" {
		source = iv.Source
	}
	attrs := []attribute.KeyValue{attribute.String("event", m.Key.Event), attribute.String("source", source), attribute.String("quantity", quantity)}
	if m.Key.Instance != "" {
		attrs = append(attrs, attribute.String("instance", m.Key.Instance))
	}
	set := attribute.NewSet(attrs...)
	sum = metricdata.DataPoint[float64]{Attributes: set, StartTime: iv.Start, Time: iv.End(), Value: total}
	count = metricdata.DataPoint[float64]{Attributes: set, StartTime: iv.Start, Time: iv.End(), Value: m.Count}
	return sum, count
}

// dataPoint maps one series of an interval to a delta data point.
func (w *Writer) dataPoint(iv stream.Interval, s stream.SeriesHist) metricdata.ExponentialHistogramDataPoint[float64] {
	h := InSeconds(s.Hist)
	if h.TopOpen {
		w.warn.Once("open", "open top buckets (e.g. Oracle's last bucket) are sent closed at twice their lower edge")
	}
	zero, counts := integerCounts(h)
	if n := s.Hist.Count(); n != math.Round(n) {
		w.warn.Once("fraction", "some counts are not whole numbers (series merged across units): they are rounded")
	}
	positive := metricdata.ExponentialBucket{}
	first, last := 0, len(counts)
	for first < last && counts[first] == 0 {
		first++
	}
	for last > first && counts[last-1] == 0 {
		last--
	}
	if first < last {
		positive = metricdata.ExponentialBucket{Offset: int32(h.Offset + first), Counts: counts[first:last]}
	}
	total := zero
	for _, c := range counts {
		total += c
	}
	source := s.Key.Source
	if source == "" {
		source = iv.Source
	}
	attrs := []attribute.KeyValue{attribute.String("event", s.Key.Event), attribute.String("source", source),
		attribute.Bool("sum_exact", h.SumExact)}
	if s.Key.Instance != "" {
		attrs = append(attrs, attribute.String("instance", s.Key.Instance))
	}
	return metricdata.ExponentialHistogramDataPoint[float64]{
		Attributes:     attribute.NewSet(attrs...),
		StartTime:      iv.Start,
		Time:           iv.End(),
		Count:          total,
		Sum:            h.Sum,
		Scale:          int32(h.Scale),
		ZeroCount:      zero,
		ZeroThreshold:  math.Ldexp(1, h.ZeroPow),
		PositiveBucket: positive,
	}
}

// InSeconds returns h on the OpenTelemetry grid: unit seconds, where
// bucket i is [2^(i·2^-scale), 2^((i+1)·2^-scale)). A grid histogram keeps
// its scale (64 buckets per octave for exact durations, 1 for power-of-two
// sources); custom edges go to scale 0. Only histograms already in seconds
// map without rebinning, since 1 ms or 1 µs is not a power of two seconds.
func InSeconds(h *hist.Histogram) *hist.Histogram {
	scale := h.Scale
	if h.IsCustom() {
		scale = 0
	}
	return hist.Rebin(h, hist.Second, scale)
}

// integerCounts returns h's zero and grid counts (bucket h.Offset+j) as
// whole numbers that add up to the rounded total: rebinning splits a
// bucket's events between two target buckets, and OTLP counts are
// integers, so the fractions go, largest first, to where they are largest.
func integerCounts(h *hist.Histogram) (zero uint64, counts []uint64) {
	all := append([]float64{h.ZeroCount}, h.Counts...)
	whole := make([]uint64, len(all))
	total, floors := 0.0, 0.0
	for i, c := range all {
		total += c
		whole[i] = uint64(math.Floor(c))
		floors += math.Floor(c)
	}
	left := int(math.Round(total) - floors)
	for ; left > 0; left-- {
		best, bestFrac := -1, 0.0
		for i, c := range all {
			if f := c - float64(whole[i]); f > bestFrac {
				best, bestFrac = i, f
			}
		}
		if best < 0 {
			break
		}
		whole[best]++
		all[best] = float64(whole[best]) // its fraction is used up
	}
	return whole[0], whole[1:]
}

// Flush exports the buffered data points. They are dropped when the
// export fails (after the SDK's retries), so that a later Flush sends
// only what came after.
func (w *Writer) Flush() error {
	n := w.pending()
	if n == 0 {
		return nil
	}
	var metrics []metricdata.Metrics
	if len(w.points) > 0 {
		metrics = append(metrics, metricdata.Metrics{
			Name:        MetricName,
			Description: "Latency histograms written by latscope.",
			Unit:        "s",
			Data: metricdata.ExponentialHistogram[float64]{
				DataPoints:  w.points,
				Temporality: metricdata.DeltaTemporality,
			},
		})
	}
	if len(w.meanSums) > 0 {
		for _, m := range []struct {
			name, what string
			points     []metricdata.DataPoint[float64]
		}{{MeanSumName, "total (seconds for a latency, else in the quantity attribute's terms)", w.meanSums},
			{MeanCountName, "count (events, seconds or milliseconds observed)", w.meanCounts}} {
			metrics = append(metrics, metricdata.Metrics{
				Name:        m.name,
				Description: "latscope's mean series (host figures, statement means), their " + m.what + ": the ratio of the two sums over any window is the value.",
				Data:        metricdata.Sum[float64]{DataPoints: m.points, Temporality: metricdata.DeltaTemporality, IsMonotonic: true},
			})
		}
	}
	rm := &metricdata.ResourceMetrics{
		Resource:     w.resource,
		ScopeMetrics: []metricdata.ScopeMetrics{{Scope: instrumentation.Scope{Name: ScopeName}, Metrics: metrics}},
	}
	w.points, w.meanSums, w.meanCounts = nil, nil, nil
	if err := w.exp.Export(w.ctx, rm); err != nil {
		return fmt.Errorf("otlp: sending %d data points: %w", n, err)
	}
	return nil
}

// Close exports what is buffered and shuts the exporter down.
func (w *Writer) Close() error {
	err := w.Flush()
	if serr := w.exp.Shutdown(w.ctx); err == nil && serr != nil {
		err = fmt.Errorf("otlp: %w", serr)
	}
	return err
}
