package events

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

var realSamples = []string{
	"testdata/iosnoop_example.txt",
	"testdata/biosnoop_example_bcc.txt",
	"testdata/biosnoop_example_bpftrace.txt",
}

// fuzzRun runs a format over data: no panic, no error, every interval valid
// and, on a relative clock, after the previous one.
func fuzzRun(t *testing.T, f source.Format, data []byte, opts source.Options) {
	src, err := f.Open(source.Input{Name: "fuzz", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var prev *stream.Interval
	err = src.Run(context.Background(), func(iv stream.Interval) error {
		sourcetest.CheckInterval(t, iv)
		if prev != nil && iv.Relative && prev.Relative && iv.Start.Before(prev.End()) {
			t.Fatalf("relative interval at %s overlaps the previous one ending %s", iv.Start, prev.End())
		}
		prev = &iv
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func FuzzPairs(f *testing.F) {
	for _, p := range realSamples {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Synthetic seeds for paths the real files do not take.
	f.Add([]byte("TIMEus DELTAus\n9339835017 15133\n9339835827 712\n"))
	f.Add([]byte("1700000000.5 2.5\n1700000001.25 3\n10 1\n9000000 2\n"))
	f.Add([]byte("STARTs COMM PID LATms\n5.9 a b 1 0.62\n1e3 x 1 1e300\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		opts := source.Options{Location: time.UTC}
		switch len(data) % 3 {
		case 1:
			opts.Unit, opts.Interval = hist.Second, time.Microsecond
		case 2:
			opts.Interval = 24 * time.Hour
		}
		fuzzRun(t, Format(), data, opts)
	})
}

func FuzzWaitLines(f *testing.F) {
	f.Add([]byte(oraWaitLines))
	f.Add([]byte("23:59:59.999 pid=1 event=a wait_time=1\n0:00:00 event=a b wait_time=2 x\n12:00:00 event= wait_time=3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		DetectWait(data)
		opts := source.Options{Location: time.UTC, Date: time.Date(2024, 3, 14, 0, 0, 0, 0, time.UTC)}
		if len(data)%2 == 1 {
			opts.Interval = time.Microsecond
		}
		fuzzRun(t, WaitFormat(), data, opts)
	})
}
