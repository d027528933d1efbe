package driver

import (
	"log/slog"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/internal/testkit/authtest"
	"github.com/latscope/latscope/internal/testkit/fakeclock"
	"github.com/latscope/latscope/server/auth"
)

// serve's maintenance prunes the audit log by age, on the users' store's
// clock: a year and a week later, the first event is gone.
func TestMaintenancePrunesTheAuditLog(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store := authtest.Store(t, clock.Now)
	arch, err := archive.Open(t.TempDir(), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	ctx := t.Context()
	by := auth.Actor{User: "admin", Remote: "127.0.0.1"}
	store.Audit(ctx, by, "job.create", "first", true, "")
	clock.Add(7 * 24 * time.Hour)
	store.Audit(ctx, by, "job.delete", "first", true, "")
	clock.Add(360 * 24 * time.Hour)
	maintenance{arch: arch, users: store, auditKeep: 365 * 24 * time.Hour, log: slog.New(slog.DiscardHandler)}.once(ctx, clock.Now())
	events, err := store.AuditLog(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Action != "job.delete" {
		t.Errorf("after maintenance: %+v, want the younger event alone", events)
	}
}
