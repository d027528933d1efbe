package pylatencymap

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

var realFiles = []string{
	"pylatencymap/example_latency_data.txt",
	"pylatencymap/calibration_data.txt",
	"pylatencymap/calibration_data_oracle.txt",
	"pylatencymap/test_DTrace_data.txt",
	"pylatencymap/test_SystemTap_data.txt",
}

// FuzzParse feeds any bytes through Detect and Run: no panic, every emitted
// interval is valid with no negative counts, and intervals follow each other
// without overlap on one kind of clock.
func FuzzParse(f *testing.F) {
	for _, rel := range realFiles {
		data, err := os.ReadFile(testenv.DataFile(f, rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		if len(data) > 1500 {
			f.Add(data[:1500]) // a truncated record
		}
	}
	// Synthetic seeds for the paths the real files do not take.
	f.Add([]byte(rec("86398000000, 26-AUG-13 11.59.58.000000 PM +02:00", "label, a, B", "latencyunit, nanosec", "0, 1", "4, 2") +
		rec("1000000, 27-AUG-13 12.00.01.000000 AM +02:00", "label, a, B", "latencyunit, nanosec", "0, 0", "4, 1")))
	f.Add([]byte(rec("5, Sat Mar 14 00:00:0 2015 XYZ", "datasource, bpf", "1, 3", "x, y") + "<begin record>\n" +
		rec("5", "latencyunit, microsec", "8, 1")))
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		opts := source.Options{}
		if len(data)%2 == 1 {
			opts.Bound = hist.LowerBound
		}
		src, err := Open(source.Input{Name: "fuzz", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		var prev *stream.Interval
		_ = src.Run(context.Background(), func(iv stream.Interval) error {
			sourcetest.CheckInterval(t, iv)
			if prev != nil && (iv.Start.Before(prev.End()) || iv.Relative != prev.Relative) {
				t.Fatalf("interval %s+%s (relative %v) after %s+%s (relative %v): overlap or clock switch",
					iv.Start, iv.Duration, iv.Relative, prev.Start, prev.Duration, prev.Relative)
			}
			prev = &iv
			return nil
		})
	})
}

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(testenv.DataFile(b, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		src, err := Open(source.Input{Name: "bench", Reader: bytes.NewReader(data)}, source.Options{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := src.Run(context.Background(), func(stream.Interval) error { n++; return nil }); err != nil || n != 71 {
			b.Fatalf("%d intervals, err %v", n, err)
		}
	}
}
