package otlp

import (
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"

	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/otlptest"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/stream"
)

// exactMicros returns a scale-6 µs histogram of n durations spread
// log-uniformly over [10 µs, 100 ms), like a trace's waits.
func exactMicros(t *testing.T, n int) *hist.Histogram {
	t.Helper()
	h := hist.NewExact(hist.Microsecond, 0)
	for i := range n {
		if err := h.Record(10 * math.Pow(1e4, (float64(i)+0.5)/float64(n))); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// oracleMillis returns a scale-0 ms histogram with the bucket counts of
// PyLatencyMap's example record.
func oracleMillis(t *testing.T) *hist.Histogram {
	t.Helper()
	h := hist.NewBuckets(hist.Millisecond)
	for i, c := range []float64{1702, 2626, 781, 4591, 6345, 2005, 364, 18, 0, 0, 25} {
		if err := h.AddBound(hist.UpperBound, math.Ldexp(1, i), c); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestIntegerCountsKeepTheTotalAndEachBucketWithinOne(t *testing.T) {
	for name, h := range map[string]*hist.Histogram{"exact µs": exactMicros(t, 10007), "oracle ms": oracleMillis(t)} {
		s := InSeconds(h)
		zero, counts := integerCounts(s)
		total := zero
		for j, c := range counts {
			total += c
			if d := math.Abs(float64(c) - s.Counts[j]); d >= 1 {
				t.Errorf("%s: bucket %d is %d, rebinned %v", name, s.Offset+j, c, s.Counts[j])
			}
		}
		if float64(total) != h.Count() {
			t.Errorf("%s: %d events sent, histogram has %v", name, total, h.Count())
		}
		if s.Unit != hist.Second || s.Scale != h.Scale {
			t.Errorf("%s: rebinned to unit %v scale %d, want seconds at scale %d", name, s.Unit, s.Scale, h.Scale)
		}
	}
}

// TestConversionErrorIsWithinOneTargetBucket backs the error docs state:
// a quantile of the sent histogram is within one bucket width (2^(2^-scale))
// of latscope's own.
func TestConversionErrorIsWithinOneTargetBucket(t *testing.T) {
	for name, h := range map[string]*hist.Histogram{"exact µs": exactMicros(t, 10007), "oracle ms": oracleMillis(t)} {
		s := InSeconds(h)
		width := math.Exp2(math.Exp2(-float64(s.Scale)))
		for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
			want := h.Quantile(q) * float64(h.Unit) / float64(hist.Second)
			got := s.Quantile(q)
			if r := math.Max(got/want, want/got); r > width {
				t.Errorf("%s p%v: %g s sent, %g s in latscope: ratio %.5f beyond one bucket (%.5f)", name, q*100, got, want, r, width)
			}
		}
	}
}

func TestEndpointURL(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:4318":              "http://127.0.0.1:4318/v1/metrics",
		"http://127.0.0.1:4318/":             "http://127.0.0.1:4318/v1/metrics",
		"https://otel.example:443/otlp/v1/m": "https://otel.example:443/otlp/v1/m",
	} {
		if got, err := EndpointURL(raw); err != nil || got != want {
			t.Errorf("EndpointURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "127.0.0.1:4318", "ftp://h/", "http://", "http://%zz"} {
		if _, err := EndpointURL(raw); err == nil {
			t.Errorf("EndpointURL(%q): no error", raw)
		}
	}
}

// TestWriterBatchesAndWarns: many series go out in batches of at most
// batchPoints; what a delta stream cannot carry is warned once.
func TestWriterBatchesAndWarns(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	diag := input.NewDiagnostics(nil, 100)
	w, err := New(context.Background(), sink.Options{Name: srv.URL, Endpoint: srv.URL, Diag: diag, Host: "db1"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	iv := stream.Interval{Source: "t", Start: start, Duration: time.Second}
	for i := range batchPoints + 10 {
		iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: "e" + string(rune('a'+i%26)), Instance: string(rune('0' + i/26))}, Hist: oracleMillis(t)})
	}
	top := oracleMillis(t)
	if err := top.AddOpenTop(2048, 3); err != nil {
		t.Fatal(err)
	}
	iv.Series[0].Hist = top
	gap := stream.Interval{Source: "t", Start: start.Add(time.Second), Duration: time.Second, Gap: true}
	for _, v := range []stream.Interval{iv, gap, gap} {
		if err := w.Write(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("%d requests for %d points, want 2", n, batchPoints+10)
	}
	warnings := strings.Join(diag.Warnings(), "\n")
	if strings.Count(warnings, "gaps are not sent") != 1 || !strings.Contains(warnings, "open top buckets") {
		t.Errorf("warnings:\n%s", warnings)
	}
}

// Mean series go out as two delta sums with the quantity: their ratio is
// the figure. The receiver decodes the request with the official OTLP
// proto types (no collector can run here).
func TestWriterSendsMeanSeries(t *testing.T) {
	var mu sync.Mutex
	var got []*colmetricspb.ExportMetricsServiceRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := otlptest.Decode(r)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		otlptest.Accept(w)
	}))
	defer srv.Close()
	w, err := New(context.Background(), sink.Options{Name: srv.URL, Endpoint: srv.URL, Diag: input.NewDiagnostics(nil, 10), Host: "db1"})
	if err != nil {
		t.Fatal(err)
	}
	iv := stream.Interval{Source: "host:db1", Start: time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC), Duration: time.Second, Means: []stream.SeriesMean{
		{Key: stream.Key{Event: "disk.%util", Instance: "vda"}, Sum: 42 * 1000, Count: 1000, Unit: stream.QuantityUnit, Quantity: stream.Percent},
		{Key: stream.Key{Event: "disk.r_await", Instance: "vda"}, Sum: 30, Count: 12, Unit: hist.Millisecond},
	}}
	if err := w.Write(iv); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, req := range got {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					sum := m.GetSum()
					if sum == nil || !sum.IsMonotonic || sum.AggregationTemporality.String() != "AGGREGATION_TEMPORALITY_DELTA" {
						t.Errorf("%s: %v, want a monotonic delta sum", m.Name, m.Data)
						continue
					}
					for _, p := range sum.DataPoints {
						attrs := map[string]string{}
						for _, kv := range p.Attributes {
							attrs[kv.Key] = kv.Value.GetStringValue()
						}
						values[m.Name+" "+attrs["event"]+" "+attrs["quantity"]] = p.GetAsDouble()
					}
				}
			}
		}
	}
	want := map[string]float64{
		MeanSumName + " disk.%util percent": 42000, MeanCountName + " disk.%util percent": 1000,
		MeanSumName + " disk.r_await seconds": 0.03, MeanCountName + " disk.r_await seconds": 12,
	}
	for k, v := range want {
		if math.Abs(values[k]-v) > 1e-12 {
			t.Errorf("%s = %v, want %v (all: %v)", k, values[k], v, values)
		}
	}
}
