package main

import (
	"bufio"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeLiveEndToEnd follows a growing file with `latscope serve` and
// reads GET /api/v1/live as a client would: intervals arrive as the file
// grows, a reconnection with Last-Event-ID replays what was written
// meanwhile, once, and SIGTERM ends the stream with a shutdown event.
func TestServeLiveEndToEnd(t *testing.T) {
	dir := t.TempDir()
	records := restampedRecords(t)
	waits := filepath.Join(dir, "waits.txt")
	if err := os.WriteFile(waits, []byte(strings.Join(records[:3], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "--data", filepath.Join(dir, "data"), "--listen", freePort(t), waits)
	token := viewerToken(t, srv)

	stream := openLive(t, srv.base, token, "")
	appendRecords(t, waits, records[3:6])
	first := stream.intervals(t, 3, true)
	stream.body.Close()

	appendRecords(t, waits, records[6:9])
	api := &apiClient{t: t, base: srv.base, token: token, bodies: &strings.Builder{}}
	for deadline := time.Now().Add(10 * time.Second); api.jobs()[waits].Intervals < 7; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the job did not write the appended records: %+v", api.jobs())
		}
	}
	stream = openLive(t, srv.base, token, first[len(first)-1].id)
	replayed := stream.intervals(t, 3, false) // ids come with the replayed event
	if ev, want := stream.nextOf(t, "replayed"), windowEnd(t, replayed[2]); ev.id != want {
		t.Errorf("replayed event %+v: want the id %s, the last window's end", ev, want)
	}
	seen := map[string]bool{}
	for _, ev := range append(first, replayed...) {
		if seen[ev.data] {
			t.Errorf("sent twice: %s", ev.data)
		}
		seen[ev.data] = true
	}

	srv.cmd.Process.Signal(syscall.SIGTERM)
	stream.nextOf(t, "shutdown")
	<-srv.done
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, srv.stderr())
	}
}

func appendRecords(t *testing.T, file string, records []string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(records, "")); err != nil {
		t.Fatal(err)
	}
}

// liveStream is an open GET /api/v1/live.
type liveStream struct {
	body   interface{ Close() error }
	events chan sse
}

type sse struct{ id, typ, data string }

func openLive(t *testing.T, base, token, lastID string) *liveStream {
	t.Helper()
	return openSSE(t, base+"/api/v1/live", token, lastID)
}

// openSSE opens an event stream (the live intervals, a run's events).
func openSSE(t *testing.T, url, token, lastID string) *liveStream {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: %s %s", url, resp.Status, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { resp.Body.Close() })
	s := &liveStream{body: resp.Body, events: make(chan sse, 64)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sse
		for sc.Scan() {
			name, value, _ := strings.Cut(sc.Text(), ": ")
			switch name {
			case "":
				if ev.typ != "" {
					s.events <- ev
				}
				ev = sse{}
			case "id":
				ev.id = value
			case "event":
				ev.typ = value
			case "data":
				ev.data = value
			}
		}
	}()
	return s
}

func (s *liveStream) next(t *testing.T) sse {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return sse{}
}

// windowEnd is the end of an interval event's window, as an event id.
func windowEnd(t *testing.T, ev sse) string {
	t.Helper()
	var row struct {
		Start   string
		Seconds float64
	}
	if err := json.Unmarshal([]byte(ev.data), &row); err != nil {
		t.Fatal(err)
	}
	start, err := time.Parse(time.RFC3339Nano, row.Start)
	if err != nil {
		t.Fatal(err)
	}
	return start.Add(time.Duration(math.Round(row.Seconds * 1e9))).UTC().Format(time.RFC3339Nano)
}

// nextOf skips other events (jobs') up to one of typ.
func (s *liveStream) nextOf(t *testing.T, typ string) sse {
	t.Helper()
	for {
		if ev := s.next(t); ev.typ == typ {
			return ev
		}
	}
}

// intervals reads n interval events (skipping job events) of the file's
// one series; live ones carry their window's end as id.
func (s *liveStream) intervals(t *testing.T, n int, live bool) []sse {
	t.Helper()
	var out []sse
	for len(out) < n {
		ev := s.next(t)
		if ev.typ != "interval" {
			continue
		}
		if (ev.id != "") != live || !strings.Contains(ev.data, `"series":1,`) {
			t.Errorf("interval event %+v: want series 1, an id if live (%v)", ev, live)
		}
		out = append(out, ev)
	}
	return out
}
