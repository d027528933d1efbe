package lsr

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// TestOpenerReplaysWithTheEventFilter: the registered format is detected
// among others and hands --event to the replay (the recording is the
// real PyLatencyMap example's first two intervals).
func TestOpenerReplaysWithTheEventFilter(t *testing.T) {
	path := filepath.Join(testenv.RepoRoot(t), "recording", "testdata", "example-2.lsr")
	for _, events := range [][]string{nil, {"no such event"}} {
		op := &source.Opener{Formats: []source.Format{Format()}, Options: source.Options{Events: events}, Diag: input.NewDiagnostics(nil, 5)}
		src, err := op.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		var ivs []stream.Interval
		if err := src.Run(context.Background(), func(iv stream.Interval) error { ivs = append(ivs, iv); return nil }); err != nil {
			t.Fatal(err)
		}
		series := 0
		for _, iv := range ivs {
			series += len(iv.Series)
		}
		if len(ivs) != 2 || (events == nil) != (series > 0) {
			t.Errorf("events %v: %d intervals, %d series", events, len(ivs), series)
		}
	}
}
