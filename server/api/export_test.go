package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/recordingtest"
	"github.com/latscope/latscope/server/api"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/sink/jsonl"
	lsrsink "github.com/latscope/latscope/sink/lsr"
	"github.com/latscope/latscope/stream"
)

// exportServer serves the data routes over an archive of two sources
// (db01 and db02, 5 one-second windows each, interleaved in time) with a
// viewer token, at most maxExport windows per answer.
func exportServer(t *testing.T, maxExport int) (base, token string, a *archive.Archive) {
	t.Helper()
	ctx := context.Background()
	a = tempArchive(t)
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	for i := range 5 {
		for j, src := range []string{"db01", "db02"} {
			h := hist.NewExact(hist.Microsecond, 0)
			_ = h.Record(float64(100*(i+1) + j))
			iv := stream.Interval{Source: src, Start: start.Add(time.Duration(i) * time.Second), Duration: time.Second,
				Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}}
			if err := a.Write(ctx, iv); err != nil {
				t.Fatal(err)
			}
		}
	}
	base, token = viewerServer(t, a, maxExport)
	return base, token, a
}

// viewerServer serves the data routes over an archive with a viewer
// token, at most maxExport windows per answer.
func viewerServer(t testing.TB, a *archive.Archive, maxExport int) (base, token string) {
	t.Helper()
	h, token := viewerHandler(t, a, maxExport)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, token
}

// viewerHandler is viewerServer's handler, to call in process.
func viewerHandler(t testing.TB, a *archive.Archive, maxExport int) (http.Handler, string) {
	t.Helper()
	ctx := context.Background()
	store, err := auth.OpenPath(ctx, filepath.Join(t.TempDir(), "auth.db"),
		auth.Options{Argon2: auth.Argon2Params{Time: 1, MemoryKiB: 64, Threads: 1, SaltLen: 16, KeyLen: 32}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.AddUser(ctx, auth.LocalActor(), "viewer", auth.Viewer, rootPassword); err != nil {
		t.Fatal(err)
	}
	tok, err := store.CreateToken(ctx, auth.LocalActor(), "viewer", "export", auth.Viewer, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rt := httpsec.NewRouter(store, httpsec.Config{})
	api.Register(rt, api.Data{Archive: a, Jobs: nil, Sinks: []sink.Format{lsrsink.Format(), jsonl.Format(), {Name: "otlp", Sent: true}}, MaxExport: maxExport})
	h, err := rt.Handler()
	if err != nil {
		t.Fatal(err)
	}
	return h, tok.Secret
}

func get(t *testing.T, url, token string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestExportRecordingHoldsTheArchive decodes the exported recording and
// finds the archive's windows, merged in time order across sources.
func TestExportRecordingHoldsTheArchive(t *testing.T) {
	base, token, a := exportServer(t, 0)
	resp, body := get(t, base+"/api/v1/export?from=-1h", token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %s", resp.StatusCode, body)
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != "attachment; filename=latscope-export.lsr" {
		t.Errorf("Content-Disposition %q", cd)
	}
	got := recordingtest.Decode(t, body)
	rec := &stream.Recording{}
	if err := a.Read(context.Background(), archive.Query{}, func(iv stream.Interval) error { rec.Add(iv); return nil }); err != nil {
		t.Fatal(err)
	}
	want := rec.Intervals()
	if len(got) != len(want) || len(got) != 10 {
		t.Fatalf("%d intervals exported, the archive has %d (want 10)", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Source != w.Source || !g.Start.Equal(w.Start) || g.Duration != w.Duration || len(g.Series) != 1 ||
			g.Series[0].Key != w.Series[0].Key || g.Series[0].Hist.Count() != w.Series[0].Hist.Count() || g.Series[0].Hist.Sum != w.Series[0].Hist.Sum {
			t.Errorf("interval %d: exported %+v, archived %+v", i, g, w)
		}
	}
}

// TestExportBounds answers 413 for a report past MaxExport windows (an
// export streams), and 400 and 404 for a bad or unmatched selection.
func TestExportBounds(t *testing.T) {
	base, token, _ := exportServer(t, 4)
	for url, want := range map[string]int{
		"/api/v1/export":                         http.StatusOK, // streamed: no bound
		"/api/v1/report?format=json":             http.StatusRequestEntityTooLarge,
		"/api/v1/export?series=db01&to=-1h":      http.StatusOK,
		"/api/v1/export?format=jsonl&series=db9": http.StatusNotFound,
		"/api/v1/export?format=pdf":              http.StatusBadRequest,
		"/api/v1/export?format=otlp":             http.StatusBadRequest, // sent, not downloaded
		"/api/v1/report?intervals=maybe":         http.StatusBadRequest,
		"/api/v1/report?from=-1h&to=-2h":         http.StatusBadRequest,
	} {
		resp, body := get(t, base+url, token)
		if resp.StatusCode != want {
			t.Errorf("%s: %d %s, want %d", url, resp.StatusCode, body, want)
			continue
		}
		if want != http.StatusOK {
			var e struct{ Error string }
			if json.Unmarshal(body, &e) != nil || e.Error == "" {
				t.Errorf("%s: %s is not an error object", url, body)
			}
			if want == http.StatusRequestEntityTooLarge && !strings.Contains(e.Error, "narrow from and to") {
				t.Errorf("%s: %q does not say how to ask for less", url, e.Error)
			}
		}
	}
}

// TestReportOfOneJobsEvent selects one job's series of an event that
// another job records too (series=JOB&event=EVENT, the CLI's --series JOB
// --event EVENT); the event alone merges both.
func TestReportOfOneJobsEvent(t *testing.T) {
	base, token, _ := exportServer(t, 0)
	for _, c := range []struct {
		query      string
		count, sum float64
	}{
		{"series=db01&event=log%20file%20sync", 5, 100 + 200 + 300 + 400 + 500},
		{"series=db02&event=log%20file%20sync", 5, 101 + 201 + 301 + 401 + 501},
		{"series=log%20file%20sync", 10, 1500 + 1505},
		{"event=log%20file%20sync", 10, 1500 + 1505},
	} {
		resp, body := get(t, base+"/api/v1/report?format=json&from=-1h&"+c.query, token)
		var rep struct {
			Series []struct {
				Count float64 `json:"count"`
				SumUs float64 `json:"sum_us"`
			} `json:"series"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &rep) != nil || len(rep.Series) != 1 {
			t.Fatalf("%s: %d %s", c.query, resp.StatusCode, body)
		}
		if got := rep.Series[0]; got.Count != c.count || got.SumUs != c.sum {
			t.Errorf("%s: count %v sum %v µs; want %v and %v", c.query, got.Count, got.SumUs, c.count, c.sum)
		}
	}
	for _, q := range []string{"series=db01&event=log", "event=nothing"} {
		if resp, body := get(t, base+"/api/v1/report?format=json&"+q, token); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %s; want 404", q, resp.StatusCode, body)
		}
	}
	resp, body := get(t, base+"/api/v1/export?format=jsonl&from=-1h&series=db02&event=log%20file%20sync", token)
	if resp.StatusCode != http.StatusOK || strings.Count(string(body), "db01") != 0 || strings.Count(string(body), "db02") == 0 {
		t.Errorf("export of db02's event: %d\n%s", resp.StatusCode, body)
	}
}

// tempArchive is an empty archive in the test's directory, closed at the
// end.
func tempArchive(t *testing.T) *archive.Archive {
	t.Helper()
	a, err := archive.Open(filepath.Join(t.TempDir(), "data"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
