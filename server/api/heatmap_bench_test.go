package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// bench7dStart is where the benchmark's week begins.
var bench7dStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const bench7dSeconds = 7 * 24 * 3600

// BenchmarkHeatmap7Days times GET /api/v1/series/{id}/heatmap (in process,
// JSON included) on an archive of 7 days of one series at 1 s (604 800
// windows of PyLatencyMap's real histograms in turn) with its 1-minute tier
// built as latscope serve maintains it: the whole week, the last hour and
// the last 6 hours, each on 1500 columns.
func BenchmarkHeatmap7Days(b *testing.B) {
	a := bench7dArchive(b)
	h, token := viewerHandler(b, a, 0)
	end := bench7dStart.Add(bench7dSeconds * time.Second)
	for _, c := range []struct {
		name string
		span time.Duration
		res  string
	}{{"7d", 7 * 24 * time.Hour, "1m0s"}, {"1h", time.Hour, "raw"}, {"6h", 6 * time.Hour, "raw"}} {
		url := fmt.Sprintf("/api/v1/series/1/heatmap?columns=1500&from=%s&to=%s",
			end.Add(-c.span).Format(time.RFC3339), end.Format(time.RFC3339))
		b.Run(c.name, func(b *testing.B) {
			var rec *httptest.ResponseRecorder
			cpu0 := cpuTime(b)
			for b.Loop() {
				req := httptest.NewRequest("GET", url, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				rec = httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", url, rec.Code, rec.Body)
				}
			}
			// On a machine shared with other work, the CPU time spent is
			// steadier than the elapsed time.
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(rec.Body.Len()), "json-bytes")
			var hm heatmapJSON
			if err := json.Unmarshal(rec.Body.Bytes(), &hm); err != nil || hm.Window.Resolution != c.res || hm.Totals == nil || hm.Totals.Events == 0 {
				b.Fatalf("%s: resolution %s (want %s), totals %+v, %v", url, hm.Window.Resolution, c.res, hm.Totals, err)
			}
		})
	}
}

// bench7dArchive opens the week's archive, built once and kept in
// $TMPDIR/latscope-bench-7d for later runs (about a minute to build).
func bench7dArchive(b *testing.B) *archive.Archive {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "latscope-bench-7d")
	if _, err := os.Stat(dir); err != nil {
		build := dir + ".building"
		os.RemoveAll(build)
		buildBench7d(b, build)
		if err := os.Rename(build, dir); err != nil {
			b.Fatal(err)
		}
	}
	a, err := archive.Open(dir, archive.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return a
}

func buildBench7d(b *testing.B, dir string) {
	ctx := context.Background()
	var hs []*hist.Histogram
	for _, iv := range sourcetest.ReadShared(b, pylatencymap.Format(), "pylatencymap/example_latency_data.txt", source.Options{}) {
		for _, s := range iv.Series {
			if s.Hist.Count() > 0 {
				hs = append(hs, s.Hist)
			}
		}
	}
	a, err := archive.Open(dir, archive.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	key := stream.Key{Event: "db file sequential read"}
	batch := make([]stream.Interval, 0, 3600)
	for i := range bench7dSeconds {
		batch = append(batch, stream.Interval{Source: "db01", Start: bench7dStart.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: key, Hist: hs[i%len(hs)]}}})
		if len(batch) == cap(batch) || i == bench7dSeconds-1 {
			if err := a.WriteBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	// As serve maintains it just after the last window: the 1-minute tier
	// is built, and raw data is kept for 7 days.
	if err := a.Maintain(ctx, bench7dStart.Add(bench7dSeconds*time.Second+time.Minute)); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
