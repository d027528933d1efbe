package archive

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCheckpointRestartsALongWAL: a checkpoint beside the writer copies
// the WAL but never lets it start over while writes keep coming (the load
// benchmark's simulated day grew it by 1 GB an hour), so past
// restartFrames the checkpointer copies it on the writer's connection and
// the next write starts the WAL over.
func TestCheckpointRestartsALongWAL(t *testing.T) {
	a, dir := openTemp(t, Options{})
	wal := filepath.Join(dir, DBName+"-wal")
	if a.ckpt == nil {
		t.Fatal("a writer has no checkpointer")
	}
	a.ckpt.restartFrames = 16
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := a.WriteBatch(ctx, synthetic("db", t0, 600, 20, realHistograms(t))); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(wal); err != nil || st.Size() < 16*4096 {
		t.Fatalf("the WAL after writing: %v %v, want more than 16 frames", st, err)
	}
	before := walFrames(t, a)
	a.ckpt.checkpoint()
	if err := a.WriteBatch(ctx, synthetic("db", t0.Add(time.Hour), 1, 20, realHistograms(t))); err != nil {
		t.Fatal(err)
	}
	if after := walFrames(t, a); after >= before { // a WAL only grows until it starts over
		t.Fatalf("the WAL held %d frames, %d after the checkpoint and one more write: want it started over", before, after)
	}
	if got := readAll(t, a, Query{Resolution: Raw}); len(got) != 601 {
		t.Fatalf("read back %d intervals, want 601", len(got))
	}
}

// walFrames is the number of frames in the WAL (a passive checkpoint's
// report, from the checkpointer's connection). A checkpoint that could
// not read the WAL at that moment (another connection held it: -1 frames,
// as a clean clone's CI once saw under load) is asked again.
func walFrames(t *testing.T, a *Archive) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var busy, frames, copied int
		if err := a.ckpt.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
			t.Fatal(err)
		}
		if frames >= 0 || time.Now().After(deadline) {
			return frames
		}
	}
}
