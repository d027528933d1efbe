package metrics_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/promtest"
	"github.com/latscope/latscope/sink/promnative"
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
	// a few seconds apart.
	for range 3 {
		time.Sleep(2500 * time.Millisecond)
		feed(t, m)
	}
	time.Sleep(2500 * time.Millisecond)
	queries := dashboardQueries(t)
	t.Logf("%d expressions of the shipped dashboards", len(queries))
	for _, q := range queries {
		expr := runnable(q.expr)
		servers := map[string]*promtest.Server{"classic": classic, "native": native}
		if nativeOnly(expr) {
			delete(servers, "classic")
		} else {
			delete(servers, "native")
		}
		for name, srv := range servers {
			got, err := srv.Query(expr)
			if err != nil {
				t.Errorf("%s: %s on the %s Prometheus: %v", q.where, expr, name, err)
				continue
			}
			finite := 0
			for _, s := range got {
				if !math.IsNaN(s.Value) && !math.IsInf(s.Value, 0) {
					finite++
				}
			}
			if finite == 0 {
				t.Errorf("%s: %s on the %s Prometheus returned no finite value (%d samples)", q.where, expr, name, len(got))
			}
		}
	}
}
