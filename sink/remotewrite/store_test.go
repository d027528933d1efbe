package remotewrite

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/promtest"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/prometheus"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// knownRecording is real data restamped to end now: PyLatencyMap's
// example (Oracle's power-of-two millisecond buckets) and a 10046 trace
// (exact microseconds, several events), each interval moved onto
// consecutive seconds so that the whole is within a store's accepted
// window (Prometheus refuses samples an hour older than its newest).
func knownRecording(t *testing.T, end time.Time) []stream.Interval {
	t.Helper()
	var out []stream.Interval
	for _, src := range []struct {
		job string
		ivs []stream.Interval
	}{
		{"pylatencymap", sourcetest.ReadShared(t, pylatencymap.Format(), "pylatencymap/example_latency_data.txt", source.Options{})},
		{"trace", sourcetest.ReadShared(t, oracle10046.Format(), "trc10046/jkstill-trace-combine_12.2.0.1/main_trcsess_output.trc",
			source.Options{Interval: 10 * time.Second})},
	} {
		var kept []stream.Interval
		for _, iv := range src.ivs {
			if !iv.Gap && len(iv.Series) > 0 {
				kept = append(kept, iv)
			}
		}
		for i, iv := range kept {
			iv.Source, iv.Relative, iv.Duration = src.job, false, time.Second
			iv.Start = end.Add(time.Duration(i-len(kept)) * time.Second)
			out = append(out, iv)
		}
	}
	return out
}

// expected is one series' whole recording as latscope sees it.
type expected struct {
	job, event, instance string
	merged               *hist.Histogram
	last                 time.Time
}

func expectations(ivs []stream.Interval) map[string]*expected {
	out := map[string]*expected{}
	for _, iv := range ivs {
		for _, s := range iv.Series {
			k := iv.Source + "\x00" + s.Key.Event + "\x00" + s.Key.Instance
			e := out[k]
			if e == nil {
				e = &expected{job: iv.Source, event: s.Key.Event, instance: s.Key.Instance, merged: s.Hist.Clone()}
				out[k] = e
			} else {
				e.merged.Merge(s.Hist)
			}
			e.last = iv.End()
		}
	}
	return out
}

func (e *expected) selector(metric string) string {
	return fmt.Sprintf("%s{job=%s,event=%s,instance=%s}", metric, strconv.Quote(e.job), strconv.Quote(e.event), strconv.Quote(e.instance))
}

// sendAll writes the intervals through a sender and waits until the
// store acknowledged every batch.
func sendAll(t *testing.T, opts Options, ivs []stream.Interval) *Sender {
	t.Helper()
	s, _ := startSender(t, opts)
	for _, iv := range ivs {
		if err := s.Write(context.Background(), iv); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the spool sent", func() bool { st := s.Stats(); return st.PendingBatches == 0 })
	if st := s.Stats(); st.Dropped.Batches > 0 {
		t.Fatalf("dropped %+v", st.Dropped)
	}
	return s
}

// checkSeries compares each series' count and p99 in the store with
// latscope's own: counts exact, p99 within one bucket (the width factor
// of the native schema, or 2 for classic power-of-two rows).
func checkSeries(t *testing.T, store *promtest.Server, ivs []stream.Interval, native bool) {
	t.Helper()
	mapper := promnative.NewMapper(promnative.Options{})
	schema := map[string]int32{}
	for _, iv := range ivs {
		for _, sr := range mapper.Add(iv.Source, iv) {
			schema[labelOf(sr.Labels, "job")+"\x00"+labelOf(sr.Labels, "event")+"\x00"+labelOf(sr.Labels, "instance")] = sr.Native.Schema
		}
	}
	exp := expectations(ivs)
	if len(exp) < 3 {
		t.Fatalf("%d series in the recording, want several", len(exp))
	}
	checked := 0
	for k, e := range exp {
		count, p99 := "histogram_count("+e.selector("latscope_wait_seconds")+")",
			"histogram_quantile(0.99, "+e.selector("latscope_wait_seconds")+")"
		width := math.Exp2(math.Exp2(-float64(schema[k])))
		if !native {
			count = e.selector("latscope_wait_seconds_count")
			p99 = "histogram_quantile(0.99, " + e.selector("latscope_wait_seconds_bucket") + ")"
			width = 2
		}
		got := store.QueryAt(t, count, e.last)
		if len(got) != 1 || got[0].Value != math.Round(e.merged.Count()) {
			t.Errorf("%s: %v, want one series of %v", count, got, e.merged.Count())
			continue
		}
		want := e.merged.Quantile(0.99) * float64(e.merged.Unit) / float64(hist.Second)
		got = store.QueryAt(t, p99, e.last)
		if len(got) != 1 || got[0].Value < want/width || got[0].Value > want*width {
			t.Errorf("%s = %v; latscope's p99 %.6g s, want it within a bucket (×%.4g)", p99, got, want, width)
			continue
		}
		t.Logf("%s %q: count %v, p99 %.6g s in the store, %.6g s by latscope (%+.2f%%)", e.job, e.event, e.merged.Count(), got[0].Value, want, 100*(got[0].Value/want-1))
		checked++
	}
	if checked < 3 {
		t.Errorf("%d series checked, want several", checked)
	}
}

func labelOf(ls []promnative.Label, name string) string {
	for _, l := range ls {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

func TestRemoteWriteNativeToPrometheus(t *testing.T) {
	store := promtest.Start(t, promtest.Options{NativeHistograms: true, RemoteWriteReceiver: true})
	ivs := knownRecording(t, time.Now().Add(-2*time.Second).Truncate(time.Second))
	sendAll(t, Options{URL: store.WriteURL(), Native: true, Shards: 2, BatchSamples: 50}, ivs)
	checkSeries(t, store, ivs, true)
	checkReadBack(t, store, ivs, true)
}

func TestRemoteWriteClassicToVictoriaMetrics(t *testing.T) {
	store := promtest.StartVictoriaMetrics(t)
	ivs := knownRecording(t, time.Now().Add(-2*time.Second).Truncate(time.Second))
	sendAll(t, Options{URL: store.WriteURL(), Native: false, Shards: 2, BatchSamples: 500}, ivs)
	time.Sleep(2 * time.Second) // -search.latencyOffset
	checkSeries(t, store, ivs, false)
	checkReadBack(t, store, ivs, false)
}

// outageInterval is one interval per second of three events, 100+k
// events each at second k.
func outageInterval(t *testing.T, start time.Time, k int) stream.Interval {
	t.Helper()
	iv := stream.Interval{Source: "outage", Start: start, Duration: time.Second}
	for _, e := range []string{"log file sync", "db file sequential read", "direct path read"} {
		h := hist.NewExact(hist.Microsecond, 0)
		if err := h.RecordN(float64(500+k), float64(100+k)); err != nil {
			t.Fatal(err)
		}
		iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: e, Instance: "orcl1"}, Hist: h})
	}
	return iv
}

// The store stopped for 60 s while an interval a second is written, then
// restarted on the same port: every interval arrives, exactly once (one
// raw sample per timestamp per series, with the cumulative count it had).
func testOutage(t *testing.T, store *promtest.Server, native bool) {
	if testing.Short() {
		t.Skip("an outage of 60 s")
	}
	const before, outage, after = 10, 60, 10
	s, _ := startSender(t, Options{URL: store.WriteURL(), Native: native, Shards: 2, BatchSamples: 100,
		Retry: Retry{Min: 100 * time.Millisecond, Max: 2 * time.Second}})
	start := time.Now().Truncate(time.Second).Add(-time.Second)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	want := map[int64]float64{}
	var cum float64
	for k := range before + outage + after {
		switch k {
		case before:
			store.Stop()
		case before + outage:
			store.Restart()
		}
		iv := outageInterval(t, start.Add(time.Duration(k)*time.Second), k)
		if err := s.Write(context.Background(), iv); err != nil {
			t.Fatal(err)
		}
		cum += float64(100 + k)
		want[iv.End().UnixMilli()] = cum
		<-tick.C
	}
	waitFor(t, "the spool sent after the outage", func() bool { return s.Stats().PendingBatches == 0 })
	st := s.Stats()
	if st.Dropped.Batches != 0 || st.Retries == 0 {
		t.Fatalf("stats %+v: want retries during the outage and nothing dropped", st)
	}
	time.Sleep(2 * time.Second) // VictoriaMetrics' -search.latencyOffset
	metric := "latscope_wait_seconds"
	if !native {
		metric += "_count"
	}
	end := start.Add((before + outage + after + 1) * time.Second)
	got := store.QueryAt(t, fmt.Sprintf(`%s{job="outage"}[%ds]`, metric, before+outage+after+10), end)
	if len(got) != 3 {
		t.Fatalf("%d series, want 3: %v", len(got), got)
	}
	for _, g := range got {
		if len(g.Values) != len(want) {
			t.Errorf("%s: %d samples, want %d (one per interval)", g.Metric["event"], len(g.Values), len(want))
		}
		for ms, w := range want {
			if v, ok := g.Values[ms]; !ok || v != w {
				t.Errorf("%s at %s: %v (present %v), want %v exactly once", g.Metric["event"], time.UnixMilli(ms).UTC().Format(time.TimeOnly), v, ok, w)
			}
		}
	}
	t.Logf("%d intervals of 3 series through a %d s outage: %d batches sent, %d retries, none dropped", len(want), outage, st.SentBatches, st.Retries)
}

func TestRemoteWriteOutagePrometheus(t *testing.T) {
	t.Parallel()
	testOutage(t, promtest.Start(t, promtest.Options{NativeHistograms: true, RemoteWriteReceiver: true}), true)
}

func TestRemoteWriteOutageVictoriaMetrics(t *testing.T) {
	t.Parallel()
	testOutage(t, promtest.StartVictoriaMetrics(t), false)
}

// checkReadBack reads the store back through its query API, as `latscope
// report promql+http://...` does, one step a second: every series' count
// in every interval equals what was written, exactly, and each series'
// p99 over the whole is within a bucket of latscope's own.
func checkReadBack(t *testing.T, store *promtest.Server, ivs []stream.Interval, native bool) {
	t.Helper()
	from, to := ivs[0].Start, ivs[0].End()
	want := map[string]float64{}
	for _, iv := range ivs {
		if iv.Start.Before(from) {
			from = iv.Start
		}
		if iv.End().After(to) {
			to = iv.End()
		}
		for _, s := range iv.Series {
			want[fmt.Sprintf("%s|%s|%s|%s", iv.Source, s.Key.Event, s.Key.Instance, iv.End().Format(time.RFC3339))] += s.Hist.Count()
		}
	}
	base, err := url.Parse(store.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := &prometheus.Client{Base: base, HTTP: http.DefaultClient}
	diag := input.NewDiagnostics(io.Discard, 10)
	got := map[string]float64{}
	var read []stream.Interval
	err = client.Read(context.Background(), "store", prometheus.Selection{From: from, To: to, Step: time.Second}, diag, func(iv stream.Interval) error {
		if err := iv.Validate(); err != nil {
			return err
		}
		read = append(read, iv)
		for _, s := range iv.Series {
			job := s.Key.Source[strings.LastIndex(s.Key.Source, "/")+1:] // host/job, or job without a host label
			got[fmt.Sprintf("%s|%s|%s|%s", job, s.Key.Event, s.Key.Instance, iv.End().Format(time.RFC3339))] += s.Hist.Count()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := diag.Count("store"); n > 0 {
		t.Errorf("%d malformed samples: %v", n, diag.Problems())
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: read back %v events, wrote %v", k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: read back %v events, wrote none", k, g)
		}
	}
	checked := 0
	for _, e := range expectations(ivs) {
		var back *hist.Histogram
		for _, iv := range read {
			for _, s := range iv.Series {
				if job := s.Key.Source[strings.LastIndex(s.Key.Source, "/")+1:]; job == e.job && s.Key.Event == e.event && s.Key.Instance == e.instance {
					if back == nil {
						back = s.Hist.Clone()
					} else {
						back.Merge(s.Hist)
					}
				}
			}
		}
		if back == nil {
			continue
		}
		width := 2.0
		if native && !e.merged.IsCustom() {
			width = math.Exp2(math.Exp2(-float64(min(e.merged.Scale, hist.MaxScale))))
		}
		wantP99 := e.merged.Quantile(0.99) * float64(e.merged.Unit)
		gotP99 := back.Quantile(0.99) * float64(back.Unit)
		if gotP99 < wantP99/width || gotP99 > wantP99*width {
			t.Errorf("%s %q: p99 read back %.6g ns, latscope's %.6g ns: more than a bucket (×%.4g) apart", e.job, e.event, gotP99, wantP99, width)
		}
		checked++
	}
	t.Logf("read back %d intervals, %d series-intervals equal; %d series' p99 within a bucket", len(read), len(want), checked)
	if len(want) < 10 || checked < 3 {
		t.Errorf("%d series-intervals, %d series checked: want many", len(want), checked)
	}
}

// Mean series (host figures) reach the store as the counters
// latscope_mean_sum and _count: their ratio is latscope's value.
func TestRemoteWriteMeanSeries(t *testing.T) {
	store := promtest.Start(t, promtest.Options{NativeHistograms: true, RemoteWriteReceiver: true})
	end := time.Now().Add(-2 * time.Second).Truncate(time.Second)
	var ivs []stream.Interval
	for k, util := range []float64{20, 60, 40} {
		ivs = append(ivs, stream.Interval{Source: "host", Start: end.Add(time.Duration(k-3) * time.Second), Duration: time.Second, Means: []stream.SeriesMean{
			{Key: stream.Key{Event: "disk.%util", Instance: "vda"}, Sum: util * 1000, Count: 1000, Unit: stream.QuantityUnit, Quantity: stream.Percent},
			{Key: stream.Key{Event: "disk.w_await", Instance: "vda"}, Sum: 3 * float64(k+1), Count: float64(k + 1), Unit: hist.Millisecond},
		}})
	}
	sendAll(t, Options{URL: store.WriteURL(), Native: true, Shards: 2, BatchSamples: 50}, ivs)
	for expr, want := range map[string]float64{
		`latscope_mean_sum{event="disk.%util",quantity="percent"} / latscope_mean_count{event="disk.%util",quantity="percent"}`:     40,
		`latscope_mean_sum{event="disk.w_await",quantity="seconds"} / latscope_mean_count{event="disk.w_await",quantity="seconds"}`: 0.003,
		`latscope_mean_count{event="disk.w_await",instance="vda",job="host"}`:                                                       6,
	} {
		got := store.QueryAt(t, expr, end)
		if len(got) != 1 || math.Abs(got[0].Value-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", expr, got, want)
		}
	}
}
