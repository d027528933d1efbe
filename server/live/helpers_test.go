package live_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/server/api"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/server/live"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// server is latscope serve assembled in-process as driver.Serve does:
// one job (db01) whose source emits what the test feeds it, the
// archive behind live.Publishing, the router of api.RegisterServe, a
// real HTTP server on loopback, and a viewer's token.
type server struct {
	t       *testing.T
	arch    *archive.Archive
	hub     *live.Hub
	srv     *http.Server
	url     string
	token   string
	tokenID string
	store   *auth.Store
	feed    chan stream.Interval
	// fed receives each interval once the job wrote (and published) it.
	fed    chan stream.Interval
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func startServer(t *testing.T, opts live.Options) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{t: t, feed: make(chan stream.Interval), fed: make(chan stream.Interval, 1), cancel: cancel}
	dir := t.TempDir()
	store, err := auth.OpenPath(ctx, filepath.Join(dir, "auth.db"),
		auth.Options{Argon2: auth.Argon2Params{Time: 1, MemoryKiB: 64, Threads: 1, SaltLen: 16, KeyLen: 32}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AddUser(ctx, auth.LocalActor(), "viewer", auth.Viewer, "viewer-Pa55word-XYZ"); err != nil {
		t.Fatal(err)
	}
	tok, err := store.CreateToken(ctx, auth.LocalActor(), "viewer", "live", auth.Viewer, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s.token, s.tokenID, s.store = tok.Secret, tok.ID, store
	if s.arch, err = archive.Open(filepath.Join(dir, "data"), archive.Options{}); err != nil {
		t.Fatal(err)
	}
	s.hub = live.NewHub(s.arch, opts)
	job := jobs.Job{Name: "db01", Source: "test:", Interval: time.Second,
		Open: func(context.Context, source.Link) (source.Source, error) { return feedSource{s.feed}, nil }}
	runner, err := jobs.NewRunner([]jobs.Job{job}, notify{live.Publishing(s.arch, s.hub), s.fed}, jobs.DefaultBackoff(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rt := httpsec.NewRouter(store, httpsec.Config{})
	api.RegisterServe(rt, api.Data{Archive: s.arch, Jobs: runner.Status, Live: s.hub})
	h, err := rt.Handler()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.url = "http://" + ln.Addr().String()
	s.srv = httpsec.NewServer(h, httpsec.DefaultTimeouts(), nil, slog.New(slog.DiscardHandler))
	s.srv.RegisterOnShutdown(s.hub.Close)
	s.done.Go(func() { _ = s.srv.Serve(ln) })
	s.done.Go(func() { runner.Run(ctx) })
	s.done.Go(func() { s.hub.WatchJobs(ctx, runner.Status, 20*time.Millisecond) })
	t.Cleanup(func() {
		s.shutdown()
		s.arch.Close()
		store.Close()
	})
	return s
}

// shutdown stops the server as driver.Serve does, then the job.
func (s *server) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	s.cancel()
	s.done.Wait()
}

// write makes the job emit iv and waits until it is archived and published.
func (s *server) write(iv stream.Interval) {
	s.t.Helper()
	s.feed <- iv
	select {
	case <-s.fed:
	case <-time.After(10 * time.Second):
		s.t.Fatal("the job did not write its interval")
	}
}

// feedSource emits the intervals sent on its channel.
type feedSource struct{ feed chan stream.Interval }

func (feedSource) Name() string { return "test" }

func (f feedSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case iv := <-f.feed:
			if iv.Source == failSource {
				return errors.New("the test's source failed")
			}
			if err := emit(iv); err != nil {
				return err
			}
		}
	}
}

// failSource as an interval's source makes the test's source fail.
const failSource = "fail"

// notify tells the test when an interval went through.
type notify struct {
	jobs.Writer
	fed chan stream.Interval
}

func (n notify) Write(ctx context.Context, iv stream.Interval) error {
	err := n.Writer.Write(ctx, iv)
	if err == nil {
		n.fed <- iv
	}
	return err
}

// base is the start of the test's first interval: recent, within the
// hub's replay limit.
var base = time.Now().Add(-time.Minute).Truncate(time.Second).UTC()

// interval i is one second of a histogram series and a mean series.
func interval(i int) stream.Interval {
	h := hist.NewExact(hist.Microsecond, 0)
	for _, v := range []float64{180, 250, 900 * float64(i+1)} {
		_ = h.Record(v)
	}
	return stream.Interval{Start: base.Add(time.Duration(i) * time.Second), Duration: time.Second,
		Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}},
		Means:  []stream.SeriesMean{{Key: stream.Key{Event: "db file scattered read"}, Count: float64(10 + i), Sum: 12000, Unit: hist.Microsecond}}}
}

func end(i int) string { return live.FormatID(interval(i).End()) }

// event is one Server-Sent Event as a client reads it.
type event struct {
	ID, Type, Data string
}

// client is an SSE client reading one stream.
type client struct {
	resp   *http.Response
	events chan event
	// comments counts heartbeat lines.
	mu       sync.Mutex
	comments int
	err      chan error // the end of the stream
}

// connect opens a stream with the server's token (if auth) and a
// Last-Event-ID (if set); the response must be 200.
func (s *server) connect(query, lastID string) *client {
	s.t.Helper()
	resp := s.get(query, lastID, true)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("GET %s: %d %s", query, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		s.t.Fatalf("Content-Type %q", ct)
	}
	c := &client{resp: resp, events: make(chan event, 1024), err: make(chan error, 1)}
	go c.read()
	s.t.Cleanup(func() { resp.Body.Close() })
	return c
}

func (s *server) get(query, lastID string, withToken bool) *http.Response {
	s.t.Helper()
	req, err := http.NewRequest("GET", s.url+live.Path+query, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if withToken {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

func (c *client) read() {
	r := bufio.NewReader(c.resp.Body)
	var ev event
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			close(c.events)
			c.err <- err
			return
		}
		line = strings.TrimSuffix(line, "\n")
		name, value, _ := strings.Cut(line, ": ")
		switch {
		case line == "":
			if ev != (event{}) {
				c.events <- ev
			}
			ev = event{}
		case strings.HasPrefix(line, ":"):
			c.mu.Lock()
			c.comments++
			c.mu.Unlock()
		case name == "id":
			ev.ID = value
		case name == "event":
			ev.Type = value
		case name == "data":
			ev.Data += value
		}
	}
}

// next returns the next event, failing after a while.
func (c *client) next(t *testing.T) event {
	t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok {
			t.Fatalf("the stream ended: %v", <-c.err)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return event{}
}

// nextOf skips events of other types (job events) up to one of typ.
func (c *client) nextOf(t *testing.T, typ string) event {
	t.Helper()
	for {
		if ev := c.next(t); ev.Type == typ {
			return ev
		}
	}
}

// ended waits for the end of the stream.
func (c *client) ended(t *testing.T) {
	t.Helper()
	for {
		select {
		case _, ok := <-c.events:
			if !ok {
				if err := <-c.err; !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "closed") {
					t.Logf("stream ended with %v", err)
				}
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the stream did not end within 10 s")
		}
	}
}
