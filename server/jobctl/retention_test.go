package jobctl

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/authtest"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/stream"
)

// retentions records what a manager gives the archive, as the archive
// keeps it (0 removes).
type retentions struct {
	mu   sync.Mutex
	keep map[string]time.Duration
}

func (r *retentions) set(name string, keep time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if keep <= 0 {
		delete(r.keep, name)
		return
	}
	r.keep[name] = keep
}

func (r *retentions) get() map[string]time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.keep)
}

// writeMinutes archives one window a minute of source from from to to.
func writeMinutes(t *testing.T, a *archive.Archive, source string, from, to time.Time) {
	t.Helper()
	var ivs []stream.Interval
	for at := from; at.Before(to); at = at.Add(time.Minute) {
		h := hist.NewExact(hist.Microsecond, 0)
		_ = h.Record(250)
		ivs = append(ivs, stream.Interval{Source: source, Start: at, Duration: time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}})
	}
	if err := a.WriteBatch(t.Context(), ivs); err != nil {
		t.Fatal(err)
	}
}

// firstRaw is the start of a source's first raw window (zero: none).
func firstRaw(t *testing.T, a *archive.Archive, source string) time.Time {
	t.Helper()
	var first time.Time
	err := a.Read(t.Context(), archive.Query{Sources: []string{source}, Resolution: archive.Raw}, func(iv stream.Interval) error {
		if first.IsZero() {
			first = iv.Start
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return first
}

// A job created through the API with a retention of 1h loses its data
// older than that at the archive's next maintenance, while another job's
// stays; a change applies the new retention; a deleted job's data keeps
// its retention, across a restart too, until a job of its name takes over.
func TestAPIJobRetention(t *testing.T) {
	dir := t.TempDir()
	arch, err := archive.Open(filepath.Join(dir, "data"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	users := authtest.Store(t, nil)
	s, err := startRetaining(t, dir, users, &windows{n: map[string]int{}}, arch.SetSourceKeep)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	// Paused: the test writes their data, at times of its choosing.
	st, err := s.m.Create(ctx, alice, config.Job{Name: "short", Source: "iotest:/var/tmp", Retention: "1h"}, true)
	if err != nil || st.Retention != "1h" {
		t.Fatalf("create with retention 1h: %+v, %v", st, err)
	}
	if st, err := s.m.Create(ctx, alice, config.Job{Name: "other", Source: "iotest:/tmp"}, true); err != nil || st.Retention != "" {
		t.Fatalf("create without retention: %+v, %v", st, err)
	}
	_, err = s.m.Create(ctx, alice, config.Job{Name: "bad", Source: "iotest:/tmp", Retention: "forever"}, true)
	if !errors.Is(err, auth.ErrInvalid) || !strings.Contains(err.Error(), `"bad": retention: keep "forever": want a duration such as 7d, 36h or 1d12h`) {
		t.Errorf("a bad retention: %v, want the configuration file's message", err)
	}

	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	now := t0.Add(3 * time.Hour)
	writeMinutes(t, arch, "short", t0, now)
	writeMinutes(t, arch, "other", t0, now)
	maintain := func(at time.Time) {
		t.Helper()
		if err := arch.Maintain(ctx, at); err != nil {
			t.Fatal(err)
		}
	}
	maintain(now)
	if got := firstRaw(t, arch, "short"); !got.Equal(now.Add(-time.Hour)) {
		t.Errorf("short's data from %v after maintenance, want from %v (1h)", got, now.Add(-time.Hour))
	}
	if got := firstRaw(t, arch, "other"); !got.Equal(t0) {
		t.Errorf("other's data from %v, want all of it from %v", got, t0)
	}

	if st, err := s.m.Update(ctx, alice, config.Job{Name: "short", Source: "iotest:/var/tmp", Retention: "30m"}); err != nil || st.Retention != "30m" {
		t.Fatalf("change to 30m: %+v, %v", st, err)
	}
	maintain(now)
	if got := firstRaw(t, arch, "short"); !got.Equal(now.Add(-30 * time.Minute)) {
		t.Errorf("short's data from %v after the change, want from %v (30m)", got, now.Add(-30*time.Minute))
	}

	// Deleted, its data stays and keeps its retention.
	if err := s.m.Delete(ctx, alice, "short"); err != nil {
		t.Fatal(err)
	}
	writeMinutes(t, arch, "short", t0, now)
	maintain(now)
	if got := firstRaw(t, arch, "short"); !got.Equal(now.Add(-30 * time.Minute)) {
		t.Errorf("a deleted job's data from %v, want from %v: its retention kept", got, now.Add(-30*time.Minute))
	}
	s.stop()

	kept := &retentions{keep: map[string]time.Duration{}}
	s, err = startRetaining(t, dir, users, &windows{n: map[string]int{}}, kept.set)
	if err != nil {
		t.Fatal(err)
	}
	if got := kept.get(); len(got) != 1 || got["short"] != 30*time.Minute {
		t.Errorf("retentions after the restart %v, want the deleted short's 30m alone", got)
	}
	if got := len(s.m.Status()); got != 1 {
		t.Errorf("%d jobs after the restart, want other alone: %+v", got, s.m.Status())
	}
	if _, err := s.m.Create(ctx, alice, config.Job{Name: "short", Source: "iotest:/tmp"}, true); err != nil {
		t.Fatal(err)
	}
	if got := kept.get(); len(got) != 0 {
		t.Errorf("retentions %v after a new short without one, want none", got)
	}
	events, err := users.AuditLog(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, e := range events {
		if e.Target == "short" && e.OK {
			details = append(details, e.Action+" "+e.Detail)
		}
	}
	want := []string{"job.create source=iotest:/tmp", "job.delete source=iotest:/var/tmp retention=30m",
		"job.change source=iotest:/var/tmp retention=30m", "job.create source=iotest:/var/tmp retention=1h"}
	if strings.Join(details, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit of short:\n%s\nwant\n%s", strings.Join(details, "\n"), strings.Join(want, "\n"))
	}
}

// schemaV1 is jobs.db as the first version of the store made it.
const schemaV1 = `CREATE TABLE IF NOT EXISTS jobs (
	name TEXT PRIMARY KEY,
	origin TEXT NOT NULL,
	source TEXT NOT NULL DEFAULT '',
	interval TEXT NOT NULL DEFAULT '',
	schedule TEXT NOT NULL DEFAULT '',
	password_env TEXT NOT NULL DEFAULT '',
	password_file TEXT NOT NULL DEFAULT '',
	paused INTEGER NOT NULL DEFAULT 0,
	changed_by TEXT NOT NULL DEFAULT '',
	changed_at INTEGER NOT NULL DEFAULT 0
);
PRAGMA user_version = 1;`

// A jobs.db of the first version opens with its jobs, without retention,
// and takes one; the file then says it is newer than version 1.
func TestStoreOpensVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schemaV1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO jobs(name, origin, source, interval, paused) VALUES ('net01', 'api', 'nettest:127.0.0.1:7880', '5s', 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ctx := context.Background()
	store, err := OpenStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	kept, err := store.load(ctx)
	if err != nil || len(kept) != 1 {
		t.Fatalf("version 1's rows: %+v, %v", kept, err)
	}
	if r := kept[0]; r.def.Name != "net01" || r.def.Interval != "5s" || !r.paused || r.origin != OriginAPI || r.def.Retention != "" {
		t.Errorf("version 1's job: %+v", r)
	}
	r := kept[0]
	r.def.Retention = "3d"
	if err := store.put(ctx, r, alice, time.Now()); err != nil {
		t.Fatal(err)
	}
	if kept, err := store.load(ctx); err != nil || kept[0].def.Retention != "3d" {
		t.Errorf("after storing a retention: %+v, %v", kept, err)
	}
	var version int
	if err := store.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != len(migrations) {
		t.Errorf("user_version %d, %v; want %d, so that a latscope knowing version 1 refuses the file", version, err, len(migrations))
	}
}
