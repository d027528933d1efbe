package archive

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCheckpointTruncatesALongWAL: a passive checkpoint copies the WAL but
// never rewinds it while writes keep coming (the load benchmark's
// simulated day grew it by 1 GB an hour), so past restartFrames the
// checkpointer truncates it.
func TestCheckpointTruncatesALongWAL(t *testing.T) {
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
	a.ckpt.checkpoint()
	if st, err := os.Stat(wal); err != nil || st.Size() != 0 {
		t.Fatalf("the WAL after the checkpoint: %d bytes (%v), want it truncated", st.Size(), err)
	}
	if got := readAll(t, a, Query{Resolution: Raw}); len(got) != 600 {
		t.Fatalf("read back %d intervals, want 600", len(got))
	}
}
