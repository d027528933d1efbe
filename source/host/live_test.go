package host

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// TestLiveHost samples this machine for a few windows: every group has
// its series, with plausible values.
func TestLiveHost(t *testing.T) {
	diag := input.NewDiagnostics(nil, 5)
	src, err := Open("", Config{Interval: 250 * time.Millisecond, Diag: diag})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1600*time.Millisecond)
	defer cancel()
	var ivs []stream.Interval
	err = src.Run(ctx, func(iv stream.Interval) error {
		if err := iv.Validate(); err != nil {
			t.Error(err)
		}
		ivs = append(ivs, iv)
		return nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run: %v", err)
	}
	if len(ivs) < 3 {
		t.Fatalf("%d windows in 1.6 s at 250 ms", len(ivs))
	}
	if w := diag.Warnings(); len(w) > 0 {
		t.Logf("warnings: %v", w) // e.g. no /proc/pressure on a kernel without PSI
	}
	last := ivs[len(ivs)-1]
	if last.Source != src.Name() || last.Duration < 100*time.Millisecond || last.Duration > 2*time.Second {
		t.Errorf("window %s %v", last.Source, last.Duration)
	}
	seen := map[string]bool{}
	cpuTotal := 0.0
	for _, m := range last.Means {
		seen[m.Key.Event] = true
		v := m.Mean()
		switch {
		case m.Key.Instance == "all" && m.Key.Event != "cpu.%guest" && m.Key.Event != "cpu.%gnice":
			cpuTotal += v
		case m.Key.Event == "disk.%util" && !math.IsNaN(v) && (v < 0 || v > 101):
			t.Errorf("%s = %v", m.Key, v)
		case m.Key.Event == "mem.%memused" && (v <= 0 || v >= 100):
			t.Errorf("%s = %v", m.Key, v)
		case m.Key.Event == "load.plist" && v < 1:
			t.Errorf("%s = %v", m.Key, v)
		}
	}
	if math.Abs(cpuTotal-100) > 1e-6 {
		t.Errorf("CPU states of all sum to %v%%, want 100", cpuTotal)
	}
	for _, want := range []string{"cpu.%user", "cpu.%idle", "mem.kbmemused", "mem.kbavail", "mem.pgpgin/s", "load.1", "load.runq",
		"net.rxpck/s", "net.rxkB/s", "tcp.retrans/s"} {
		if !seen[want] {
			t.Errorf("no %s in the last window", want)
		}
	}
}

// BenchmarkSample is one sample of every group and its window's series,
// as host: does each second.
func BenchmarkSample(b *testing.B) {
	s := newSampler("/proc", "/sys", all, func(string, int, string) {})
	defer s.close()
	var snaps [2]snapshot
	s.sample(&snaps[0])
	out := make([]stream.SeriesMean, 0, 256)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cur, prev := &snaps[(i+1)%2], &snaps[i%2]
		s.sample(cur)
		out = means(prev, cur, time.Second, all, s, out[:0])
	}
}
