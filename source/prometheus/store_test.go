package prometheus

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// recordedStore answers query_range with answers recorded from a real
// Prometheus 2.42 (native histograms) or VictoriaMetrics 1.79 (classic
// buckets), testdata/promql/README.md: no store runs in this unit test
// (sink/remotewrite's tests read live ones), so the answers are replayed.
// It records the queries it was asked.
func recordedStore(t *testing.T, native bool) (*Client, *[]url.Values) {
	t.Helper()
	answer := func(name string) []byte {
		b, err := os.ReadFile(testenv.DataFile(t, "promql/"+name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var asked []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Query())
		q := r.URL.Query().Get("query")
		switch {
		case r.URL.Path != "/api/v1/query_range":
			http.NotFound(w, r)
		case strings.Contains(q, "_bucket") && !native:
			w.Write(answer("victoriametrics-1.79-bucket.json"))
		case strings.Contains(q, "_sum") && !native:
			w.Write(answer("victoriametrics-1.79-sum.json"))
		case native && !strings.Contains(q, "_"+"bucket") && !strings.Contains(q, "_sum"):
			w.Write(answer("prometheus-2.42-native.json"))
		default:
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
		}
	}))
	t.Cleanup(srv.Close)
	base, _ := url.Parse(srv.URL)
	return &Client{Base: base, HTTP: srv.Client()}, &asked
}

// readRecorded reads the recorded answers' 8 seconds step by step.
func readRecorded(t *testing.T, native bool) []stream.Interval {
	t.Helper()
	c, _ := recordedStore(t, native)
	end := time.Unix(1795668478, 0) // the Prometheus answer's last step
	if !native {
		end = time.Unix(1795668481, 0) // VictoriaMetrics' (recorded 3 s later)
	}
	diag := input.NewDiagnostics(io.Discard, 10)
	var out []stream.Interval
	err := c.Read(context.Background(), "store", Selection{From: end.Add(-8 * time.Second), To: end, Step: time.Second}, diag, func(iv stream.Interval) error {
		sourcetest.CheckInterval(t, iv)
		out = append(out, iv)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := diag.Count("store"); n != 0 {
		t.Fatalf("%d malformed: %v", n, diag.Problems())
	}
	return out
}

// countsByStep are each event's counts per step, from the last step back.
func countsByStep(ivs []stream.Interval) map[string][]float64 {
	out := map[string][]float64{}
	for i := len(ivs) - 1; i >= 0; i-- {
		back := len(ivs) - 1 - i
		for _, s := range ivs[i].Series {
			c := out[s.Key.Event]
			for len(c) <= back {
				c = append(c, 0)
			}
			c[back] += s.Hist.Count()
			out[s.Key.Event] = c
		}
	}
	return out
}

// The same recording, sent to Prometheus as native histograms and to
// VictoriaMetrics as classic buckets, reads back with the same counts in
// every step and the same sums.
func TestStoreReadsNativeAndClassicAlike(t *testing.T) {
	native, classic := readRecorded(t, true), readRecorded(t, false)
	n, c := countsByStep(native), countsByStep(classic)
	if len(n) < 5 {
		t.Fatalf("%d events read back, want the trace's many", len(n))
	}
	for ev, counts := range n {
		if !slices.Equal(counts, c[ev]) {
			t.Errorf("%s: native %v, classic %v per step (from the last back)", ev, counts, c[ev])
		}
	}
	var nSum, cSum float64
	for _, iv := range native {
		for _, s := range iv.Series {
			nSum += s.Hist.Sum * float64(s.Hist.Unit)
			if s.Hist.Unit != hist.Second || s.Hist.IsCustom() {
				t.Errorf("%s: native histogram read as %s custom=%v, want seconds on the grid", s.Key, s.Hist.Unit, s.Hist.IsCustom())
			}
		}
	}
	for _, iv := range classic {
		for _, s := range iv.Series {
			cSum += s.Hist.Sum * float64(s.Hist.Unit)
			if !s.Hist.IsCustom() {
				t.Errorf("%s: classic histogram not on its le edges", s.Key)
			}
		}
	}
	if math.Abs(nSum-cSum) > 1e-6*nSum || nSum == 0 {
		t.Errorf("time waited: native %v ns, classic %v ns", nSum, cSum)
	}
}

// A store SOURCE's URL: labels become matchers, metric, match and step
// are read, and mistakes are told before any request.
func TestParseTarget(t *testing.T) {
	opts := source.Options{Events: []string{"log file sync"}}
	got, err := ParseTarget("promql+https://prom.example:9090/prefix/?host=db01&job=waits&match=instance%3D~%22orcl.*%22&step=30s", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.Base.String() != "https://prom.example:9090/prefix" || got.Sel.Step != 30*time.Second ||
		strings.Join(got.Sel.Matchers, ",") != `host="db01",job="waits",instance=~"orcl.*"` || got.Sel.Events[0] != "log file sync" {
		t.Errorf("got %s %+v", got.Base, got.Sel)
	}
	if sel, _ := got.Sel.resolve(time.Unix(1e9, 0)); sel.Metric != DefaultMetric || sel.selector(sel.Metric) != `latscope_wait_seconds{host="db01",job="waits",instance=~"orcl.*"}` {
		t.Errorf("selector %s", sel.selector(sel.Metric))
	}
	for spec, want := range map[string]string{
		"promql+http://u:p@prom:9090":           "no user or password",
		"promql+http://prom:9090?step=1ms":      "at least 1s",
		"promql+http://prom:9090?__name__=x":    "neither a label name",
		"promql+http://prom:9090?metric=a-b":    "not a metric name",
		"promql+http://prom:9090?job=a&job=b":   "given 2 times",
		"promql+ftp://prom:9090":                "want promql+http://",
		"promql+http://prom:9090?step=15s&x=1y": "", // fine: x is a label
	} {
		_, err := ParseTarget(spec, source.Options{})
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	if _, err := ParseTarget("promql+http://prom:9090?step=15s", source.Options{Interval: time.Minute}); err == nil {
		t.Error("step both in the URL and by --interval: accepted")
	}
	if sel, err := (Selection{From: time.Unix(0, 0), To: time.Unix(86400*30, 0), Step: time.Second}).resolve(time.Now()); err == nil {
		t.Errorf("30 days of 1 s steps: %+v, want refused (11 000 points per series)", sel)
	}
	if sel, _ := (Selection{To: time.Unix(7200, 0)}).resolve(time.Now()); sel.Step != 15*time.Second || !sel.From.Equal(time.Unix(3600, 0)) {
		t.Errorf("defaults: step %s from %s, want 15s and an hour before to", sel.Step, sel.From)
	}
}

// A token goes over https or to loopback only.
func TestStoreTokenNeedsTLSOrLoopback(t *testing.T) {
	tok := t.TempDir() + "/token"
	os.WriteFile(tok, []byte("s3cret\n"), 0o600)
	for base, ok := range map[string]bool{"http://127.0.0.1:9090": true, "https://prom.example": true, "http://prom.example:9090": false} {
		u, _ := url.Parse(base)
		c, err := NewClient(u, source.ServerOptions{TokenFile: tok}, io.Discard)
		if ok != (err == nil) || ok && c.Token != "s3cret" {
			t.Errorf("%s: %v", base, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}

// Native buckets land on latscope's grid: the schema from a bucket's
// width, index i as hist's i−1; negative buckets and mixed schemas are
// refused.
func TestNativeHist(t *testing.T) {
	b := func(lo, hi, n string) bucketJSON { return bucketJSON{Lower: lo, Upper: hi, Count: n} }
	h, err := nativeHist(nativeJSON{Count: "6", Sum: "0.01", Buckets: []bucketJSON{
		b("-0.0001", "0.0001", "1"), b("0.001953125", "0.00390625", "2"), b("0.0078125", "0.015625", "3")}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Scale != 0 || h.ZeroCount != 1 || h.ZeroPow != -13 || h.Count() != 6 || h.Offset != -9 || h.Counts[0] != 2 || h.Counts[2] != 3 {
		t.Errorf("%+v", h)
	}
	if q := h.Quantile(0.99); q < 0.0078125 || q > 0.015625 {
		t.Errorf("p99 %v s, want in [2^-7, 2^-6)", q)
	}
	h6, err := nativeHist(nativeJSON{Count: "1", Sum: "1", Buckets: []bucketJSON{b("1", "1.0108892860517005", "1")}})
	if err != nil || h6.Scale != 6 || h6.Offset != 0 {
		t.Errorf("schema 6: %+v %v", h6, err)
	}
	for name, j := range map[string]nativeJSON{
		"negative":  {Sum: "0", Buckets: []bucketJSON{b("-2", "-1", "1")}},
		"mixed":     {Sum: "0", Buckets: []bucketJSON{b("1", "2", "1"), b("1", "1.0108892860517005", "1")}},
		"bad count": {Sum: "0", Buckets: []bucketJSON{b("1", "2", "NaN")}},
		"bad sum":   {Sum: "-1"},
	} {
		if _, err := nativeHist(j); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Step by step: a series that appears inside the read counts from zero,
// a reset counts from zero, a series back after a gap is not guessed, a
// step without any series is a gap.
func TestDifferences(t *testing.T) {
	at := func(n float64) *hist.Histogram {
		h := hist.NewExact(hist.Second, -20)
		h.RecordN(0.001, n)
		return h
	}
	a := &cumulative{key: stream.Key{Event: "a"}, points: map[int]*hist.Histogram{0: at(5), 1: at(7), 2: at(3), 4: at(9), 5: at(10)}}
	b := &cumulative{key: stream.Key{Event: "b"}, points: map[int]*hist.Histogram{2: at(4), 3: at(6)}}
	sel := Selection{From: time.Unix(1000, 0), To: time.Unix(1006, 0), Step: time.Second}
	var got []string
	err := differences(context.Background(), "s", sel, []*cumulative{a, b}, func(iv stream.Interval) error {
		line := iv.Start.Format("05")
		if iv.Gap {
			line += " gap"
		}
		for _, s := range iv.Series {
			line += " " + s.Key.Event + "=" + strconv.FormatFloat(s.Hist.Count(), 'g', -1, 64)
		}
		got = append(got, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"40 a=2", "41 a=3 b=4", "42 b=2", "43 gap", "44 a=1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// The store's errors name it and what it said; no series is an error
// that says what was asked.
func TestStoreErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("query") {
		case "refused{}":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
		case "locked{}":
			w.WriteHeader(http.StatusUnauthorized)
		default:
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
		}
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	c := &Client{Base: base, HTTP: srv.Client()}
	read := func(metric string) error {
		return c.Read(context.Background(), "s", Selection{Metric: metric, To: time.Unix(1e9, 0)}, input.NewDiagnostics(io.Discard, 1), func(stream.Interval) error { return nil })
	}
	if err := read("refused"); err == nil || !strings.Contains(err.Error(), "bad_data: parse error") {
		t.Errorf("refused: %v", err)
	}
	if err := read("locked"); err == nil || !strings.Contains(err.Error(), "refused the credentials") {
		t.Errorf("401: %v", err)
	}
	if err := read("empty"); !errors.Is(err, input.ErrNothingRead) || !strings.Contains(err.Error(), "empty_bucket") {
		t.Errorf("no series: %v", err)
	}
}

// FuzzStoreAnswer decodes any answer as a range query's and reads its
// series as the store source does: no panic, every interval valid.
func FuzzStoreAnswer(f *testing.F) {
	for _, name := range []string{"prometheus-2.42-native.json", "victoriametrics-1.79-bucket.json", "victoriametrics-1.79-sum.json"} {
		b, err := os.ReadFile(testenv.DataFile(f, "promql/"+name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"le":"x"},"values":[[1,"NaN"]],"histograms":[[2,{"sum":"1","buckets":[[0,"0","1e308","5"]]}]]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m struct {
			Result []rangeSeries `json:"result"`
		}
		if decodeAnswer("200 OK", data, &m) != nil {
			return
		}
		sel := Selection{Metric: "m", From: time.Unix(0, 0), To: time.Unix(100, 0), Step: time.Second}
		diag := input.NewDiagnostics(io.Discard, 1)
		var series []*cumulative
		for _, rs := range m.Result {
			cs := &cumulative{key: LabelsKey("m", rs.Metric), points: map[int]*hist.Histogram{}}
			for _, p := range rs.Histograms {
				if k := sel.stepIndex(p.At); k >= 0 {
					if h, err := nativeHist(p.Hist); err == nil {
						cs.points[k] = h
					}
				}
			}
			series = append(series, cs)
		}
		classic := map[int]*dto.Histogram{}
		for _, rs := range m.Result {
			le, err := strconv.ParseFloat(rs.Metric["le"], 64)
			for _, p := range rs.Values {
				if k := sel.stepIndex(p.At); k >= 0 && err == nil {
					if classic[k] == nil {
						classic[k] = &dto.Histogram{}
					}
					classic[k].Bucket = append(classic[k].Bucket, &dto.Bucket{UpperBound: &le, CumulativeCountFloat: &p.Value})
				}
			}
		}
		series = append(series, classicSeries("s", stream.Key{Event: "classic"}, classic, hist.Second, diag))
		_ = differences(context.Background(), "s", sel, series, func(iv stream.Interval) error {
			sourcetest.CheckInterval(t, iv)
			return nil
		})
	})
}

// --series is the glob of every other store (* spans /): the recorded
// series have no host label, so their source is the job, "trace".
func TestStoreSeriesGlob(t *testing.T) {
	c, _ := recordedStore(t, true)
	end := time.Unix(1795668478, 0)
	read := func(glob string) error {
		sel := Selection{From: end.Add(-8 * time.Second), To: end, Step: time.Second, Series: glob}
		return c.Read(context.Background(), "store", sel, input.NewDiagnostics(io.Discard, 1), func(stream.Interval) error { return nil })
	}
	if err := read("*ace"); err != nil {
		t.Errorf("*ace: %v", err)
	}
	if err := read("db*"); !errors.Is(err, input.ErrNothingRead) {
		t.Errorf("db*: %v, want nothing read", err)
	}
	if err := read("[x"); err == nil || !strings.Contains(err.Error(), "--series") {
		t.Errorf("[x: %v, want the pattern refused", err)
	}
}
