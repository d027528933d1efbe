package metrics_test

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protodelim"

	"github.com/latscope/latscope/hist"

	"github.com/latscope/latscope/internal/testkit/authtest"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/metrics"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/stream"
)

// startServer serves /metrics of m on loopback behind the router's
// authentication and returns its URL and a viewer's token.
func startServer(t *testing.T, m *promnative.Mapper) (url, token string) {
	t.Helper()
	store := authtest.Store(t, nil)
	if _, err := store.AddUser(t.Context(), auth.LocalActor(), "grafana", auth.Viewer, "viewer-Pa55word-XYZ"); err != nil {
		t.Fatal(err)
	}
	tok, err := store.CreateToken(t.Context(), auth.LocalActor(), "grafana", "prometheus", auth.Viewer, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rt := httpsec.NewRouter(store, httpsec.Config{})
	metrics.Register(rt, m)
	h, err := rt.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, tok.Secret
}

// get fetches /metrics with an Accept header and the token ("" for none).
func get(t *testing.T, url, accept, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", url+metrics.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// oneSeries is a mapper holding one exact series of known durations.
func oneSeries(t *testing.T) *promnative.Mapper {
	t.Helper()
	m := promnative.NewMapper(promnative.Options{Host: "db01"})
	h := hist.NewExact(hist.Microsecond, 0)
	for _, v := range []float64{180, 250, 900, 4000, 4100} {
		_ = h.Record(v)
	}
	m.Add("db01", stream.Interval{Source: "db01", Start: time.Unix(1e9, 0), Duration: time.Second,
		Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync", Instance: "orcl1"}, Hist: h}}})
	return m
}

const protoAccept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3"

func TestNeedsACredential(t *testing.T) {
	url, _ := startServer(t, oneSeries(t))
	if resp := get(t, url, "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", resp.StatusCode)
	}
	if resp := get(t, url, "", "lsat_nope"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d, want 401", resp.StatusCode)
	}
}

func TestProtobufCarriesNativeAndClassic(t *testing.T) {
	m := oneSeries(t)
	url, token := startServer(t, m)
	resp := get(t, url, protoAccept, token)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.google.protobuf") || !strings.Contains(ct, "encoding=delimited") {
		t.Fatalf("Content-Type %q", ct)
	}
	var mf dto.MetricFamily
	if err := protodelim.UnmarshalFrom(bufio.NewReader(resp.Body), &mf); err != nil {
		t.Fatal(err)
	}
	if mf.GetName() != promnative.DefaultMetric || mf.GetType() != dto.MetricType_HISTOGRAM || len(mf.Metric) != 1 {
		t.Fatalf("family %v", &mf)
	}
	want := m.Series()[0]
	h := mf.Metric[0].GetHistogram()
	if h.GetSampleCount() != 5 || h.GetSchema() != want.Native.Schema || h.GetZeroThreshold() != want.Native.ZeroThreshold {
		t.Errorf("histogram %v", h)
	}
	if fmt.Sprint(h.GetPositiveDelta()) != fmt.Sprint(want.Native.Deltas) || len(h.GetPositiveSpan()) != len(want.Native.Spans) {
		t.Errorf("native buckets %v %v, want %v %v", h.GetPositiveSpan(), h.GetPositiveDelta(), want.Native.Spans, want.Native.Deltas)
	}
	if len(h.GetBucket()) != len(want.Classic.Bounds)-1 { // +Inf is the count
		t.Errorf("%d classic buckets, want %d", len(h.GetBucket()), len(want.Classic.Bounds)-1)
	}
	labels := map[string]string{}
	for _, l := range mf.Metric[0].Label {
		labels[l.GetName()] = l.GetValue()
	}
	if fmt.Sprint(labels) != "map[event:log file sync host:db01 instance:orcl1 job:db01 source_kind:file]" {
		t.Errorf("labels %v", labels)
	}
}

func TestTextHasClassicBuckets(t *testing.T) {
	url, token := startServer(t, oneSeries(t))
	for _, accept := range []string{"", "text/plain;version=0.0.4", "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"} {
		resp := get(t, url, accept, token)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
			t.Errorf("Accept %q: Content-Type %q", accept, ct)
			continue
		}
		p := expfmt.NewTextParser(model.LegacyValidation)
		fams, err := p.TextToMetricFamilies(resp.Body)
		if err != nil {
			t.Fatalf("Accept %q: %v", accept, err)
		}
		h := fams[promnative.DefaultMetric].GetMetric()[0].GetHistogram()
		// 180 and 250 µs in [128, 256) µs, 900 in [512, 1024), 4000 and 4100 in [2048, 4096) and [4096, 8192).
		got := map[float64]uint64{}
		for _, b := range h.GetBucket() {
			got[b.GetUpperBound()] = b.GetCumulativeCount()
		}
		want := map[float64]uint64{256e-6: 2, 1024e-6: 3, 4096e-6: 4, 8192e-6: 5}
		for le, n := range want {
			if got[le] != n {
				t.Errorf("Accept %q: le %g: %d, want %d (buckets %v)", accept, le, got[le], n, got)
			}
		}
		if h.GetSampleCount() != 5 || math.Abs(h.GetSampleSum()-9430e-6) > 1e-12 {
			t.Errorf("Accept %q: count %d sum %g", accept, h.GetSampleCount(), h.GetSampleSum())
		}
	}
}
