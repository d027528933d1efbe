package main

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/latscope/latscope/internal/testkit/otlptest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// otlpReceiver is an OTLP/HTTP metrics receiver on loopback that decodes
// every request with the official OpenTelemetry proto types. It stands in
// for an OpenTelemetry Collector, which no Debian or Go package here
// provides as a runnable server.
type otlpReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*colmetricspb.ExportMetricsServiceRequest
	tenants  []string // X-Scope-OrgID of each request
	problems []string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg, err := otlptest.Decode(req)
	if err != nil {
		r.problems = append(r.problems, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.requests = append(r.requests, msg)
	r.tenants = append(r.tenants, req.Header.Get("X-Scope-OrgID"))
	otlptest.Accept(w)
}

// otlpSeries is what the receiver got for one event.
type otlpSeries struct {
	count, sum, sumExact float64 // sumExact: points whose sum_exact is true
	points               int
	lowest, highest      float64 // outer edges of the non-zero buckets, seconds
	attrs                map[string]string
	scale                int32
	zero                 uint64
	buckets              map[int32]uint64 // all points' counts by bucket index
}

// quantileBucket returns the edges (seconds) of the bucket holding the
// q-quantile of all the series' points.
func (s *otlpSeries) quantileBucket(q float64) (lo, hi float64) {
	rank := uint64(math.Ceil(q * s.count))
	if rank <= s.zero {
		return 0, s.lowest
	}
	idx := make([]int32, 0, len(s.buckets))
	for i := range s.buckets {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	base, cum := math.Exp2(math.Exp2(-float64(s.scale))), s.zero
	for _, i := range idx {
		if cum += s.buckets[i]; cum >= rank {
			return math.Pow(base, float64(i)), math.Pow(base, float64(i+1))
		}
	}
	return s.highest, math.Inf(1)
}

// seriesByEvent totals the received data points per event, checking each
// point's own consistency on the way.
func (r *otlpReceiver) seriesByEvent(t *testing.T) map[string]*otlpSeries {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.problems {
		t.Error(p)
	}
	out := map[string]*otlpSeries{}
	for _, req := range r.requests {
		for _, rm := range req.ResourceMetrics {
			res := attrMap(rm.Resource.GetAttributes())
			if res["service.name"] != "latscope" || res["host.name"] == "" {
				t.Errorf("resource attributes %v, want service.name=latscope and a host.name", res)
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					r.addMetric(t, m, out)
				}
			}
		}
	}
	return out
}

func (r *otlpReceiver) addMetric(t *testing.T, m *metricspb.Metric, out map[string]*otlpSeries) {
	t.Helper()
	eh := m.GetExponentialHistogram()
	if m.Name != "latscope.latency" || m.Unit != "s" || eh == nil ||
		eh.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA {
		t.Fatalf("metric %s (unit %q): want latscope.latency, unit s, a delta exponential histogram", m.Name, m.Unit)
	}
	for _, dp := range eh.DataPoints {
		attrs := attrMap(dp.Attributes)
		s := out[attrs["event"]]
		if s == nil {
			s = &otlpSeries{attrs: attrs, lowest: math.Inf(1), scale: dp.Scale, buckets: map[int32]uint64{}}
			out[attrs["event"]] = s
		}
		if dp.Scale != s.scale {
			t.Errorf("%s: scale %d after %d", attrs["event"], dp.Scale, s.scale)
		}
		s.zero += dp.ZeroCount
		buckets := dp.ZeroCount
		base := math.Exp2(math.Exp2(-float64(dp.Scale)))
		pos := dp.GetPositive()
		for j, c := range pos.GetBucketCounts() {
			buckets += c
			s.buckets[pos.Offset+int32(j)] += c
			if c > 0 {
				i := float64(pos.Offset) + float64(j)
				s.lowest = math.Min(s.lowest, math.Pow(base, i))
				s.highest = math.Max(s.highest, math.Pow(base, i+1))
			}
		}
		if buckets != dp.Count {
			t.Errorf("%s at %d: buckets add up to %d, count is %d", attrs["event"], dp.TimeUnixNano, buckets, dp.Count)
		}
		if dp.StartTimeUnixNano >= dp.TimeUnixNano {
			t.Errorf("%s: data point starts at %d, not before its end %d", attrs["event"], dp.StartTimeUnixNano, dp.TimeUnixNano)
		}
		s.count += float64(dp.Count)
		s.sum += dp.GetSum()
		s.points++
		if attrs["sum_exact"] == "true" {
			s.sumExact++
		}
	}
}

// attrMap flattens attributes to strings (bool true → "true").
func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.Value.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = map[bool]string{true: "true", false: "false"}[v.BoolValue]
		}
	}
	return m
}

// TestConvertToOTLPCarriesTheReportsCountsAndSums sends real recordings
// to the receiver and compares, per series, with latscope report.
func TestConvertToOTLPCarriesTheReportsCountsAndSums(t *testing.T) {
	for _, rel := range []string{"pylatencymap/example_latency_data.txt", realTrace} {
		t.Run(rel, func(t *testing.T) {
			file := testenv.DataFile(t, rel)
			recv := newOTLPReceiver(t)
			r := run(t, "", "convert", file, "--to", "otlp", "--otlp-endpoint", recv.URL)
			if r.code != 0 || !strings.Contains(r.stderr, "sent ") {
				t.Fatalf("convert --to otlp: exit %d\n%s", r.code, r.stderr)
			}
			got := recv.seriesByEvent(t)
			rep := reportJSON(t, file)
			if len(got) != len(rep.Series) {
				t.Errorf("received %d series, report has %d", len(got), len(rep.Series))
			}
			for _, want := range rep.Series {
				s := got[want.Event]
				if s == nil {
					t.Errorf("series %q not received", want.Event)
					continue
				}
				if s.count != math.Round(want.Count) {
					t.Errorf("%s: count %v, report %v", want.Event, s.count, want.Count)
				}
				if d := math.Abs(s.sum*1e6 - want.SumUs); d > 1e-9*math.Max(1, want.SumUs) {
					t.Errorf("%s: sum %v µs, report %v µs", want.Event, s.sum*1e6, want.SumUs)
				}
				if exact := s.sumExact == float64(s.points); exact != want.SumExact {
					t.Errorf("%s: sum_exact on %v of %d points, report says exact=%v", want.Event, s.sumExact, s.points, want.SumExact)
				}
				checkOTLPCoversBuckets(t, want.Event, s, want.Buckets)
				if want.P99Us != nil {
					// latscope's p99 lies in the received p99's bucket or a
					// neighbour: the conversion error docs state.
					lo, hi := s.quantileBucket(0.99)
					base := math.Exp2(math.Exp2(-float64(s.scale)))
					if p99 := *want.P99Us / 1e6; p99 < lo/base*0.9999 || p99 > hi*base*1.0001 {
						t.Errorf("%s: report p99 %g s, received p99 bucket [%g, %g) s (scale %d)", want.Event, p99, lo, hi, s.scale)
					}
				}
			}
		})
	}
}

// checkOTLPCoversBuckets checks that the received buckets span the
// report's non-zero buckets, give or take the one target bucket that
// rebinning may move a count into.
func checkOTLPCoversBuckets(t *testing.T, event string, s *otlpSeries, buckets []struct {
	LowerUs float64 `json:"lower_us"`
	UpperUs float64 `json:"upper_us"`
	Count   float64 `json:"count"`
	SumUs   float64 `json:"sum_us"`
}) {
	t.Helper()
	lo, hi := math.Inf(1), 0.0
	for _, b := range buckets {
		if b.Count > 0 && b.LowerUs > 0 {
			lo, hi = math.Min(lo, b.LowerUs/1e6), math.Max(hi, b.UpperUs/1e6)
		}
	}
	if math.IsInf(lo, 1) {
		return // only the zero bucket
	}
	if s.lowest > lo*1.0001 && s.lowest >= hi || s.highest < hi/2.0001 {
		t.Errorf("%s: received buckets span [%g, %g) s, report's [%g, %g) s", event, s.lowest, s.highest, lo, hi)
	}
	if s.lowest < lo/2.0001 || s.highest > hi*2.0001 {
		t.Errorf("%s: received buckets [%g, %g) s reach beyond the report's [%g, %g) s by more than a bucket", event, s.lowest, s.highest, lo, hi)
	}
}

// TestConvertToOTLPReportsEndpointErrors: a receiver's refusal, a bad URL
// and a missing endpoint each fail with a message saying what and where.
func TestConvertToOTLPReportsEndpointErrors(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "tenant over quota", http.StatusBadRequest)
	}))
	defer refusing.Close()
	file := testenv.DataFile(t, "pylatencymap/example_latency_data.txt")
	closed := freePort(t)
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"refused", []string{"--otlp-endpoint", refusing.URL}, []string{"400", refusing.URL + "/v1/metrics", "tenant over quota"}},
		{"bad url", []string{"--otlp-endpoint", "127.0.0.1:4318"}, []string{"want http://HOST:PORT"}},
		{"closed port", []string{"--otlp-endpoint", "http://" + closed}, []string{"otlp: sending", closed, "connection refused"}},
		{"no endpoint", nil, []string{"give --otlp-endpoint URL"}},
		{"file", []string{"--otlp-endpoint", refusing.URL, "-o", "x.bin"}, []string{"not written to -o x.bin"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", append([]string{"convert", file, "--to", "otlp"}, c.args...)...)
			if r.code == 0 {
				t.Fatalf("exit 0, want an error\n%s", r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
	r := run(t, "", "convert", file, "--to", "jsonl", "--otlp-endpoint", refusing.URL)
	if r.code == 0 || !strings.Contains(r.stderr, "only a format that is sent") {
		t.Errorf("--to jsonl with --otlp-endpoint: exit %d\n%s", r.code, r.stderr)
	}
}

// pointCount is how many data points arrived so far.
func (r *otlpReceiver) pointCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, req := range r.requests {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					n += len(m.GetExponentialHistogram().GetDataPoints())
				}
			}
		}
	}
	return n
}

// TestServeSendsItsJobsToOTLP: with an otlp block, what a job writes to
// the archive reaches the receiver too, with the headers file's headers:
// per event, the received counts and sums equal latscope report of the
// data directory after a clean stop.
func TestServeSendsItsJobsToOTLP(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	waits := filepath.Join(dir, "waits.txt")
	if err := os.WriteFile(waits, []byte(strings.Join(restampedRecords(t), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	headers := filepath.Join(dir, "otlp.headers")
	if err := os.WriteFile(headers, []byte("X-Scope-OrgID: team-db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	recv := newOTLPReceiver(t)
	config := filepath.Join(dir, "latscope.yaml")
	yaml := "data: " + data + "\nlisten: " + freePort(t) + "\notlp:\n  endpoint: " + recv.URL +
		"\n  headers_file: " + headers + "\n  interval: 200ms\njobs:\n  - name: waits\n    source: " + waits + "\n"
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "--config", config)
	// The followed file is read at once; wait until sending settles.
	last, stable := -1, 0
	for deadline := time.Now().Add(20 * time.Second); stable < 5 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if n := recv.pointCount(); n > 0 && n == last {
			stable++
		} else {
			last, stable = n, 0
		}
	}
	srv.stop(t)
	got := recv.seriesByEvent(t)
	rep := reportJSON(t, data)
	if len(rep.Series) == 0 || len(got) != len(rep.Series) {
		t.Fatalf("received %d series, the archive has %d", len(got), len(rep.Series))
	}
	for _, want := range rep.Series {
		s := got[want.Event]
		if s == nil || s.count != want.Count || math.Abs(s.sum*1e6-want.SumUs) > 1e-9*want.SumUs || s.attrs["source"] != "waits" {
			t.Errorf("%s: received %+v, archive count %v sum %v µs", want.Event, s, want.Count, want.SumUs)
		}
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, tenant := range recv.tenants {
		if tenant != "team-db" {
			t.Errorf("X-Scope-OrgID %q, want team-db from headers_file", tenant)
		}
	}
}
