package live_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/live"
	"github.com/latscope/latscope/stream"
)

// row is an interval event's data.
type row struct {
	Series  int64   `json:"series"`
	Start   *string `json:"start"`
	OffsetS float64 `json:"offset_s"`
	Seconds float64 `json:"seconds"`
	Gap     bool    `json:"gap"`
	Count   float64 `json:"count"`
	SumUs   float64 `json:"sum_us"`
}

func decodeRow(t *testing.T, ev event) row {
	t.Helper()
	if ev.Type != live.TypeInterval {
		t.Fatalf("event %+v: want an interval", ev)
	}
	var r row
	if err := json.Unmarshal([]byte(ev.Data), &r); err != nil {
		t.Fatalf("event data %q: %v", ev.Data, err)
	}
	return r
}

// intervalEvents reads the events of n intervals (two series each).
func intervalEvents(t *testing.T, c *client, n int) []event {
	t.Helper()
	var out []event
	for range 2 * n {
		out = append(out, c.nextOf(t, live.TypeInterval))
	}
	return out
}

// TestLiveIntervalsAsWritten: a stream receives every interval the job
// writes, one event per series, rows as GET .../intervals shows them,
// with the interval's end as the id of its last event; a gap is sent
// for each series of the source.
func TestLiveIntervalsAsWritten(t *testing.T) {
	s := startServer(t, live.Options{})
	s.write(interval(0)) // the series exist before the stream starts
	c := s.connect("", "")
	for i := 1; i <= 3; i++ {
		s.write(interval(i))
	}
	evs := intervalEvents(t, c, 3)
	for i := 1; i <= 3; i++ {
		hist, mean := evs[2*(i-1)], evs[2*(i-1)+1]
		if hist.ID != "" || mean.ID != end(i) {
			t.Errorf("interval %d: ids %q, %q; want none, then %s", i, hist.ID, mean.ID, end(i))
		}
		h, m := decodeRow(t, hist), decodeRow(t, mean)
		if h.Count != 3 || h.SumUs != 180+250+900*float64(i+1) || m.Count != float64(10+i) || m.SumUs != 12000 {
			t.Errorf("interval %d: rows %+v %+v", i, h, m)
		}
		want := interval(i).Start.Format(time.RFC3339Nano)
		if h.Start == nil || *h.Start != want || h.Seconds != 1 || h.OffsetS != float64(interval(i).Start.Unix()) {
			t.Errorf("interval %d: row %+v, want start %s", i, h, want)
		}
		// The same row as the API's per-interval read of the archive.
		if got := apiRow(t, s, h.Series, i); got.Count != h.Count || got.SumUs != h.SumUs || *got.Start != *h.Start {
			t.Errorf("interval %d: live %+v, /intervals %+v", i, h, got)
		}
	}
	s.write(stream.Interval{Start: interval(4).Start, Duration: time.Second, Gap: true})
	for range 2 {
		if r := decodeRow(t, c.nextOf(t, live.TypeInterval)); !r.Gap || r.Count != 0 {
			t.Errorf("gap row %+v", r)
		}
	}
}

// apiRow reads interval i of a series with GET /api/v1/series/{id}/intervals.
func apiRow(t *testing.T, s *server, id int64, i int) row {
	t.Helper()
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/series/%d/intervals?resolution=raw", s.url, id), nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Intervals []row }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	want := interval(i).Start.Format(time.RFC3339Nano)
	for _, r := range body.Intervals {
		if r.Start != nil && *r.Start == want {
			return r
		}
	}
	t.Fatalf("series %d: no interval at %s in %+v", id, want, body.Intervals)
	return row{}
}

// TestResumeReplaysMissed: a client that reconnects with Last-Event-ID
// gets the intervals written while it was away, from the archive, then
// the live ones, each once.
func TestResumeReplaysMissed(t *testing.T) {
	s := startServer(t, live.Options{})
	s.write(interval(0))
	c := s.connect("", "")
	s.write(interval(1))
	s.write(interval(2))
	evs := intervalEvents(t, c, 2)
	last := evs[len(evs)-1].ID
	if last != end(2) {
		t.Fatalf("last id %q, want %s", last, end(2))
	}
	c.resp.Body.Close()
	for i := 3; i <= 5; i++ {
		s.write(interval(i))
	}
	c = s.connect("", last)
	seen := map[string]bool{}
	var starts []string
	for {
		ev := c.next(t)
		if ev.Type == live.TypeReplayed {
			if ev.ID != end(5) {
				t.Errorf("replayed id %q, want %s", ev.ID, end(5))
			}
			s.write(interval(6))
			continue
		}
		if ev.Type != live.TypeInterval {
			continue
		}
		r := decodeRow(t, ev)
		k := fmt.Sprint(r.Series, *r.Start)
		if seen[k] {
			t.Errorf("series %d at %s sent twice", r.Series, *r.Start)
		}
		seen[k] = true
		starts = append(starts, *r.Start)
		if len(starts) == 8 {
			if ev.ID != end(6) {
				t.Errorf("last live id %q, want %s", ev.ID, end(6))
			}
			break
		}
	}
	for j, st := range starts {
		if want := interval(3 + j/2).Start.Format(time.RFC3339Nano); st != want {
			t.Errorf("event %d at %s, want %s", j, st, want)
		}
	}
}

// TestResumeBeyondReplayLimit: an id older than the replay limit gets a
// "lost" event naming what is not replayed.
func TestResumeBeyondReplayLimit(t *testing.T) {
	s := startServer(t, live.Options{Replay: 30 * time.Second})
	s.write(interval(0))
	c := s.connect("", live.FormatID(time.Now().Add(-time.Hour)))
	if ev := c.next(t); ev.Type != live.TypeLost || !strings.Contains(ev.Data, "replay limit") {
		t.Errorf("first event %+v, want lost", ev)
	}
	if ev := c.nextOf(t, live.TypeReplayed); ev.ID == "" {
		t.Errorf("replayed event without id: %+v", ev)
	}
}

// TestSlowClientDropped: a client that reads nothing is ended once its
// queue (Buffer intervals) is full, which never grows past the bound,
// and is told so; another client goes on.
func TestSlowClientDropped(t *testing.T) {
	const buffer = 8
	s := startServer(t, live.Options{Buffer: buffer, WriteStall: 5 * time.Second})
	iv := wideInterval(64) // many events an interval fill the socket buffers sooner
	s.write(iv)
	slow := dialStream(t, s) // sends its request, never reads
	fast := s.connect("", "")
	waitFor(t, "two streams", func() bool { return s.hub.Stats().Streams == 2 })
	iv.Source = "db01" // as the job names it
	var received atomic.Int64
	readerDone := make(chan struct{})
	go func() { // the fast client reads all it is sent
		defer close(readerDone)
		for ev := range fast.events {
			if ev.Type == live.TypeInterval {
				received.Add(1)
			}
			if ev.Type == live.TypeDropped {
				t.Errorf("the reading client was dropped")
			}
		}
	}()
	published := 0
	for s.hub.Stats().Dropped == 0 && published < 100_000 {
		iv.Start = iv.Start.Add(time.Second)
		s.hub.Publish(t.Context(), iv)
		published++
		if st := s.hub.Stats(); st.MaxQueued > buffer {
			t.Fatalf("a queue holds %d intervals, over its bound %d", st.MaxQueued, buffer)
		}
		// Publish no faster than the reading client reads.
		waitFor(t, "the reading client", func() bool { return received.Load() >= int64(len(iv.Series)*(published-buffer/2)) })
	}
	st := s.hub.Stats()
	if st.Dropped != 1 || st.Streams != 1 || st.Buffer != buffer {
		t.Fatalf("after %d intervals: %+v, want the slow stream dropped and the other kept", published, st)
	}
	// The slow client, reading at last, finds the dropped event and the
	// end of the response.
	_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got strings.Builder
	buf := make([]byte, 64<<10)
	for !strings.Contains(got.String(), "event: dropped") || !strings.HasSuffix(got.String(), "\r\n0\r\n\r\n") {
		n, err := slow.Read(buf)
		if err != nil {
			t.Fatalf("the slow stream: %v; read %d bytes ending %q", err, got.Len(), tail(got.String()))
		}
		got.Write(buf[:n])
	}
	s.shutdown()
	<-readerDone
	if n, want := received.Load(), int64(len(iv.Series)*published); n != want {
		t.Errorf("the reading client got %d of %d events", n, want)
	}
	t.Logf("slow client dropped after %d intervals", published)
}

func tail(s string) string { return s[max(0, len(s)-200):] }

// wideInterval is one second of n histogram series.
func wideInterval(n int) stream.Interval {
	iv := interval(0)
	iv.Means = nil
	for i := range n {
		h := hist.NewExact(hist.Microsecond, 0)
		_ = h.Record(float64(100 + i))
		iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: fmt.Sprintf("event %d", i)}, Hist: h})
	}
	return iv
}

// dialStream requests a stream and reads nothing.
func dialStream(t *testing.T, s *server) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", live.Path, s.token)
	return conn
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: timed out", what)
		}
	}
}

// TestStreamCap: streams beyond MaxStreams are refused with 503.
func TestStreamCap(t *testing.T) {
	s := startServer(t, live.Options{MaxStreams: 2})
	s.connect("", "")
	s.connect("?series=log*", "")
	resp := s.get("", "", true)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "too many live streams") {
		t.Errorf("third stream: %d %s %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// TestStreamRefusals: no credential, a bad glob, a bad id, a bad
// Last-Event-ID.
func TestStreamRefusals(t *testing.T) {
	s := startServer(t, live.Options{})
	for _, tc := range []struct {
		query, lastID string
		token         bool
		status        int
	}{
		{"", "", false, http.StatusUnauthorized},
		{"?series=%5Bx", "", true, http.StatusBadRequest},
		{"?id=0", "", true, http.StatusBadRequest},
		{"?id=x", "", true, http.StatusBadRequest},
		{"?series=" + strings.Repeat("a", 1025), "", true, http.StatusBadRequest},
		{"?id=" + strings.Repeat("1,", 1001) + "1", "", true, http.StatusBadRequest},
		{"", "yesterday", true, http.StatusBadRequest},
	} {
		resp := s.get(tc.query, tc.lastID, tc.token)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%q Last-Event-ID %q: %d %s %s, want %d", tc.query, tc.lastID, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status)
		}
	}
}

// TestFilterHeartbeatAndJobs: a stream sends only its series (by glob or
// id), heartbeats while idle, and the job's state changes.
func TestFilterHeartbeatAndJobs(t *testing.T) {
	s := startServer(t, live.Options{Heartbeat: 20 * time.Millisecond})
	s.write(interval(0))
	byGlob := s.connect("?series=log+file*", "")
	byID := s.connect("?id=2", "")
	s.write(interval(1))
	g, i := decodeRow(t, byGlob.nextOf(t, live.TypeInterval)), decodeRow(t, byID.nextOf(t, live.TypeInterval))
	if g.Series != 1 || g.Count != 3 || i.Series != 2 || i.Count != 11 {
		t.Errorf("glob stream got %+v, id stream %+v", g, i)
	}
	s.write(interval(2))
	if g := decodeRow(t, byGlob.nextOf(t, live.TypeInterval)); g.Series != 1 {
		t.Errorf("glob stream got series %d", g.Series)
	}
	s.feed <- stream.Interval{Source: failSource}
	for ev := byID.nextOf(t, live.TypeJob); !strings.Contains(ev.Data, `"state":"restarting"`); ev = byID.nextOf(t, live.TypeJob) {
		t.Logf("job event %s", ev.Data) // its start, if polled after the stream began
	}
	time.Sleep(100 * time.Millisecond)
	byGlob.mu.Lock()
	defer byGlob.mu.Unlock()
	if byGlob.comments == 0 {
		t.Error("no heartbeat in 100 ms at a 20 ms period")
	}
}

// TestShutdownEndsStreams: stopping the server ends every stream with a
// "shutdown" event, at once rather than at Shutdown's timeout.
func TestShutdownEndsStreams(t *testing.T) {
	s := startServer(t, live.Options{})
	c := s.connect("", "")
	began := time.Now()
	s.shutdown()
	if ev := c.nextOf(t, live.TypeShutdown); !strings.Contains(ev.Data, "stopping") {
		t.Errorf("shutdown event %+v", ev)
	}
	c.ended(t)
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("shutdown took %s", d)
	}
}

// TestRevokedTokenEndsStream: a stream's credential is checked again at
// every heartbeat; once revoked, the stream ends.
func TestRevokedTokenEndsStream(t *testing.T) {
	s := startServer(t, live.Options{Heartbeat: 20 * time.Millisecond})
	c := s.connect("", "")
	if err := s.store.RevokeToken(t.Context(), auth.LocalActor(), s.tokenID); err != nil {
		t.Fatal(err)
	}
	c.nextOf(t, live.TypeUnauthorized)
	c.ended(t)
}

// TestMaxAgeEndsStream: a stream ends at Options.MaxAge with "reconnect".
func TestMaxAgeEndsStream(t *testing.T) {
	s := startServer(t, live.Options{MaxAge: 50 * time.Millisecond})
	c := s.connect("", "")
	c.nextOf(t, live.TypeReconnect)
	c.ended(t)
}
