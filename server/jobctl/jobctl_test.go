package jobctl

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/authtest"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// windows counts what the runner writes, per job.
type windows struct {
	mu sync.Mutex
	n  map[string]int
}

func (w *windows) Write(_ context.Context, iv stream.Interval) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n[iv.Source]++
	return nil
}

func (w *windows) of(job string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[job]
}

// ticks emits a window every interval until stopped.
type ticks struct{ every time.Duration }

func (t ticks) Name() string { return "ticks" }

func (t ticks) Run(ctx context.Context, emit func(stream.Interval) error) error {
	tk := time.NewTicker(t.every)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case now := <-tk.C:
			if err := emit(stream.Interval{Start: now.Add(-t.every), Duration: t.every}); err != nil {
				return err
			}
		}
	}
}

// build stands for the server's: sources named broken: cannot be built.
func build(cj config.Job) (jobs.Job, error) {
	if strings.HasPrefix(cj.Source, "broken:") {
		return jobs.Job{}, errors.New("password_env: LATSCOPE_GONE is not set")
	}
	every := cj.Every
	return jobs.Job{Name: cj.Name, Source: RedactSource(cj.Source), Interval: every, Schedule: cj.Plan,
		Open: func(context.Context, source.Link) (source.Source, error) { return ticks{every: every}, nil }}, nil
}

// server is one life of a server: a runner, its manager, and the users'
// store shared by every life.
type server struct {
	m      *Manager
	runner *jobs.Runner
	stop   func()
}

func start(t *testing.T, dir string, users *auth.Store, out jobs.Writer, configured ...config.Job) (*server, error) {
	t.Helper()
	return startRetaining(t, dir, users, out, nil, configured...)
}

// startRetaining starts a server whose manager gives the jobs' retentions
// to retain.
func startRetaining(t *testing.T, dir string, users *auth.Store, out jobs.Writer, retain func(string, time.Duration), configured ...config.Job) (*server, error) {
	t.Helper()
	store, err := OpenStore(t.Context(), filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	runner, _ := jobs.NewRunner(nil, out, jobs.Backoff{Min: 20 * time.Millisecond, Max: 20 * time.Millisecond}, nil)
	var defs []jobs.Job
	for _, cj := range configured {
		if err := cj.Check(); err != nil {
			t.Fatal(err)
		}
		j, _ := build(cj)
		defs = append(defs, j)
	}
	m, err := New(t.Context(), runner, store, defs, Options{Build: build, Retain: retain, Audit: users})
	if err != nil {
		store.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { runner.Run(ctx); close(done) }()
	s := &server{m: m, runner: runner, stop: func() { cancel(); <-done; store.Close() }}
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			s.stop()
		}
	})
	return s, nil
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func state(t *testing.T, s *server, name string) jobs.Status {
	t.Helper()
	st, err := s.runner.Job(name)
	if err != nil {
		t.Fatalf("job %s: %v", name, err)
	}
	return st
}

var alice = auth.Actor{User: "alice", Role: auth.Admin, Remote: "192.0.2.7"}

// Jobs created through the API run, change, pause and are deleted; a
// restart brings back those created and every pause; the configuration's
// jobs cannot be changed or deleted, only paused.
func TestChangesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	users := authtest.Store(t, nil)
	out := &windows{n: map[string]int{}}
	cfg := config.Job{Name: "cfg", Source: "iotest:/var/tmp", Interval: "10ms"}
	s, err := start(t, dir, users, out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	st, err := s.m.Create(ctx, alice, config.Job{Name: "api1", Source: "nettest:127.0.0.1:7880", Interval: "10ms"}, false)
	if err != nil || st.Origin != OriginAPI || st.Interval != "10ms" {
		t.Fatalf("create: %+v, %v", st, err)
	}
	waitFor(t, "windows of the created job", func() bool { return out.of("api1") >= 3 })
	if _, err := s.m.Create(ctx, alice, config.Job{Name: "api1", Source: "iotest:/tmp"}, false); !errors.Is(err, auth.ErrExists) {
		t.Errorf("a second api1: %v, want ErrExists", err)
	}
	for _, bad := range []config.Job{{Name: "../x", Source: "iotest:/tmp"}, {Name: "Upper", Source: "iotest:/tmp"},
		{Name: "pw", Source: "postgres://u:s3cret-pw@db/app"}, {Name: "rel", Source: "iotest:/tmp", PasswordFile: "pw.txt"},
		{Name: "iv", Source: "iotest:/tmp", Interval: "fast"}, {Name: "env", Source: "iotest:/tmp", PasswordEnv: "A B"},
		{Name: "file", Source: "iotest:/tmp", PasswordFile: "/etc/x\n"}} {
		_, err := s.m.Create(ctx, alice, bad, false)
		if !errors.Is(err, auth.ErrInvalid) {
			t.Errorf("create %+v: %v, want ErrInvalid", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("the error repeats the password: %v", err)
		}
	}
	if _, err := s.m.Update(ctx, alice, config.Job{Name: "cfg", Source: "iotest:/tmp"}); !errors.Is(err, auth.ErrConflict) {
		t.Errorf("changing a configured job: %v, want ErrConflict", err)
	}
	if err := s.m.Delete(ctx, alice, "cfg"); !errors.Is(err, auth.ErrConflict) || !strings.Contains(err.Error(), "edit the file") {
		t.Errorf("deleting a configured job: %v, want ErrConflict saying to edit the file", err)
	}
	if _, err := s.m.Update(ctx, alice, config.Job{Name: "api1", Source: "nettest:127.0.0.1:7880", Interval: "20ms"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.m.Pause(ctx, alice, "api1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.m.Pause(ctx, alice, "cfg"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.m.Create(ctx, alice, config.Job{Name: "api2", Source: "iotest:/tmp"}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.m.Delete(ctx, alice, "api2"); err != nil {
		t.Fatal(err)
	}
	if err := s.m.Delete(ctx, alice, "api2"); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("deleting a deleted job: %v, want ErrNotFound", err)
	}
	s.stop()

	s, err = start(t, dir, users, out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.m.Status()); got != 2 {
		t.Fatalf("%d jobs after the restart, want cfg and api1: %+v", got, s.m.Status())
	}
	if st := state(t, s, "cfg"); st.State != jobs.Paused || st.Origin != OriginConfig {
		t.Errorf("configured job after restart: %+v, want paused", st)
	}
	if st := state(t, s, "api1"); st.State != jobs.Paused || st.Interval != "20ms" || st.Origin != OriginAPI {
		t.Errorf("API job after restart: %+v, want paused with its new interval", st)
	}
	before := out.of("api1")
	if _, err := s.m.Resume(ctx, alice, "api1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "windows after resume", func() bool { return out.of("api1") >= before+2 })
	if _, err := s.m.Resume(ctx, alice, "cfg"); err != nil {
		t.Fatal(err)
	}
	s.stop()

	// The configuration drops cfg: its pause row goes; a configured job
	// named like a job of the API stops the start, naming both.
	s, err = start(t, dir, users, out)
	if err != nil {
		t.Fatal(err)
	}
	s.stop()
	kept, _ := openAndLoad(t, dir)
	if len(kept) != 1 || kept[0].def.Name != "api1" {
		t.Errorf("rows %+v, want api1 alone", kept)
	}
	if _, err := start(t, dir, users, out, config.Job{Name: "api1", Source: "iotest:/tmp"}); err == nil || !strings.Contains(err.Error(), `job "api1" is in the configuration and was also created through the API`) {
		t.Errorf("a configured job shadowing an API job: %v", err)
	}
}

func openAndLoad(t *testing.T, dir string) ([]record, error) {
	t.Helper()
	store, err := OpenStore(t.Context(), filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	return store.load(t.Context())
}

// Every change is audited with who, from where, the job and its source
// without a password; a refused change too.
func TestChangesAreAudited(t *testing.T) {
	users := authtest.Store(t, nil)
	s, err := start(t, t.TempDir(), users, &windows{n: map[string]int{}}, config.Job{Name: "cfg", Source: "iotest:/var/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s.m.Create(ctx, alice, config.Job{Name: "db", Source: "postgres://latscope@db01/app", PasswordEnv: "LATSCOPE_DB_PW"}, false)
	s.m.Create(ctx, alice, config.Job{Name: "leak", Source: "postgres://latscope:s3cret-pw@db01/app"}, false)
	s.m.Update(ctx, alice, config.Job{Name: "db", Source: "postgres://latscope@db02/app", PasswordEnv: "LATSCOPE_DB_PW"})
	s.m.Pause(ctx, alice, "cfg")
	s.m.Resume(ctx, alice, "cfg")
	s.m.Delete(ctx, alice, "db")
	s.m.Pause(ctx, alice, "x\x1b[2Jy")
	events, err := users.AuditLog(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Actor != "alice" || e.Remote != "192.0.2.7" || e.At.IsZero() {
			t.Errorf("event %+v: want alice from 192.0.2.7, with its time", e)
		}
		if strings.Contains(e.Detail, "s3cret-pw") {
			t.Errorf("event %+v carries the password", e)
		}
		got = append(got, e.Action+" "+e.Target+" "+map[bool]string{true: "ok", false: "refused"}[e.OK])
	}
	want := []string{"job.create db ok", "job.create leak refused", "job.change db ok", "job.pause cfg ok", "job.resume cfg ok", "job.delete db ok",
		`job.pause "x\x1b[2Jy" refused`}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("audit %v, want %v", got, want)
	}
	if d := events[len(events)-1].Detail; d != "source=postgres://latscope@db01/app password_env=LATSCOPE_DB_PW" {
		t.Errorf("create's detail %q", d)
	}
	if d := events[len(events)-2].Detail; !strings.Contains(d, "source=postgres://latscope@db01/app") || !strings.Contains(d, "error=invalid request: the source has a password") {
		t.Errorf("refused create's detail %q", d)
	}
}

// A kept job that cannot be built any more (its password variable gone)
// does not stop the server: it shows its error and can be deleted.
func TestBrokenKeptJobStillStarts(t *testing.T) {
	dir := t.TempDir()
	users := authtest.Store(t, nil)
	store, err := OpenStore(t.Context(), filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	store.put(t.Context(), record{def: config.Job{Name: "gone", Source: "broken:x"}, origin: OriginAPI}, alice, time.Now())
	store.Close()
	s, err := start(t, dir, users, &windows{n: map[string]int{}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the broken job's error", func() bool {
		return strings.Contains(state(t, s, "gone").LastError, "LATSCOPE_GONE is not set")
	})
	if err := s.m.Delete(t.Context(), alice, "gone"); err != nil {
		t.Fatal(err)
	}
}

func TestRedactSource(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://latscope:s3cret@db01:5432/app": "postgres://latscope@db01:5432/app",
		"postgres://latscope:s3cret@db01:bad/app":  "postgres://latscope@db01:bad/app",
		"mysql://u:p%zz@h/":                        "mysql://u@h/",
		"mysql://u:s3cret@h?x=1":                   "mysql://u@h?x=1",
		"postgres://latscope@db01/app":             "postgres://latscope@db01/app",
		"postgres://latscope@db01:bad/app":         "postgres://latscope@db01:bad/app",
		"/var/log/app.log":                         "/var/log/app.log",
		"nettest:127.0.0.1:7880":                   "nettest:127.0.0.1:7880",
		"oracle://u:pw@h/svc?x=a@b":                "oracle://u@h/svc?x=a@b",
	} {
		if got := RedactSource(in); got != want {
			t.Errorf("RedactSource(%q) = %q; want %q", in, got, want)
		}
		if URIPassword(in) != (in != want) {
			t.Errorf("URIPassword(%q) = %v", in, URIPassword(in))
		}
	}
}

func FuzzRedactSource(f *testing.F) {
	for _, s := range []string{"postgres://latscope:s3cret@db01:5432/app", "postgres://u:pw@h:bad/x", "mysql://u:p%zz@h/", "/var/log/a", "a://b:c@d@e/f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := RedactSource(s)
		if RedactSource(r) != r {
			t.Fatalf("RedactSource(%q) = %q, which still has a password (%q)", s, r, RedactSource(r))
		}
	})
}
