package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/promtest"
	"github.com/latscope/latscope/server/metrics"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/source/host"
	"github.com/latscope/latscope/stream"
)

// dashboardQuery is one PromQL expression of a shipped dashboard: a
// panel's target or a template variable's label_values() query.
type dashboardQuery struct {
	where, expr string
}

// dashboardQueries reads every expression of the dashboards in
// grafana/dashboards.
func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	files, err := filepath.Glob("../../grafana/dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in grafana/dashboards: %v", err)
	}
	var out []dashboardQuery
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Templating struct {
				List []struct {
					Name, Type, Definition string
				}
			}
			Panels []struct {
				Title   string
				Targets []struct{ Expr string }
			}
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range d.Templating.List {
			if v.Type == "query" {
				out = append(out, dashboardQuery{filepath.Base(f) + " variable " + v.Name, v.Definition})
			}
		}
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				out = append(out, dashboardQuery{filepath.Base(f) + " panel " + p.Title, tg.Expr})
			}
		}
	}
	return out
}

var labelValues = regexp.MustCompile(`^label_values\((.*), (\w+)\)$`)

// runnable turns a dashboard expression into what Grafana sends: the
// variables at "All" (.*), $__rate_interval a window holding several
// scrapes, label_values() as the series query it stands for.
func runnable(expr string) string {
	r := strings.NewReplacer(`"$host"`, `".*"`, `"$kind"`, `".*"`, `"$job"`, `".*"`, `"$event"`, `".*"`, "$__rate_interval", "20s")
	expr = r.Replace(expr)
	if m := labelValues.FindStringSubmatch(expr); m != nil {
		return "count by (" + m[2] + ") (" + m[1] + ")"
	}
	return expr
}

// nativeOnly says an expression reads the native histogram (the bare
// metric name), which a Prometheus without native histograms lacks; the
// others read the classic _bucket, _sum and _count series.
func nativeOnly(expr string) bool {
	return regexp.MustCompile(promnative.DefaultMetric + `\{`).MatchString(expr)
}

// TestGrafanaDashboardQueries runs every PromQL expression of the shipped
// dashboards against real Prometheus servers scraping /metrics while the
// counts grow: each returns data, and a finite value.
func TestGrafanaDashboardQueries(t *testing.T) {
	promtest.Binary(t)
	m := promnative.NewMapper(promnative.Options{Host: "db01"})
	feed(t, m)
	url, token := startServer(t, m)
	target := strings.TrimPrefix(url, "http://")
	native := promtest.Start(t, promtest.Options{NativeHistograms: true, Config: scrapeConfig(t, target, token)})
	classic := promtest.Start(t, promtest.Options{Config: scrapeConfig(t, target, token)})
	// Rates need counts that grow between scrapes: the recordings again,
	// a few seconds apart, and this machine's host: figures (the host
	// context panels) every half second meanwhile, with synced writes so
	// that the disk panels have I/O to average. Both go on while the
	// panels are queried.
	stopHost := feedHost(t, m)
	stopWrites := keepWriting(t)
	for range 3 {
		time.Sleep(2500 * time.Millisecond)
		feed(t, m)
	}
	queries := dashboardQueries(t)
	t.Logf("%d expressions of the shipped dashboards", len(queries))
	for _, q := range queries {
		expr := runnable(q.expr)
		srv, name := classic, "classic"
		if nativeOnly(expr) {
			srv, name = native, "native"
		}
		// A figure may lack its first samples for a scrape or two on a
		// loaded machine: asked again for up to 10 s.
		var got []promtest.Sample
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			got, err = srv.Query(expr)
			if err == nil && finite(got) > 0 || time.Now().After(deadline) {
				break
			}
		}
		switch {
		case err != nil:
			t.Errorf("%s: %s on the %s Prometheus: %v", q.where, expr, name, err)
		case finite(got) == 0:
			t.Errorf("%s: %s on the %s Prometheus returned no finite value (%d samples)", q.where, expr, name, len(got))
		}
	}
	stopWrites()
	stopHost()
	time.Sleep(2500 * time.Millisecond) // a scrape after the last interval
	checkMeans(t, m, native)
}

func finite(samples []promtest.Sample) int {
	n := 0
	for _, s := range samples {
		if !math.IsNaN(s.Value) && !math.IsInf(s.Value, 0) {
			n++
		}
	}
	return n
}

// keepWriting writes and syncs a MiB every half second until stopped.
func keepWriting(t *testing.T) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-time.After(500 * time.Millisecond):
				syncedWrite(t)
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// feedHost runs the host: source (real /proc of this machine) into m as
// job "host" until the returned function is called.
func feedHost(t *testing.T, m *promnative.Mapper) (stop func()) {
	t.Helper()
	src, err := host.Open("", host.Config{Interval: 500 * time.Millisecond, Hostname: "db01", Diag: input.NewDiagnostics(io.Discard, 10)})
	if err != nil {
		t.Fatal(err)
	}
	w := metrics.Counting(nopWriter{}, m)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, func(iv stream.Interval) error {
			iv.Source = "host" // the job
			return w.Write(ctx, iv)
		})
	}()
	return func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("host: %v", err)
		}
	}
}

// checkMeans compares mean series in Prometheus with the mapper's own
// totals: each figure's sum over its count, as latscope merges windows.
func checkMeans(t *testing.T, m *promnative.Mapper, prom *promtest.Server) {
	t.Helper()
	checked := 0
	for _, ms := range m.MeanSeries() {
		var sel []string
		event := ""
		for _, l := range ms.Labels {
			sel = append(sel, l.Name+"="+strconv.Quote(l.Value))
			if l.Name == "event" {
				event = l.Value
			}
		}
		if event != "cpu.%idle" && event != "disk.%util" && event != "mem.kbmemused" {
			continue
		}
		expr := "latscope_mean_sum{" + strings.Join(sel, ",") + "} / latscope_mean_count{" + strings.Join(sel, ",") + "}"
		got, err := prom.Query(expr)
		if err != nil || len(got) != 1 {
			t.Errorf("%s: %v %v", expr, got, err)
			continue
		}
		if want := ms.Sum / ms.Count; math.Abs(got[0].Value-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s = %v, latscope's %v", expr, got[0].Value, want)
		}
		checked++
	}
	if checked < 2 {
		t.Errorf("%d host figures checked in Prometheus, want several", checked)
	}
}

// syncedWrite writes a MiB to a file beside the package (on a disk, where
// $TMPDIR may be a tmpfs) and syncs it: that disk then has writes
// (w_await) in the window.
func syncedWrite(t *testing.T) {
	f, err := os.CreateTemp(".", ".grafana-io-*")
	if err != nil {
		t.Error(err) // from a goroutine: Error, not Fatal
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Error(err)
	}
	if err := f.Sync(); err != nil {
		t.Error(err)
	}
}
