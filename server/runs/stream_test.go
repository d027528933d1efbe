package runs

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/authtest"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
)

// streamServer serves the runs' routes of an executor whose runs are a
// shell script, to a viewer's token.
type streamServer struct {
	t              *testing.T
	e              *Executor
	store          *auth.Store
	url            string
	token, tokenID string
}

func startStreamServer(t *testing.T, opt Options, script string) *streamServer {
	t.Helper()
	opt.Binary = fakeLatscope(t, script)
	e := openExecutor(t, opt)
	store := authtest.Store(t, nil)
	ctx := context.Background()
	if _, err := store.AddUser(ctx, auth.LocalActor(), "viewer", auth.Viewer, "viewer-Pa55word-XYZ"); err != nil {
		t.Fatal(err)
	}
	tok, err := store.CreateToken(ctx, auth.LocalActor(), "viewer", "runs", auth.Viewer, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rt := httpsec.NewRouter(store, httpsec.Config{})
	Register(rt, e)
	h, err := rt.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		e.EndStreams() // as the server's shutdown does, else Close waits for them
		srv.Close()
	})
	return &streamServer{t: t, e: e, store: store, url: srv.URL, token: tok.Secret, tokenID: tok.ID}
}

func (s *streamServer) get(id int64, lastID string) *http.Response {
	s.t.Helper()
	req, err := http.NewRequest("GET", s.url+"/api/v1/runs/"+strconv.FormatInt(id, 10)+"/events", nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvent is one event as a client reads it.
type sseEvent struct{ ID, Type, Data string }

// connect opens a run's stream, which must answer 200, and returns its
// events, closed at the end of the stream.
func (s *streamServer) connect(id int64, lastID string) (<-chan sseEvent, *http.Response) {
	s.t.Helper()
	resp := s.get(id, lastID)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("GET events of run %d: %d %s %s", id, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	events := make(chan sseEvent, 1024)
	go func() {
		defer close(events)
		r := bufio.NewReader(resp.Body)
		var ev sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			name, value, _ := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
			switch name {
			case "":
				if ev != (sseEvent{}) {
					events <- ev
				}
				ev = sseEvent{}
			case "id":
				ev.ID = value
			case "event":
				ev.Type = value
			case "data":
				ev.Data += value
			}
		}
	}()
	return events, resp
}

// next returns the next event (ok false at the end of the stream).
func next(t *testing.T, events <-chan sseEvent) (sseEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-events:
		return ev, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return sseEvent{}, false
}

// streamed is what a client made of a stream's events.
type streamed struct {
	log    strings.Builder
	lastID string
	states []State
	types  []string
}

// take reads events until the stream ends or stop says so.
func (got *streamed) take(t *testing.T, events <-chan sseEvent, stop func(sseEvent) bool) {
	t.Helper()
	for {
		ev, ok := next(t, events)
		if !ok {
			return
		}
		got.types = append(got.types, ev.Type)
		switch ev.Type {
		case "state":
			var r Run
			if err := json.Unmarshal([]byte(ev.Data), &r); err != nil {
				t.Fatalf("state %q: %v", ev.Data, err)
			}
			got.states = append(got.states, r.State)
		case "log":
			var l logEvent
			if err := json.Unmarshal([]byte(ev.Data), &l); err != nil {
				t.Fatalf("log %q: %v", ev.Data, err)
			}
			if int(l.Offset) != got.log.Len() {
				t.Errorf("log event at offset %d after %d bytes", l.Offset, got.log.Len())
			}
			got.log.WriteString(l.Text)
			if want := strconv.Itoa(got.log.Len()); ev.ID != want {
				t.Errorf("log event id %q, want the offset after it, %s", ev.ID, want)
			}
			got.lastID = ev.ID
		}
		if stop != nil && stop(ev) {
			return
		}
	}
}

func (s *streamServer) logFile(id int64) string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.e.runDir(id), LogName))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// lines writes n numbered lines to the log, one every 20 ms.
const lines = `i=1; while [ $i -le 30 ]; do echo "line $i of 30" >&2; i=$((i+1)); sleep 0.02; done; echo '{}'`

func TestEventsFollowARunToItsEnd(t *testing.T) {
	s := startStreamServer(t, Options{}, lines)
	r := start(t, s.e, "iotest", iotestIn(s.e))
	events, _ := s.connect(r.ID, "")
	var got streamed
	got.take(t, events, nil)
	if len(got.states) < 2 || got.types[0] != "state" || got.states[len(got.states)-1] != Succeeded {
		t.Fatalf("states %v (events %v), want the current state first and the final last", got.states, got.types)
	}
	if last := got.types[len(got.types)-1]; last != "state" {
		t.Errorf("last event %q, want the final state", last)
	}
	if !strings.Contains(strings.Join(got.types, " "), "progress") {
		t.Errorf("no progress event in %v", got.types)
	}
	if file := s.logFile(r.ID); got.log.String() != file {
		t.Errorf("streamed log differs from the file:\n%s\n---\n%s", got.log.String(), file)
	}
}

func TestEventsResumeFromLastEventID(t *testing.T) {
	s := startStreamServer(t, Options{}, lines)
	r := start(t, s.e, "iotest", iotestIn(s.e))
	events, resp := s.connect(r.ID, "")
	var first streamed
	first.take(t, events, func(ev sseEvent) bool { return strings.Contains(first.log.String(), "line 5 of") })
	resp.Body.Close()
	// The client reconnects as EventSource does, with the last id it got.
	events, _ = s.connect(r.ID, first.lastID)
	var rest streamed
	rest.log.WriteString(first.log.String()) // offsets continue from there
	rest.take(t, events, nil)
	if rest.states[len(rest.states)-1] != Succeeded {
		t.Fatalf("states %v", rest.states)
	}
	if file := s.logFile(r.ID); rest.log.String() != file {
		t.Errorf("log across the reconnection differs from the file:\n%s\n---\n%s", rest.log.String(), file)
	}
}

func TestEventsOfAnEndedRun(t *testing.T) {
	s := startStreamServer(t, Options{}, `echo done >&2; echo '{}'`)
	r := start(t, s.e, "iotest", iotestIn(s.e))
	waitState(t, s.e, r.ID, Succeeded)
	file := s.logFile(r.ID)
	events, _ := s.connect(r.ID, "")
	var got streamed
	got.take(t, events, nil)
	if got.log.String() != file || strings.Join(got.types, " ") != "log state" || got.states[0] != Succeeded {
		t.Errorf("events %v, log %q, want the log then the final state", got.types, got.log.String())
	}
	// A client that had everything gets the final state alone.
	events, _ = s.connect(r.ID, strconv.Itoa(len(file)))
	got = streamed{}
	got.take(t, events, nil)
	if strings.Join(got.types, " ") != "state" {
		t.Errorf("events %v after the whole log, want the final state", got.types)
	}
}

func TestEventsRefusals(t *testing.T) {
	s := startStreamServer(t, Options{MaxStreams: 1}, `sleep 30`)
	check := func(resp *http.Response, status int, want string) {
		t.Helper()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status || !strings.Contains(string(body), want) {
			t.Errorf("%d %s, want %d %q", resp.StatusCode, body, status, want)
		}
	}
	check(s.get(99, ""), http.StatusNotFound, "run 99")
	r := start(t, s.e, "iotest", iotestIn(s.e))
	check(s.get(r.ID, "x"), http.StatusBadRequest, "Last-Event-ID")
	events, _ := s.connect(r.ID, "")
	if ev, _ := next(t, events); ev.Type != "state" {
		t.Fatalf("first event %+v", ev)
	}
	resp := s.get(r.ID, "")
	if resp.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After at the cap")
	}
	check(resp, http.StatusServiceUnavailable, "too many run event streams")
	s.e.EndStreams()
	var got streamed
	got.take(t, events, nil)
	if last := got.types[len(got.types)-1]; last != StreamShutdown {
		t.Errorf("events %v at shutdown, want it last", got.types)
	}
}

func TestEventsEndWhenTheTokenIsRevoked(t *testing.T) {
	s := startStreamServer(t, Options{StreamHeartbeat: 20 * time.Millisecond}, `sleep 30`)
	r := start(t, s.e, "iotest", iotestIn(s.e))
	events, _ := s.connect(r.ID, "")
	if ev, _ := next(t, events); ev.Type != "state" {
		t.Fatalf("first event %+v", ev)
	}
	if err := s.store.RevokeToken(context.Background(), auth.LocalActor(), s.tokenID); err != nil {
		t.Fatal(err)
	}
	var got streamed
	got.take(t, events, nil)
	if last := got.types[len(got.types)-1]; last != StreamUnauthorized {
		t.Errorf("events %v after the revocation, want it last", got.types)
	}
}

// A stream reads the log from the stored file up to each log event's
// end: what the feed dropped (its buffer was full) comes with the next
// event, nothing is sent twice, and a rune split between two writes is
// sent whole.
func TestEventsReadTheLogFromTheStoredFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogName)
	if err := os.WriteFile(path, []byte("0123456789abcdefé!"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	sse, err := httpsec.NewSSEWriter(rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &runStream{sse: sse, logPath: path, next: 2} // resumed from offset 2
	for _, ev := range []Event{
		{Type: EventLog, Offset: 0, Text: "0123"},
		{Type: EventLog, Offset: 10, Text: "abcdef"}, // 4-9 were dropped
		{Type: EventLog, Offset: 12, Text: "cd"},     // had
		{Type: EventLog, Offset: 16, Text: "\xc3"},   // half of é
		{Type: EventLog, Offset: 17, Text: "\xa9"},
		{Type: EventState, Run: &Run{State: Succeeded}}, // then the rest
	} {
		if err := s.send(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := sse.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `id: 4
event: log
data: {"offset":2,"text":"23"}

id: 16
event: log
data: {"offset":4,"text":"456789abcdef"}

id: 18
event: log
data: {"offset":16,"text":"é"}

id: 19
event: log
data: {"offset":18,"text":"!"}

event: state
`
	if got := rec.Body.String(); !strings.HasPrefix(got, want) {
		t.Errorf("stream:\n%s\nwant it to start with\n%s", got, want)
	}
}
