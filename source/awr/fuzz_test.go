package awr

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// FuzzParse feeds any bytes through Detect and Run, in batch and stream
// mode and with both counting modes: no panic, every interval valid with no
// negative count, and each source's (instance's) intervals in time order
// without overlap.
func FuzzParse(f *testing.F) {
	for file := range fixtureKinds {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		if len(data) > 1200 {
			f.Add(data[:1200]) // a poll or snapshot cut short
		}
	}
	// Synthetic seeds for paths the fixtures do not take.
	f.Add([]byte("SAMPLE_TIME,INST_ID,EVENT,WAIT_TIME_MILLI,WAIT_COUNT\n2024-01-01 00:00:00,1,e,1,10\n" +
		"2024-01-01 00:01:00,1,e,1,3\n2024-01-01 00:00:30,1,e,2,1\n"))
	f.Add([]byte("END_INTERVAL_TIME\tBEGIN_INTERVAL_TIME\tDBID\tEVENT\tWAIT_TIME_MICRO\tWAIT_COUNT\n" +
		"15-MAR-24 11.59.59.123 PM\t15-MAR-24 11.00.00 PM\t7\te\t4294967295\t1\n16-MAR-24 12.59.59 AM\t\t8\te\t.5\t2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		opts := source.Options{Location: time.UTC}
		if len(data)%3 == 1 {
			opts.Counts = source.CountsInterval
		}
		in := source.Input{Name: "fuzz", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5)}
		if len(data)%2 == 1 {
			in.ModTime = time.Unix(1e9, 0)
		}
		src, err := Open(in, opts)
		if err != nil {
			t.Fatal(err)
		}
		last := map[string]time.Time{}
		_ = src.Run(context.Background(), func(iv stream.Interval) error {
			sourcetest.CheckInterval(t, iv)
			if end, ok := last[iv.Source]; ok && iv.Start.Before(end) {
				t.Fatalf("%s: interval %s+%s overlaps the previous one, ending %s", iv.Source, iv.Start, iv.Duration, end)
			}
			last[iv.Source] = iv.End()
			return nil
		})
	})
}

func BenchmarkParseAWR(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "awr_19c_rac.csv"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		src, _ := Open(source.Input{Name: "bench", Reader: bytes.NewReader(data), ModTime: time.Unix(1e9, 0)}, source.Options{Location: time.UTC})
		n := 0
		if err := src.Run(context.Background(), func(stream.Interval) error { n++; return nil }); err != nil || n != 8 {
			b.Fatalf("%d intervals, err %v", n, err)
		}
	}
}
