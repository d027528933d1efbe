package driver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/otlptest"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/stream"
)

// countingReceiver is an OTLP/HTTP receiver on loopback (standing in for
// an OpenTelemetry Collector, which no package here ships) that counts the
// data points of the requests it decodes, or fails them with 500 while
// failing is set.
type countingReceiver struct {
	points  atomic.Int64
	failing atomic.Bool
	mu      sync.Mutex
	tenant  []string
}

func (r *countingReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if r.failing.Load() {
		http.Error(w, "store down", http.StatusInternalServerError)
		return
	}
	msg, err := otlptest.Decode(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rm := range msg.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				r.points.Add(int64(len(m.GetExponentialHistogram().GetDataPoints())))
			}
		}
	}
	r.mu.Lock()
	r.tenant = append(r.tenant, req.Header.Get("X-Scope-Orgid"))
	r.mu.Unlock()
}

// archiveStub counts what the jobs' writer stored.
type archiveStub struct{ n atomic.Int64 }

func (a *archiveStub) Write(context.Context, stream.Interval) error { a.n.Add(1); return nil }

func oneSeries(t *testing.T, start time.Time) stream.Interval {
	t.Helper()
	h := hist.NewExact(hist.Microsecond, 0)
	if err := h.Record(1500); err != nil {
		t.Fatal(err)
	}
	return stream.Interval{Source: "db01", Start: start, Duration: time.Second,
		Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}}
}

// TestOTLPForwardSendsStoresAndSurvivesAnOutage: every interval reaches
// the archive; sent ones reach the receiver with the file's headers; an
// outage is logged, loses only its own intervals, and sending resumes.
func TestOTLPForwardSendsStoresAndSurvivesAnOutage(t *testing.T) {
	recv := &countingReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	headers := filepath.Join(t.TempDir(), "otlp.headers")
	if err := os.WriteFile(headers, []byte("# tenant\nX-Scope-OrgID: team-db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	arch := &archiveStub{}
	fwd, err := newOTLPForward(config.OTLP{Endpoint: srv.URL, HeadersFile: headers, Every: time.Hour}, arch, io.Discard, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	write := func(n int) {
		for range n {
			if err := fwd.Write(context.Background(), oneSeries(t, at)); err != nil {
				t.Fatal(err)
			}
			at = at.Add(time.Second)
		}
	}
	write(3)
	fwd.send()
	recv.failing.Store(true)
	write(2)
	fwd.send()
	recv.failing.Store(false)
	write(1)
	fwd.close()
	if got := recv.points.Load(); got != 4 {
		t.Errorf("receiver got %d points, want 3 before the outage and 1 after", got)
	}
	if got := arch.n.Load(); got != 6 {
		t.Errorf("archive got %d intervals, want 6", got)
	}
	if !strings.Contains(logs.String(), "otlp: sending failed") || !strings.Contains(logs.String(), "500 Internal Server Error") {
		t.Errorf("the outage is not logged:\n%s", logs.String())
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, tenant := range recv.tenant {
		if tenant != "team-db" {
			t.Errorf("X-Scope-OrgID %q, want team-db from the headers file", tenant)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	got, err := parseHeaders("h", []byte("\n# comment\nauthorization: Bearer abc:def\n x-scope-orgid :  t1 \n"))
	if err != nil || got["Authorization"] != "Bearer abc:def" || got["X-Scope-Orgid"] != "t1" || len(got) != 2 {
		t.Fatalf("parseHeaders = %v, %v", got, err)
	}
	for _, bad := range []string{"novalue\n", "bad name: v\n", ": v\n", "a\x00b: c\n"} {
		_, err := parseHeaders("h", []byte("ok: 1\n"+bad))
		if err == nil || !strings.Contains(err.Error(), "h:2:") {
			t.Errorf("%q: error %v, want h:2", bad, err)
		}
	}
}

// FuzzParseHeaders: any file gives headers with valid names and values
// without line breaks, or an error naming the file.
func FuzzParseHeaders(f *testing.F) {
	f.Add([]byte("Authorization: Bearer x\n# c\n\nX-Scope-OrgID: t\n"))
	f.Add([]byte("a:b:c\r\nbad name: 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseHeaders("h", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "h") {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		for k, v := range got {
			if !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("header %q: %q", k, v)
			}
		}
	})
}
