package terminal

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
)

// ttyTestEnv runs TestTTYLive: it takes over the controlling terminal, so
// it only runs when asked, under a pseudo-terminal that types the keys
// (n, then q).
const ttyTestEnv = "LATSCOPE_TTY_TEST"

// TestTTYLive draws a live view on the controlling terminal in raw mode,
// full screen, and waits for the keys n and q.
func TestTTYLive(t *testing.T) {
	if os.Getenv(ttyTestEnv) != "1" {
		testenv.SkipAlways(t, "needs a terminal that types keys (%s=1 under a pseudo-terminal)", ttyTestEnv)
	}
	tty, err := OpenTTY()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tty.Restore(); err != nil {
			t.Error(err)
		}
		if err := tty.Restore(); err != nil {
			t.Errorf("second Restore: %v", err)
		}
	}()
	if w, h := tty.Size(); w <= 0 || h <= 0 {
		t.Errorf("size %d×%d", w, h)
	}
	out, err := os.OpenFile(ttyPath, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	feed := make(chan stream.Interval, 16)
	for _, iv := range threeSeries(t, 5) {
		feed <- iv
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = Run(ctx, feed, Options{Out: out, Keys: tty, Size: tty.Size, FullScreen: true})
	if err != nil {
		t.Fatalf("Run: %v (the keys n and q never came?)", err)
	}
}
