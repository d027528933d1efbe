package remotewrite

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
	"google.golang.org/protobuf/encoding/protowire"
)

// decoded is what a test store saw of one time series.
type decoded struct {
	labels     map[string]string
	samples    []sample
	histograms []histogram
}

// decodeWriteRequest reads the fields marshal writes, as a receiver does.
func decodeWriteRequest(t *testing.T, b []byte) []decoded {
	t.Helper()
	var out []decoded
	each(t, b, func(num protowire.Number, v []byte, _ uint64) {
		if num != 1 {
			t.Fatalf("WriteRequest field %d", num)
		}
		ts := decoded{labels: map[string]string{}}
		each(t, v, func(num protowire.Number, v []byte, _ uint64) {
			switch num {
			case 1:
				var l label
				each(t, v, func(num protowire.Number, v []byte, _ uint64) {
					if num == 1 {
						l.Name = string(v)
					} else {
						l.Value = string(v)
					}
				})
				ts.labels[l.Name] = l.Value
			case 2:
				var s sample
				each(t, v, func(num protowire.Number, _ []byte, x uint64) {
					if num == 1 {
						s.Value = math.Float64frombits(x)
					} else {
						s.Timestamp = int64(x)
					}
				})
				ts.samples = append(ts.samples, s)
			case 4:
				ts.histograms = append(ts.histograms, decodeHistogram(t, v))
			}
		})
		out = append(out, ts)
	})
	return out
}

func decodeHistogram(t *testing.T, b []byte) histogram {
	var h histogram
	each(t, b, func(num protowire.Number, v []byte, x uint64) {
		switch num {
		case 1:
			h.Count = x
		case 3:
			h.Sum = math.Float64frombits(x)
		case 4:
			h.Schema = int32(protowire.DecodeZigZag(x))
		case 5:
			h.ZeroThreshold = math.Float64frombits(x)
		case 6:
			h.ZeroCount = x
		case 11:
			var sp span
			each(t, v, func(num protowire.Number, _ []byte, x uint64) {
				if num == 1 {
					sp.Offset = int32(protowire.DecodeZigZag(x))
				} else {
					sp.Length = uint32(x)
				}
			})
			h.PositiveSpans = append(h.PositiveSpans, sp)
		case 12:
			for len(v) > 0 {
				d, n := protowire.ConsumeVarint(v)
				h.PositiveDeltas = append(h.PositiveDeltas, protowire.DecodeZigZag(d))
				v = v[n:]
			}
		case 15:
			h.Timestamp = int64(x)
		default:
			t.Fatalf("histogram field %d", num)
		}
	})
	return h
}

// each calls f with every field of a message: the bytes of length-
// delimited ones, the value of varint and fixed64 ones.
func each(t *testing.T, b []byte, f func(protowire.Number, []byte, uint64)) {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			f(num, v, 0)
			b = b[n:]
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			f(num, nil, v)
			b = b[n:]
		case protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			f(num, nil, v)
			b = b[n:]
		default:
			t.Fatalf("wire type %d", typ)
		}
	}
}

// fakeStore answers with the statuses given in turn (then 204) and keeps
// what it accepted.
type fakeStore struct {
	t        *testing.T
	mu       sync.Mutex
	statuses []int
	accepted [][]decoded
	requests int
	headers  http.Header
	// retryAfter is the Retry-After of the refusals (empty: none); times
	// are when each request came.
	retryAfter string
	times      []time.Time
}

func (f *fakeStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	f.headers = r.Header.Clone()
	f.times = append(f.times, time.Now())
	if len(f.statuses) > 0 {
		code := f.statuses[0]
		f.statuses = f.statuses[1:]
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		http.Error(w, fmt.Sprintf("status %d for the test", code), code)
		return
	}
	compressed, _ := io.ReadAll(r.Body)
	body, err := snappy.Decode(nil, compressed)
	if err != nil {
		f.t.Errorf("body is not snappy: %v", err)
	}
	f.accepted = append(f.accepted, decodeWriteRequest(f.t, body))
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeStore) snapshot() (requests int, accepted [][]decoded) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, append([][]decoded(nil), f.accepted...)
}

func testInterval(t *testing.T, start time.Time, events ...string) stream.Interval {
	t.Helper()
	iv := stream.Interval{Source: "waits", Start: start, Duration: time.Second}
	for i, e := range events {
		h := hist.NewExact(hist.Microsecond, 0)
		for v := range 100 {
			if err := h.Record(float64(100 + 10*v + i)); err != nil {
				t.Fatal(err)
			}
		}
		iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: e}, Hist: h})
	}
	return iv
}

func startSender(t *testing.T, opts Options) (*Sender, context.CancelFunc) {
	t.Helper()
	if opts.Retry == (Retry{}) {
		opts.Retry = Retry{Min: 5 * time.Millisecond, Max: 20 * time.Millisecond}
	}
	if opts.Spool == "" {
		opts.Spool = t.TempDir()
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, cancel
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// 5xx and 429 are retried until accepted; the headers are remote write
// 1.0's; the native histogram carries the interval's counts at its end.
func TestSenderRetriesServerErrors(t *testing.T) {
	store := &fakeStore{t: t, statuses: []int{500, 503, 429}}
	srv := httptest.NewServer(store)
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := startSender(t, Options{URL: srv.URL, Native: true, Shards: 1, BearerTokenFile: tokenFile})
	start := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	if err := s.Write(context.Background(), testInterval(t, start, "db file sequential read")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the batch acknowledged", func() bool { return s.Stats().SentBatches == 1 })
	requests, acc := store.snapshot()
	if requests != 4 {
		t.Errorf("%d requests, want 4 (3 failures then success)", requests)
	}
	for k, want := range map[string]string{"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
		"X-Prometheus-Remote-Write-Version": "0.1.0", "Authorization": "Bearer s3cret"} {
		if got := store.headers.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	ts := acc[0][0]
	if ts.labels["__name__"] != "latscope_wait_seconds" || ts.labels["event"] != "db file sequential read" || ts.labels["job"] != "waits" {
		t.Errorf("labels %v", ts.labels)
	}
	h := ts.histograms[0]
	if h.Count != 100 || h.Timestamp != start.Add(time.Second).UnixMilli() {
		t.Errorf("histogram count %d at %d, want 100 at the interval's end %d", h.Count, h.Timestamp, start.Add(time.Second).UnixMilli())
	}
	var total int64
	var running int64
	for _, d := range h.PositiveDeltas {
		running += d
		total += running
	}
	if uint64(total)+h.ZeroCount != h.Count {
		t.Errorf("buckets hold %d events, count %d", total, h.Count)
	}
	if st := s.Stats(); st.Retries != 3 || st.SentBatches != 1 || st.PendingBatches != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A 4xx other than 429 is not retried: the batch is dropped and counted,
// and the next one goes.
// A 429 with Retry-After (Mimir's and Thanos' rate limits) is retried no
// sooner than it says, within the backoff's cap.
func TestSenderHonoursRetryAfter(t *testing.T) {
	store := &fakeStore{t: t, statuses: []int{429}, retryAfter: "1"}
	srv := httptest.NewServer(store)
	defer srv.Close()
	s, _ := startSender(t, Options{URL: srv.URL, Native: true, Shards: 1, Retry: Retry{Min: 5 * time.Millisecond, Max: 5 * time.Second}})
	if err := s.Write(context.Background(), testInterval(t, time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC), "log file sync")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); s.Stats().SentBatches != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the batch was not sent after the 429")
		}
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.times) != 2 || store.times[1].Sub(store.times[0]) < time.Second {
		t.Errorf("requests at %v: want the retry a second after the 429 (Retry-After: 1), not after the 5 ms backoff", store.times)
	}
	now := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{"": 0, "7": 7 * time.Second, "-1": 0, "soon": 0,
		"Thu, 26 Nov 2026 03:00:30 GMT": 30 * time.Second, "Thu, 26 Nov 2026 02:00:00 GMT": 0} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}

func TestSenderDropsRefusedBatch(t *testing.T) {
	store := &fakeStore{t: t, statuses: []int{400}}
	srv := httptest.NewServer(store)
	defer srv.Close()
	s, _ := startSender(t, Options{URL: srv.URL, Shards: 1})
	start := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	for i := range 2 {
		if err := s.Write(context.Background(), testInterval(t, start.Add(time.Duration(i)*time.Second), "log file sync")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the second batch accepted", func() bool { _, acc := store.snapshot(); return len(acc) == 1 })
	if st := s.Stats(); st.Dropped.Batches != 1 || st.Retries != 0 {
		t.Errorf("stats %+v, want one batch dropped without retry", st)
	}
	_, acc := store.snapshot()
	// Classic: a _bucket series per le, then _count and _sum.
	var count *decoded
	for i := range acc[0] {
		if acc[0][i].labels["__name__"] == "latscope_wait_seconds_count" {
			count = &acc[0][i]
		}
	}
	if count == nil || count.samples[0].Value != 200 {
		t.Fatalf("_count after two intervals of 100: %+v", count)
	}
}

// Batches hold at most BatchSamples samples, and a series keeps its shard.
func TestSenderBatchesAndShards(t *testing.T) {
	store := &fakeStore{t: t}
	srv := httptest.NewServer(store)
	defer srv.Close()
	s, _ := startSender(t, Options{URL: srv.URL, Native: true, Shards: 3, BatchSamples: 2})
	events := []string{"e1", "e2", "e3", "e4", "e5", "e6", "e7"}
	start := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	const intervals = 5
	for i := range intervals {
		if err := s.Write(context.Background(), testInterval(t, start.Add(time.Duration(i)*time.Second), events...)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every sample", func() bool { return s.Stats().SentSamples == intervals*uint64(len(events)) })
	_, acc := store.snapshot()
	last := map[string]int64{}
	for _, req := range acc {
		if len(req) > 2 {
			t.Errorf("a request of %d series, want at most 2", len(req))
		}
		for _, ts := range req {
			e, at := ts.labels["event"], ts.histograms[0].Timestamp
			if at <= last[e] {
				t.Errorf("%s: sample at %d after one at %d", e, at, last[e])
			}
			last[e] = at
		}
	}
}

// latscope stopped while the store is down: the next run's sender (same
// spool) sends what the last one could not, with the same timestamps, so
// the store sees each sample once.
func TestSenderRestartResendsSpool(t *testing.T) {
	down := &fakeStore{t: t, statuses: make([]int, 1000)}
	for i := range down.statuses {
		down.statuses[i] = http.StatusServiceUnavailable
	}
	srv := httptest.NewServer(down)
	dir := t.TempDir()
	first, stop := startSender(t, Options{URL: srv.URL, Native: true, Shards: 2, Spool: dir})
	start := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	for i := range 4 {
		if err := first.Write(context.Background(), testInterval(t, start.Add(time.Duration(i)*time.Second), "e1", "e2", "e3")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "retries", func() bool { return first.Stats().Retries > 2 })
	stop()
	srv.Close()
	if n, _ := first.spool.Pending(); n == 0 {
		t.Fatal("nothing left spooled")
	}

	up := &fakeStore{t: t}
	srv = httptest.NewServer(up)
	defer srv.Close()
	second, _ := startSender(t, Options{URL: srv.URL, Native: true, Shards: 2, Spool: dir})
	waitFor(t, "the spool resent", func() bool { return second.Stats().SentSamples == 12 })
	_, acc := up.snapshot()
	seen := map[string]int{}
	for _, req := range acc {
		for _, ts := range req {
			h := ts.histograms[0]
			seen[fmt.Sprintf("%s@%d", ts.labels["event"], h.Timestamp)]++
			want := uint64(100 * ((h.Timestamp - start.UnixMilli()) / 1000))
			if h.Count != want {
				t.Errorf("%s at %d: count %d, want the first run's cumulative %d", ts.labels["event"], h.Timestamp, h.Count, want)
			}
		}
	}
	if len(seen) != 12 {
		t.Errorf("%d distinct samples resent, want 12: %v", len(seen), seen)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s sent %d times", k, n)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("spool not empty after the resend: %v", entries)
	}
}

// TLS with the store's CA from ca_file, and basic auth from a password
// file; a missing credentials file stops New.
func TestSenderTLSAndBasicAuth(t *testing.T) {
	store := &fakeStore{t: t}
	srv := httptest.NewTLSServer(store)
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := startSender(t, Options{URL: srv.URL, Native: true, Shards: 1, CAFile: ca, BasicAuthUser: "latscope", BasicAuthPasswordFile: pw})
	if err := s.Write(context.Background(), testInterval(t, time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC), "e1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the batch accepted over TLS", func() bool { _, acc := store.snapshot(); return len(acc) == 1 })
	store.mu.Lock()
	user, pass, ok := (&http.Request{Header: store.headers}).BasicAuth()
	store.mu.Unlock()
	if !ok || user != "latscope" || pass != "hunter2" {
		t.Errorf("basic auth %q %q %v", user, pass, ok)
	}

	_, err := New(Options{URL: srv.URL, Spool: t.TempDir(), BearerTokenFile: filepath.Join(dir, "missing")})
	if err == nil || !strings.Contains(err.Error(), "bearer_token_file") {
		t.Errorf("missing token file: %v", err)
	}
	_, err = New(Options{URL: srv.URL, Spool: t.TempDir(), CAFile: pw})
	if err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a CA file without a certificate: %v", err)
	}
}

// Without the store's CA the TLS handshake fails: retried (the store's
// certificate may be fixed), never sent in clear.
func TestSenderRefusesUnknownCertificate(t *testing.T) {
	store := &fakeStore{t: t}
	srv := httptest.NewUnstartedServer(store)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake errors are the point
	srv.StartTLS()
	defer srv.Close()
	s, _ := startSender(t, Options{URL: srv.URL, Shards: 1})
	if err := s.Write(context.Background(), testInterval(t, time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC), "e1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "retries", func() bool { return s.Stats().Retries >= 2 })
	if n, _ := store.snapshot(); n != 0 {
		t.Errorf("%d requests reached the store", n)
	}
}
