package metrics_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/promtest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/server/metrics"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// recordings are the jobs fed to the server: a 10046 trace (exact
// durations, several events: native schema 6) and the PyLatencyMap
// example (Oracle's power-of-two millisecond buckets: schema 0).
var recordings = map[string]string{
	"trace": "trc10046/apress-top1e_10.2.0.3_11.1.0.6/DBM11106_ora_6334.trc",
	"awr":   "pylatencymap/example_latency_data.txt",
}

// feed runs every recording through metrics.Counting as the jobs' writer
// does and returns latscope's own totals per job and event.
func feed(t *testing.T, m *promnative.Mapper) map[string]*hist.Histogram {
	t.Helper()
	w := metrics.Counting(nopWriter{}, m)
	totals := map[string]*hist.Histogram{}
	op := &source.Opener{Formats: []source.Format{pylatencymap.Format(), oracle10046.Format()}}
	for job, rel := range recordings {
		src, err := op.Open(context.Background(), testenv.DataFile(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		err = src.Run(context.Background(), func(iv stream.Interval) error {
			iv.Source = job // the runner names the archive source after the job
			for _, s := range iv.Series {
				k := job + "/" + s.Key.Event
				if totals[k] == nil {
					totals[k] = s.Hist.Clone()
				} else {
					totals[k].Merge(s.Hist)
				}
			}
			return w.Write(context.Background(), iv)
		})
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
	}
	return totals
}

type nopWriter struct{}

func (nopWriter) Write(context.Context, stream.Interval) error { return nil }

// scrapeConfig is the prometheus.yml of docs/fleet.md, scraping target
// every second with the viewer's token in a credentials file.
func scrapeConfig(t *testing.T, target, token string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```yaml\n# prometheus.yml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/fleet.md has no prometheus.yml example")
	}
	for _, r := range [][2]string{{"/etc/prometheus/latscope.token", file}, {"127.0.0.1:7879", target}, {"scrape_interval: 15s", "scrape_interval: 1s"}} {
		if !strings.Contains(block, r[0]) {
			t.Fatalf("docs/fleet.md's prometheus.yml has no %q", r[0])
		}
		block = strings.ReplaceAll(block, r[0], r[1])
	}
	return block
}

// TestPrometheusScrapes has a real Prometheus scrape /metrics with a
// bearer token, once with native histograms (protobuf) and once without
// (text, classic buckets): the counts are exact and histogram_quantile's
// p99 is latscope's own within one bucket's width, for every series.
func TestPrometheusScrapes(t *testing.T) {
	promtest.Binary(t)
	m := promnative.NewMapper(promnative.Options{Host: "db01"})
	totals := feed(t, m)
	url, token := startServer(t, m)
	target := strings.TrimPrefix(url, "http://")

	native := promtest.Start(t, promtest.Options{NativeHistograms: true, Config: scrapeConfig(t, target, token)})
	classic := promtest.Start(t, promtest.Options{Config: scrapeConfig(t, target, token)})

	t.Run("native", func(t *testing.T) {
		counts := native.WaitFor(t, "histogram_count(latscope_wait_seconds)", 60*time.Second, func(s []promtest.Sample) bool { return len(s) == len(totals) })
		checkCounts(t, counts, totals)
		p99s, err := native.Query("histogram_quantile(0.99, latscope_wait_seconds)")
		if err != nil {
			t.Fatal(err)
		}
		checkQuantiles(t, p99s, totals, m, true)
	})
	t.Run("classic", func(t *testing.T) {
		counts := classic.WaitFor(t, `latscope_wait_seconds_bucket{le="+Inf"}`, 60*time.Second, func(s []promtest.Sample) bool { return len(s) == len(totals) })
		checkCounts(t, counts, totals)
		p99s, err := classic.Query("histogram_quantile(0.99, latscope_wait_seconds_bucket)")
		if err != nil {
			t.Fatal(err)
		}
		checkQuantiles(t, p99s, totals, m, false)
	})
}

func checkCounts(t *testing.T, got []promtest.Sample, totals map[string]*hist.Histogram) {
	t.Helper()
	for _, s := range got {
		k := s.Metric["job"] + "/" + s.Metric["event"]
		want := totals[k]
		if want == nil {
			t.Errorf("series %v: not fed", s.Metric)
			continue
		}
		if s.Value != want.Count() {
			t.Errorf("%s: count %g, latscope %g", k, s.Value, want.Count())
		}
		if s.Metric["host"] != "db01" || s.Metric["source_kind"] != "file" {
			t.Errorf("%s: labels %v", k, s.Metric)
		}
	}
}

// checkQuantiles compares each p99 with latscope's: within the width of
// the native bucket holding it (native), or of the classic bucket (the
// source's own power-of-two row).
func checkQuantiles(t *testing.T, got []promtest.Sample, totals map[string]*hist.Histogram, m *promnative.Mapper, native bool) {
	t.Helper()
	if len(got) != len(totals) {
		t.Errorf("%d quantiles for %d series", len(got), len(totals))
	}
	schemas := map[string]int32{}
	for _, s := range m.Series() {
		var job, event string
		for _, l := range s.Labels {
			switch l.Name {
			case "job":
				job = l.Value
			case "event":
				event = l.Value
			}
		}
		schemas[job+"/"+event] = s.Native.Schema
	}
	for _, s := range got {
		k := s.Metric["job"] + "/" + s.Metric["event"]
		h := totals[k]
		if h == nil {
			continue
		}
		want := h.Quantile(0.99) * float64(h.Unit) / 1e9
		var width float64
		if native {
			width = want * (math.Exp2(math.Exp2(-float64(schemas[k]))) - 1)
		} else {
			lower := math.Exp2(math.Floor(math.Log2(want * 1e9 / float64(h.Unit))))
			width = lower * float64(h.Unit) / 1e9
		}
		t.Logf("%s: p99 %.6g s, latscope %.6g s, %.2f bucket widths apart", k, s.Value, want, math.Abs(s.Value-want)/width)
		if math.Abs(s.Value-want) > width {
			t.Errorf("%s: p99 %g s, latscope %g s: more than a bucket's width (%g s) apart", k, s.Value, want, width)
		}
	}
}
