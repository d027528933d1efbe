package httpsec_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/audit/correlate"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/server/api"
	"github.com/latscope/latscope/server/auditwatch"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/server/live"
	"github.com/latscope/latscope/server/runs"
	"github.com/latscope/latscope/server/web"
	"github.com/latscope/latscope/sink"
	lsrsink "github.com/latscope/latscope/sink/lsr"
	"github.com/latscope/latscope/source/prometheus"
	"github.com/latscope/latscope/stream"
)

// The security tests of this package enumerate latscope serve's real data
// and runs routes: an archive holding series 1, a job list and a finished
// flame run 1 stand behind them.
func init() {
	httpsec.ServeRoutes = func(t *testing.T, rt *httpsec.Router) {
		a, err := archive.Open(t.TempDir(), archive.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		h := hist.NewExact(hist.Microsecond, 0)
		_ = h.Record(250)
		iv := stream.Interval{Source: "db01", Start: time.Now().Add(-time.Minute), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}}
		if err := a.Write(context.Background(), iv); err != nil {
			t.Fatal(err)
		}
		status := func() []jobs.Status {
			return []jobs.Status{{Name: "db01", Source: "postgres://latscope@db01/app", State: jobs.Running}}
		}
		// Streams end after a moment, so that the tests can read them whole.
		hub := live.NewHub(a, live.Options{MaxAge: 50 * time.Millisecond})
		api.Register(rt, api.Data{Archive: a, Jobs: status, Sinks: []sink.Format{lsrsink.Format()}, Live: hub, Fleet: recordedFleet(t)})
		// A fake latscope flame writes its -o file: run 1 is a flame
		// capture with its stacks, its flame graph and its log.
		bin := filepath.Join(t.TempDir(), "latscope")
		fake := "#!/bin/sh\nfor a; do [ \"$prev\" = -o ] && out=$a; prev=$a; done\necho 'main;work 3' > \"$out\"\n"
		if err := os.WriteFile(bin, []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		ex, err := runs.Open(context.Background(), runs.Options{Data: t.TempDir(), Binary: bin})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ex.Close() })
		params := json.RawMessage(`{"pid":` + strconv.Itoa(os.Getpid()) + `,"duration":"1s"}`)
		if _, err := ex.Start(context.Background(), auth.LocalActor(), "flame", params); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if r, err := ex.Get(context.Background(), 1); err == nil && r.State.Final() || time.Now().After(deadline) {
				break
			}
		}
		runs.Register(rt, ex)
		watches, err := auditwatch.Open(auditwatch.Options{Data: t.TempDir()}, []auditwatch.Watch{{Name: "view"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(watches.Close)
		auditwatch.Register(rt, watches, func(w io.Writer, title string, _ []correlate.Chain) error {
			_, err := io.WriteString(w, "<!doctype html><title>"+title+"</title>")
			return err
		})
		if err := web.Register(rt); err != nil {
			t.Fatal(err)
		}
	}
}

// recordedFleet is a fleet store that answers with what a real Prometheus
// 2.42 answered (testdata/promql: native histograms of a 10046 trace's
// events); the fleet's live tests are cmd/latscope's TestFleetView.
func recordedFleet(t *testing.T) *api.Fleet {
	answer, err := os.ReadFile(testenv.DataFile(t, "promql/prometheus-2.42-native.json"))
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(answer, &parsed); err != nil {
		t.Fatal(err)
	}
	var sets []map[string]string
	for _, r := range parsed.Data.Result {
		sets = append(sets, r.Metric)
	}
	list, _ := json.Marshal(map[string]any{"status": "success", "data": sets})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/series" {
			w.Write(list)
			return
		}
		w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	labels := maps.Clone(sets[0])
	delete(labels, "__name__")
	httpsec.FleetSeriesID = strconv.FormatInt(api.FleetID(labels), 10)
	base, _ := url.Parse(srv.URL)
	return &api.Fleet{Client: &prometheus.Client{Base: base, HTTP: srv.Client()}}
}
