package prometheus

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// FuzzParse feeds any bytes through Detect and Run: no panic, no error,
// every interval valid with no negative counts.
func FuzzParse(f *testing.F) {
	// Real scrapes of a client_golang registry (see client_test.go) ...
	f.Add([]byte(scrapes(f)))
	// ... and synthetic ones for timestamps, growing edges and bad lines.
	f.Add([]byte("# TYPE z_seconds histogram\nz_seconds_bucket{le=\"1\"} 1 1700000000000\nz_seconds_bucket{le=\"+Inf\"} 1 1700000000000\n" +
		"z_seconds_bucket{le=\"0.5\"} 2 1700000010000\nz_seconds_bucket{le=\"1\"} 3 1700000010000\nz_seconds_bucket{le=\"+Inf\"} 4 1700000010000\nz_seconds_sum 9 1700000010000\n"))
	f.Add([]byte("# TYPE a_ms histogram\na_ms_bucket{x=\"a\\\"b\",le=\"-1\"} 0\na_ms_bucket{le=\"NaN\"} 1\na_ms_count 1e300\n# TYPE a_ms histogram\na_ms_sum -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		opts := source.Options{Location: time.UTC}
		switch len(data) % 3 {
		case 1:
			opts.Counts = source.CountsInterval
		case 2:
			opts.Unit, opts.Interval = hist.Nanosecond, time.Millisecond
		}
		src, err := Open(source.Input{Name: "fuzz", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		err = src.Run(context.Background(), func(iv stream.Interval) error {
			sourcetest.CheckInterval(t, iv)
			return nil
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
}
