package remotewrite

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func openTestSpool(t *testing.T, dir string, shards int, limits SpoolLimits) *Spool {
	t.Helper()
	s, err := OpenSpool(dir, shards, limits, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func nextBody(t *testing.T, s *Spool, shard int) (*batch, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	b, body, err := s.Next(ctx, shard)
	if err != nil {
		t.Fatalf("shard %d: no batch: %v", shard, err)
	}
	return b, string(body)
}

// A crash while a batch is being sent (taken, never acknowledged) leaves
// it spooled: reopening sends it again, in order, before what follows.
func TestSpoolCrashMidSendResends(t *testing.T) {
	dir := t.TempDir()
	s := openTestSpool(t, dir, 2, SpoolLimits{})
	for _, body := range []string{"a1", "a2", "a3"} {
		if err := s.Append(1, 10, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(0, 5, []byte("b1")); err != nil {
		t.Fatal(err)
	}
	b, body := nextBody(t, s, 1)
	if body != "a1" {
		t.Fatalf("first batch of shard 1 = %q, want a1", body)
	}
	s.Done(b) // acknowledged
	if _, body = nextBody(t, s, 1); body != "a2" {
		t.Fatalf("second batch = %q, want a2", body)
	}
	// Crash: a2 in flight, a half-written batch left behind.
	if err := os.WriteFile(filepath.Join(dir, "0000000000000009-001-1-1.rw.tmp"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}

	s = openTestSpool(t, dir, 2, SpoolLimits{})
	if n, _ := s.Pending(); n != 3 {
		t.Fatalf("after reopening: %d batches pending, want 3 (a2, a3, b1)", n)
	}
	for _, want := range []string{"a2", "a3"} {
		b, body := nextBody(t, s, 1)
		if body != want {
			t.Fatalf("resent %q, want %q", body, want)
		}
		s.Done(b)
	}
	if _, body := nextBody(t, s, 0); body != "b1" {
		t.Fatalf("shard 0 resent %q, want b1", body)
	}
	if err := s.Append(1, 1, []byte("a4")); err != nil {
		t.Fatal(err)
	}
	if _, body := nextBody(t, s, 1); body != "a4" {
		t.Fatalf("a batch after the reopening = %q, want a4", body)
	}
	if _, err := os.Stat(filepath.Join(dir, "0000000000000009-001-1-1.rw.tmp")); !os.IsNotExist(err) {
		t.Errorf("the half-written batch is still there: %v", err)
	}
}

// Fewer shards after a restart: batches of the missing shards go to
// shard mod N, still in their order.
func TestSpoolReopenWithFewerShards(t *testing.T) {
	dir := t.TempDir()
	s := openTestSpool(t, dir, 4, SpoolLimits{})
	for _, body := range []string{"x1", "x2"} {
		if err := s.Append(3, 1, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	s = openTestSpool(t, dir, 2, SpoolLimits{})
	for _, want := range []string{"x1", "x2"} {
		b, body := nextBody(t, s, 1)
		if body != want {
			t.Fatalf("got %q, want %q", body, want)
		}
		s.Done(b)
	}
}

// Over max_spool the oldest batches go first, counted; a batch being sent
// is left to its sender.
func TestSpoolSizeCapDropsOldest(t *testing.T) {
	s := openTestSpool(t, t.TempDir(), 1, SpoolLimits{MaxBytes: 25})
	for _, body := range []string{"0123456789", "abcdefghij"} {
		if err := s.Append(0, 7, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(0, 3, []byte("ABCDEFGHIJ")); err != nil {
		t.Fatal(err)
	}
	if d := s.Dropped(); d.Batches != 1 || d.Samples != 7 {
		t.Errorf("dropped %+v, want 1 batch of 7 samples", d)
	}
	if n, bytes := s.Pending(); n != 2 || bytes != 20 {
		t.Errorf("pending %d batches, %d bytes; want 2, 20", n, bytes)
	}
	b, body := nextBody(t, s, 0)
	if body != "abcdefghij" {
		t.Fatalf("oldest kept batch = %q, want abcdefghij", body)
	}
	// In flight: not dropped even when the cap is hit again.
	if err := s.Append(0, 1, []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if d := s.Dropped(); d.Batches != 2 {
		t.Errorf("dropped %d batches, want 2 (the one after the in-flight one)", d.Batches)
	}
	s.Done(b)
}

// Past max_age a batch is dropped, whether waiting (at Next) or being
// retried (Expired ends its retries).
func TestSpoolAgeCap(t *testing.T) {
	dir := t.TempDir()
	s := openTestSpool(t, dir, 1, SpoolLimits{MaxAge: time.Minute})
	now := time.Now()
	s.now = func() time.Time { return now }
	for _, body := range []string{"old", "new"} {
		if err := s.Append(0, 2, []byte(body)); err != nil {
			t.Fatal(err)
		}
		now = now.Add(45 * time.Second)
	}
	// now: old made 90 s ago, new 45 s ago
	b, body := nextBody(t, s, 0)
	if body != "new" {
		t.Fatalf("got %q, want the old batch dropped and new sent", body)
	}
	if d := s.Dropped(); d.Batches != 1 || d.Samples != 2 {
		t.Errorf("dropped %+v, want 1 batch of 2 samples", d)
	}
	if s.Expired(b) {
		t.Error("a batch of 45 s is not expired under max_age 1m")
	}
	now = now.Add(30 * time.Second)
	if !s.Expired(b) {
		t.Error("a batch of 75 s is expired under max_age 1m")
	}
	s.Drop(b, "test")
	if d := s.Dropped(); d.Batches != 2 {
		t.Errorf("dropped %d batches, want 2", d.Batches)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("files left in the spool: %v", entries)
	}
}
