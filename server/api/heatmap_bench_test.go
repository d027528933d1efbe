package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/internal/testkit/archivetest"
)

// BenchmarkHeatmap7Days times GET /api/v1/series/{id}/heatmap (in process,
// JSON included) on an archive of 7 days of one series at 1 s (604 800
// windows of PyLatencyMap's real histograms in turn) with its 1-minute tier
// built as latscope serve maintains it: the whole week, the last hour and
// the last 6 hours, each on 1500 columns.
func BenchmarkHeatmap7Days(b *testing.B) {
	a := bench7dArchive(b)
	h, token := viewerHandler(b, a, 0)
	end := archivetest.WeekEnd()
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

// bench7dArchive opens the week's archive (archivetest.Week) read-only.
func bench7dArchive(b *testing.B) *archive.Archive {
	b.Helper()
	a, err := archive.Open(archivetest.Week(b), archive.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return a
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
