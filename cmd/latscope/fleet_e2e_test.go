package main

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/browsertest"
	"github.com/latscope/latscope/internal/testkit/promtest"
)

// TestFleetView is the fleet as docs/fleet.md draws it, on a real
// Prometheus 2.42: one latscope serve (host db01) records a followed file
// and remote-writes it; `latscope report promql+http://...` reads the
// store back with the same counts as `latscope report` of that server's
// archive; a second latscope serve with no jobs of its own and --prometheus
// lists db01's series, draws their maps from the store, and its selection
// report equals the CLI's over the same window.
func TestFleetView(t *testing.T) {
	store := promtest.Start(t, promtest.Options{NativeHistograms: true, RemoteWriteReceiver: true})
	dir := t.TempDir()
	records := restampedRecords(t)
	waits := filepath.Join(dir, "waits.txt")
	if err := os.WriteFile(waits, []byte(strings.Join(records, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	dataA := filepath.Join(dir, "a")
	cfgA := writeConfig(t, dir, "a.yaml", fmt.Sprintf(`data: %s
listen: %s
jobs:
  - name: waits
    source: %s
prometheus:
  host: db01
remote_write:
  - url: %s
    name: prom
`, dataA, freePort(t), waits, store.WriteURL()))
	a := startServe(t, "--config", cfgA)
	apiA := &apiClient{t: t, base: a.base, token: viewerToken(t, a), bodies: &strings.Builder{}}
	// The file's last line has no newline, so its last record waits
	// (TestServeEndToEnd).
	eventually(t, "the file archived", func() bool { return apiA.jobs()["waits"].Intervals >= len(records)-2 })
	// The store holds what the archive holds once the spool is sent (a
	// stop under load may leave the last batches spooled for the next
	// start: nothing is lost, but this test reads the store now).
	var archived struct {
		Histogram struct {
			Count float64 `json:"count"`
		} `json:"histogram"`
	}
	apiA.get("/api/v1/series/1/histogram", &archived)
	// The records run a few minutes into the future: the highest count
	// of the quarter-hour around now.
	later := time.Now().Add(10 * time.Minute)
	eventually(t, "the store holding the archive's events", func() bool {
		got := store.QueryAt(t, `max_over_time(sum(histogram_count(latscope_wait_seconds{host="db01"}))[15m:1s])`, later)
		return len(got) == 1 && got[0].Value == archived.Histogram.Count
	})
	a.stop(t)

	// The window holds every interval: the store's counts are exact.
	from := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	until := time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)
	local := reportJSON(t, dataA, "--from", from, "--to", until)
	fleetSource := "promql+" + store.URL + "?host=db01&job=waits"
	remote := reportJSON(t, fleetSource, "--from", from, "--until", until, "--interval", "1s")
	if len(local.Series) == 0 || len(remote.Series) != len(local.Series) {
		t.Fatalf("%d series in the archive, %d read from the store: want the same", len(local.Series), len(remote.Series))
	}
	for i, l := range local.Series {
		r := remote.Series[i]
		if r.Event != l.Event || r.Count != l.Count {
			t.Errorf("series %d: %q %v events from the store, %q %v in the archive", i, r.Event, r.Count, l.Event, l.Count)
		}
		// Oracle's millisecond buckets cross a power of two of seconds:
		// a quantile may move one bucket (docs/fleet.md, the conversion).
		if l.P99Us != nil && (r.P99Us == nil || *r.P99Us < *l.P99Us/2 || *r.P99Us > *l.P99Us*2) {
			t.Errorf("%s: p99 %v µs from the store, %v µs in the archive", l.Event, r.P99Us, *l.P99Us)
		}
	}

	// A fleet view with no jobs of its own.
	cfgB := writeConfig(t, dir, "b.yaml", fmt.Sprintf(`data: %s
listen: %s
fleet:
  prometheus: %s
  min_step: 1s
`, filepath.Join(dir, "b"), freePort(t), store.URL))
	b := startServe(t, "--config", cfgB)
	admin := &apiClient{t: t, base: b.base, token: bootstrapToken(t, b, "admin"), bodies: &strings.Builder{}}
	admin.want(200, "POST", "/api/v1/users/admin/password", `{"password":"`+webAdminPassword+`"}`)
	var list struct {
		Configured bool `json:"configured"`
		Series     []struct {
			ID    int64  `json:"id"`
			Host  string `json:"host"`
			Job   string `json:"job"`
			Event string `json:"event"`
		} `json:"series"`
	}
	admin.get("/api/v1/fleet/series", &list)
	byEvent := map[string]int64{}
	for _, s := range list.Series {
		if s.Host == "db01" && s.Job == "waits" {
			byEvent[s.Event] = s.ID
		}
	}
	if !list.Configured || len(byEvent) != len(local.Series) {
		t.Fatalf("the fleet lists %v; want db01's %d series", list, len(local.Series))
	}
	busiest := local.Series[0]
	for _, s := range local.Series {
		if s.Count > busiest.Count {
			busiest = s
		}
	}
	id := byEvent[busiest.Event]
	window := "from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(until)
	var heat struct {
		Totals struct {
			Events float64 `json:"events"`
		} `json:"totals"`
	}
	admin.get(fmt.Sprintf("/api/v1/fleet/series/%d/heatmap?columns=300&%s", id, window), &heat)
	var summary struct {
		Histogram struct {
			Count float64 `json:"count"`
		} `json:"histogram"`
	}
	admin.get(fmt.Sprintf("/api/v1/fleet/series/%d/histogram?%s", id, window), &summary)
	if math.Abs(heat.Totals.Events-busiest.Count) > 1e-6*busiest.Count || summary.Histogram.Count != busiest.Count {
		t.Errorf("%s: the fleet heat map holds %v events and its summary %v; the archive %v", busiest.Event, heat.Totals.Events, summary.Histogram.Count, busiest.Count)
	}

	br := browsertest.New(t)
	br.Login(b.base, "admin", webAdminPassword)
	br.Open(b.base + "/")
	br.WaitFor("the fleet's series", `document.querySelectorAll("#fleet-series tbody tr").length > 0`, 20*time.Second)
	br.Screenshot("fleet-dashboard")
	br.Open(fmt.Sprintf("%s/history?fleet=1&series=%d&%s", b.base, id, window))
	if n := browsertest.Eval[int](br, `LS.heatmaps[0].model.n`); n < 100 {
		t.Errorf("the fleet history map has %d columns", n)
	}
	br.Screenshot("fleet-history")
	dragOnMap(br, 0.05, 0.95, false)
	br.WaitFor("the selection's report", `!!document.querySelector("#selection[data-ready] #report")`, 20*time.Second)
	selFrom, selTo := selectionWindow(br)
	got := compareReport(t, br, selFrom, selTo, []string{"report", "promql+" + store.URL + "?host=db01&job=waits", "--event", busiest.Event,
		"--from", selFrom, "--until", selTo, "--interval", "1s"})
	t.Logf("fleet: %d series of db01 read back; %s: %v events in the archive, the store, the map and the summary; the page's selection equals the CLI's (%v events)",
		len(byEvent), busiest.Event, busiest.Count, got["count"])
}

func writeConfig(t *testing.T, dir, name, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
