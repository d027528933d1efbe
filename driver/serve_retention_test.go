package driver

import (
	"log/slog"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/authtest"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/stream"
)

// A job created through serve's API with a retention of 1h loses its
// data older than that in the next maintenance round; another job's data
// stays.
func TestServeAPIJobRetention(t *testing.T) {
	dir := t.TempDir()
	arch, err := archive.Open(dir, archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	users := authtest.Store(t, nil)
	logger := slog.New(slog.DiscardHandler)
	ctx := t.Context()
	_, control, jobStore, err := openJobs(ctx, dir, nil, arch, arch.SetSourceKeep, jobs.DefaultBackoff(), users, &httpsec.Redactor{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer jobStore.Close()
	admin := auth.Actor{User: "admin", Role: auth.Admin, Remote: "127.0.0.1"}
	for _, def := range []config.Job{{Name: "short", Source: "iotest:/var/tmp", Retention: "1h"}, {Name: "other", Source: "iotest:/var/tmp"}} {
		if _, err := control.Create(ctx, admin, def, true); err != nil { // paused: the test writes their data
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	now := t0.Add(3 * time.Hour)
	var ivs []stream.Interval
	for at := t0; at.Before(now); at = at.Add(time.Minute) {
		for _, job := range []string{"short", "other"} {
			h := hist.NewExact(hist.Microsecond, 0)
			_ = h.Record(250)
			ivs = append(ivs, stream.Interval{Source: job, Start: at, Duration: time.Second,
				Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}})
		}
	}
	if err := arch.WriteBatch(ctx, ivs); err != nil {
		t.Fatal(err)
	}
	maintenance{arch: arch, users: users, auditKeep: config.DefaultAuditKeep, log: logger}.once(ctx, now)
	for job, first := range map[string]time.Time{"short": now.Add(-time.Hour), "other": t0} {
		var got []time.Time
		err := arch.Read(ctx, archive.Query{Sources: []string{job}, Resolution: archive.Raw}, func(iv stream.Interval) error {
			got = append(got, iv.Start)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !got[0].Equal(first) {
			t.Errorf("%s: %d windows after maintenance, want from %v", job, len(got), first)
		}
	}
}
