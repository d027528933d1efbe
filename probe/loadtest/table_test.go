package loadtest

import (
	"bytes"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
)

// stepOf is a synthetic step: n reads of each latency (µs) in 10 s.
func stepOf(t *testing.T, concurrency int, rate float64, n float64, cpu time.Duration, errors int64, us ...float64) Stats {
	t.Helper()
	h := hist.NewExact(hist.Microsecond, -10)
	maxUS := 0.0
	for _, v := range us {
		if err := h.RecordN(v, n); err != nil {
			t.Fatal(err)
		}
		maxUS = max(maxUS, v)
	}
	return Summarize(Step{Concurrency: concurrency, Rate: rate, Elapsed: 10 * time.Second, Bytes: int64(n*float64(len(us))) * 8192,
		Latency: h, Max: time.Duration(maxUS * 1e3), CPU: cpu, Errors: errors})
}

func TestWriteSteps(t *testing.T) {
	closed := []Stats{
		stepOf(t, 1, 0, 7500, 400*time.Millisecond, 0, 150, 250, 900),
		stepOf(t, 16, 0, 11000, 5*time.Second, 0, 800, 1500, 12000),
		{Concurrency: 32, Seconds: 10},
	}
	open := []Stats{
		stepOf(t, 64, 1000, 5000, 0, 0, 80, 120),
		stepOf(t, 64, 50000, 60000, time.Second, 12, 95, 2500, 70000),
	}
	cases := []struct {
		name, op string
		steps    []Stats
		want     string
	}{
		{"closed loop", "reads", closed, "" +
			"concurrency  reads/s  MB/s    mean    p50    p90    p99  p99.9    max  CPU/op  Little L\n" +
			"          1     2250  18.4   433µs  249µs  900µs  900µs  900µs  900µs  17.8µs      0.97\n" +
			"         16     3300  27.0  4.77ms  1.5ms   12ms   12ms   12ms   12ms   152µs      15.7\n" +
			"         32        0     0       -      -      -      -      -      -       -         -\n"},
		{"open loop with errors", "round trips", open, "" +
			"rate/s  round trips/s  MB/s    mean     p50    p90    p99  p99.9    max  CPU/op  Little L  errors\n" +
			"  1000           1000  8.19   100µs  80.3µs  120µs  120µs  120µs  120µs       -      0.10       0\n" +
			" 50000          18000   147  24.2ms   2.5ms   70ms   70ms   70ms   70ms  5.56µs       436      12\n"},
		{"mixed", "", []Stats{closed[0], open[0]}, "" +
			"  load  ops/s  MB/s   mean     p50    p90    p99  p99.9    max  CPU/op  Little L\n" +
			"     1   2250  18.4  433µs   249µs  900µs  900µs  900µs  900µs  17.8µs      0.97\n" +
			"1000/s   1000  8.19  100µs  80.3µs  120µs  120µs  120µs  120µs       -      0.10\n"},
		{"no steps", "reads", nil, "concurrency  reads/s  MB/s  mean  p50  p90  p99  p99.9  max  CPU/op  Little L\n"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		if err := WriteSteps(&buf, c.steps, c.op); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

var errWrite = bytes.ErrTooLarge

func TestWriteStepsReportsWriteErrors(t *testing.T) {
	if err := WriteSteps(failingWriter{}, nil, "reads"); err != errWrite {
		t.Errorf("got %v, want the writer's error", err)
	}
}
