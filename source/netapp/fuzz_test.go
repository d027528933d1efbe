package netapp

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// FuzzParse feeds any bytes through Detect and Run: no panic, every emitted
// interval valid with no negative counts, intervals in time order.
func FuzzParse(f *testing.F) {
	// Seeds are the synthetic sessions of the tests (no real sample exists).
	f.Add([]byte(sessionInput()))
	f.Add([]byte(block("vol1", readLat, read1) + block("vol1", readLat, counts{1: 4})))
	f.Add([]byte("stats show -i 2\nvolume:a:b:c_latency.<20us:1\nvolume:a:b:c_latency.>120s:1e308\n" +
		"volume:a:b:c_latency.<20us:1\nvolume:a:b:c_latency.>120s:1e308\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		opts := source.Options{}
		if len(data)%2 == 1 {
			opts.Counts = source.CountsInterval
		}
		src, err := Open(source.Input{Name: "fuzz", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		var prev *stream.Interval
		err = src.Run(context.Background(), func(iv stream.Interval) error {
			sourcetest.CheckInterval(t, iv)
			if prev != nil && iv.Start.Before(prev.End()) {
				t.Fatalf("interval at %s overlaps the previous one ending %s", iv.Start, prev.End())
			}
			if iv.Duration > 366*24*time.Hour {
				t.Fatalf("interval of %s", iv.Duration)
			}
			prev = &iv
			return nil
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
}
