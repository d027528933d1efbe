package driver

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// fakeSampler is a live source that reports fixed sampler statistics
// (synthetic: the real samplers are tested against real servers in their
// packages).
type fakeSampler struct {
	name  string
	stats stream.SamplerStats
}

func (f *fakeSampler) Name() string { return f.name }
func (f *fakeSampler) Run(ctx context.Context, emit func(stream.Interval) error) error {
	return nil
}
func (f *fakeSampler) SamplerStats() stream.SamplerStats { return f.stats }

// plainSource is a live source that is not a sampler (like iotest:).
type plainSource struct{}

func (plainSource) Name() string                                           { return "iotest:/tmp" }
func (plainSource) Run(context.Context, func(stream.Interval) error) error { return nil }

// fixedClock is advanced by hand.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
	cpu time.Duration
	rss int64
}

func (c *fixedClock) advance(wall, cpu time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(wall)
	c.cpu += cpu
}

func (c *fixedClock) clock() statsClock {
	return statsClock{
		now: func() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now },
		cpu: func() time.Duration { c.mu.Lock(); defer c.mu.Unlock(); return c.cpu },
		rss: func() int64 { return c.rss },
	}
}

// intervalWith returns an interval whose two series hold n and m events.
func intervalWith(t *testing.T, n, m int) stream.Interval {
	t.Helper()
	a, b := hist.NewExact(hist.Microsecond, -10), hist.NewExact(hist.Microsecond, -10)
	if err := a.RecordN(100, float64(n)); err != nil {
		t.Fatal(err)
	}
	if err := b.RecordN(3000, float64(m)); err != nil {
		t.Fatal(err)
	}
	return stream.Interval{Source: "mysql://u@h:3306/", Start: time.Unix(1700000000, 0), Duration: time.Second,
		Series: []stream.SeriesHist{{Key: stream.Key{Event: "a"}, Hist: a}, {Key: stream.Key{Event: "b"}, Hist: b}},
		// Means are not counted as events.
		Means: []stream.SeriesMean{{Key: stream.Key{Event: "calls"}, Count: 1e6, Sum: 1, Unit: hist.Millisecond}},
	}
}

func TestStatsReporterLine(t *testing.T) {
	ratio := 0.9944
	s := &fakeSampler{name: "mysql://u@h:3306/", stats: stream.SamplerStats{Kind: "k", PollsPerSecond: 99.84, CaptureRatio: &ratio}}
	c := &fixedClock{now: time.Unix(1700000000, 0), cpu: 3 * time.Second, rss: 24<<20 + 100}
	r := newStatsReporter([]source.Source{s, plainSource{}}, c.clock())
	// CPU before the reporter started (3 s) is not counted.
	c.advance(10*time.Second, 230*time.Millisecond)
	for range 10 {
		r.Observe(intervalWith(t, 5000, 120))
	}
	want := "latscope stats: 10.0 s, CPU 0.23 s (2.3 % of one core), 99.8 polls/s, 5120 events/s, capture 0.994, RSS 24 MiB"
	if got := r.Line(); got != want {
		t.Errorf("line\n got %q\nwant %q", got, want)
	}
	if got := r.CPUSeconds(); got < 0.2299 || got > 0.2301 {
		t.Errorf("CPUSeconds %v, want 0.23", got)
	}
	filled := r.Fill(s.SamplerStats())
	if filled.CPUSeconds != r.CPUSeconds() || filled.PollsPerSecond != 99.84 || filled.Kind != "k" {
		t.Errorf("Fill: %+v", filled)
	}
}

func TestStatsReporterSeveralSamplersAndUnknowns(t *testing.T) {
	one := &fakeSampler{name: "postgres://a", stats: stream.SamplerStats{PollsPerSecond: 50}}
	two := &fakeSampler{name: "mysql://b", stats: stream.SamplerStats{PollsPerSecond: 200, Missed: 7}}
	c := &fixedClock{now: time.Unix(0, 0), rss: -1}
	r := newStatsReporter([]source.Source{one, two}, c.clock())
	if got, want := r.Line(), "latscope stats: 0.0 s, CPU 0.00 s, postgres://a 50.0 polls/s, mysql://b 200.0 polls/s, mysql://b missed 7"; got != want {
		t.Errorf("at start\n got %q\nwant %q", got, want)
	}
	c.advance(4*time.Second, 2*time.Second)
	r.Observe(intervalWith(t, 1, 2))
	if got, want := r.Line(), "latscope stats: 4.0 s, CPU 2.00 s (50.0 % of one core), 0.8 events/s, postgres://a 50.0 polls/s, mysql://b 200.0 polls/s, mysql://b missed 7"; got != want {
		t.Errorf("after 4 s\n got %q\nwant %q", got, want)
	}
}

func TestStatsReporterNilIsOff(t *testing.T) {
	var r *StatsReporter
	r.Observe(intervalWith(t, 1, 1))
	st := stream.SamplerStats{PollsPerSecond: 3}
	if !reflect.DeepEqual(r.Fill(st), st) || r.Line() != "" || r.CPUSeconds() != 0 {
		t.Errorf("nil reporter did something")
	}
	r.Start(time.Millisecond, nil)()
}

// syncBuffer is a bytes.Buffer safe for the reporter's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStatsReporterStartPrintsPeriodicallyAndAtStop(t *testing.T) {
	c := &fixedClock{now: time.Unix(0, 0), rss: 1 << 20}
	r := newStatsReporter(nil, c.clock())
	var out syncBuffer
	stop := r.Start(5*time.Millisecond, &out)
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	c.advance(2*time.Second, 0)
	r.Observe(intervalWith(t, 3, 1))
	stop()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d lines, want 2 periodic and a final one:\n%s", len(lines), out.String())
	}
	if got, want := lines[len(lines)-1], "latscope stats: 2.0 s, CPU 0.00 s (0.0 % of one core), 2.0 events/s, RSS 1 MiB"; got != want {
		t.Errorf("final line\n got %q\nwant %q", got, want)
	}
	n := len(lines)
	time.Sleep(20 * time.Millisecond)
	if got := strings.Count(out.String(), "\n"); got != n {
		t.Errorf("printed after stop: %d lines, then %d", n, got)
	}
}

func TestResidentBytes(t *testing.T) {
	if rss := residentBytes(); rss == 0 || rss > 1<<40 {
		t.Errorf("resident set %d bytes", rss)
	}
}
