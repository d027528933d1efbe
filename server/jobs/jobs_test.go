package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// memWriter keeps what the runner writes.
type memWriter struct {
	mu  sync.Mutex
	ivs []stream.Interval
	err error
}

func (m *memWriter) Write(_ context.Context, iv stream.Interval) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.ivs = append(m.ivs, iv)
	return nil
}

func (m *memWriter) written() []stream.Interval {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]stream.Interval(nil), m.ivs...)
}

// ticker emits one empty observed window every 20 ms until ctx ends or
// after n windows, when it fails.
type ticker struct{ n int }

func (t ticker) Name() string { return "ticker" }

func (t ticker) Run(ctx context.Context, emit func(stream.Interval) error) error {
	for i := 0; t.n == 0 || i < t.n; i++ {
		start := time.Now()
		if !sleep(ctx, 20*time.Millisecond) {
			return ctx.Err()
		}
		if err := emit(stream.Interval{Source: "ticker", Start: start, Duration: time.Since(start)}); err != nil {
			return err
		}
	}
	return errors.New("connection refused")
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestBackoffDoublesAndCaps(t *testing.T) {
	b := Backoff{Min: time.Second, Max: 5 * time.Second}
	var got []time.Duration
	for n := 1; n <= 5; n++ {
		got = append(got, b.Delay(n))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
}

// A source that fails after a few windows is restarted after a backoff,
// and the time it was down is written as a gap between its windows.
func TestFailingJobRestartsAndWritesGap(t *testing.T) {
	w := &memWriter{}
	job := Job{Name: "flaky", Source: "ticker", Interval: 20 * time.Millisecond,
		Open: func(context.Context, source.Link) (source.Source, error) { return ticker{n: 3}, nil }}
	r, err := NewRunner([]Job{job}, w, Backoff{Min: 100 * time.Millisecond, Max: 200 * time.Millisecond}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	sawRestarting := false
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && (!sawRestarting || r.Status()[0].Restarts < 2) {
		st := r.Status()[0]
		if st.State == Restarting {
			sawRestarting = st.LastError == "connection refused" && st.Backoff != "" && st.RetryAt != nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if !sawRestarting {
		t.Fatalf("never saw the job restarting with its error and backoff: %+v", r.Status()[0])
	}
	if st := r.Status()[0]; st.State != Stopped {
		t.Errorf("state after shutdown %q, want stopped", st.State)
	}
	ivs := w.written()
	gaps := 0
	for i, iv := range ivs {
		if iv.Source != "flaky" {
			t.Errorf("interval %d has source %q, want the job's name", i, iv.Source)
		}
		if iv.Gap {
			gaps++
			// The last gap may be cut short by the shutdown.
			if iv.Duration < 100*time.Millisecond && i < len(ivs)-1 {
				t.Errorf("gap %d lasts %s, less than the backoff", i, iv.Duration)
			}
			if i > 0 && !iv.Start.Equal(ivs[i-1].End()) {
				t.Errorf("gap %d starts at %s, not at the end of the window before (%s)", i, iv.Start, ivs[i-1].End())
			}
		}
	}
	if gaps < 1 {
		t.Fatalf("no gap written for the outage: %d intervals", len(ivs))
	}
}

// A job whose source cannot even open also leaves a gap, and a write
// failure marks the job stalled.
func TestUnopenableJobAndStalledWriter(t *testing.T) {
	w := &memWriter{}
	open := func(context.Context, source.Link) (source.Source, error) {
		return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
	}
	r, err := NewRunner([]Job{{Name: "down", Open: open}}, w, Backoff{Min: 50 * time.Millisecond, Max: 50 * time.Millisecond}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r.Run(ctx)
	if st := r.Status()[0]; st.Restarts < 2 || st.LastError == "" {
		t.Errorf("status %+v: want several restarts and the last error", st)
	}
	if ivs := w.written(); len(ivs) == 0 || !ivs[0].Gap {
		t.Errorf("want gaps for the outage, got %d intervals", len(ivs))
	}

	full := &memWriter{err: errors.New("database or disk is full")}
	tick := func(context.Context, source.Link) (source.Source, error) { return ticker{}, nil }
	r, _ = NewRunner([]Job{{Name: "full", Open: tick}}, full, Backoff{Min: time.Second, Max: time.Second}, quiet())
	ctx2, cancel2 := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx2); close(done) }()
	deadline := time.Now().Add(2 * time.Second)
	for r.Status()[0].State != Stalled && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	st := r.Status()[0]
	cancel2()
	<-done
	if st.State != Stalled {
		t.Errorf("state with a full disk %q (%s), want stalled", st.State, st.LastError)
	}
}

func TestScheduledJobRunsInSlots(t *testing.T) {
	w := &memWriter{}
	tick := func(context.Context, source.Link) (source.Source, error) { return ticker{}, nil }
	sched := Schedule{Run: 200 * time.Millisecond, Every: 500 * time.Millisecond}
	r, _ := NewRunner([]Job{{Name: "probe", Open: tick, Schedule: sched}}, w, DefaultBackoff(), quiet())
	ctx, cancel := context.WithTimeout(context.Background(), 1400*time.Millisecond)
	defer cancel()
	r.Run(ctx)
	st := r.Status()[0]
	if st.Restarts != 0 {
		t.Errorf("a scheduled run ending on time counted as a failure: %+v", st)
	}
	for _, iv := range w.written() {
		// The slot's end is a timer: on a loaded machine it fires late
		// and one more 20 ms window may begin; the idle part of the period
		// must stay empty.
		const lateTimer = 100 * time.Millisecond
		if off := iv.Start.Sub(iv.Start.Truncate(sched.Every)); off > sched.Run+lateTimer {
			t.Errorf("window at %s is outside the run slot (offset %s)", iv.Start, off)
		}
	}
	if len(w.written()) == 0 {
		t.Error("no window written")
	}
}

func TestParseSchedule(t *testing.T) {
	for in, want := range map[string]Schedule{
		"":              {},
		"30s every 15m": {Run: 30 * time.Second, Every: 15 * time.Minute},
		" 1m every 1h ": {Run: time.Minute, Every: time.Hour},
	} {
		got, err := ParseSchedule(in)
		if err != nil || got != want {
			t.Errorf("ParseSchedule(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"30s", "every 15m", "30s every", "1h every 15m", "-1s every 1m", "x every 1m"} {
		if _, err := ParseSchedule(bad); err == nil {
			t.Errorf("ParseSchedule(%q) accepted", bad)
		}
	}
}

func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"", "30s every 15m", "1h every 15m", "0s every 0s", "1ms every 1ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := ParseSchedule(s)
		if err != nil {
			return
		}
		if !sc.Continuous() && (sc.Run <= 0 || sc.Run > sc.Every) {
			t.Fatalf("%q parsed to an impossible schedule %+v", s, sc)
		}
		if back, err := ParseSchedule(sc.String()); err != nil || back != sc {
			t.Fatalf("%q: String %q does not read back: %v %v", s, sc.String(), back, err)
		}
	})
}

// linkSource reports a lost server, waits, reports it back, then ends:
// like a database source reconnecting by itself.
type linkSource struct {
	link    source.Link
	lostFor time.Duration
	done    chan struct{}
}

func (s linkSource) Name() string { return "db" }

func (s linkSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	s.link.Lost(time.Now(), errors.New("connection lost: server closed the connection"))
	sleep(ctx, s.lostFor)
	s.link.Restored(time.Now())
	<-s.done
	return ctx.Err()
}

// A source's lost connection shows as reconnecting, with the error and
// since when, then running again; no restart, no gap from the runner; a
// report arriving after the attempt ended changes nothing.
func TestReconnectingSourceShowsInState(t *testing.T) {
	w := &memWriter{}
	var link source.Link
	done := make(chan struct{})
	open := func(_ context.Context, l source.Link) (source.Source, error) {
		link = l
		return linkSource{link: l, lostFor: 200 * time.Millisecond, done: done}, nil
	}
	r, _ := NewRunner([]Job{{Name: "db", Open: open}}, w, Backoff{Min: time.Second, Max: time.Second}, quiet())
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() { r.Run(ctx); close(finished) }()
	var seen []State
	var reconnecting Status
	deadline := time.Now().Add(3 * time.Second)
	// The first poll may come after the loss on a busy machine: what
	// matters is reconnecting, then running again.
	for time.Now().Before(deadline) && (len(seen) < 2 || seen[len(seen)-2] != Reconnecting || seen[len(seen)-1] != Running) {
		st := r.Status()[0]
		if len(seen) == 0 || seen[len(seen)-1] != st.State {
			seen = append(seen, st.State)
			if st.State == Reconnecting {
				reconnecting = st
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if len(seen) < 2 || seen[len(seen)-2] != Reconnecting || seen[len(seen)-1] != Running {
		t.Fatalf("states %v: want ..., reconnecting, running", seen)
	}
	if reconnecting.LastError == "" || reconnecting.Since == nil || reconnecting.Restarts != 0 {
		t.Errorf("reconnecting status %+v: want the error, since when, no restart", reconnecting)
	}
	if st := r.Status()[0]; st.Since == nil || !st.Since.After(*reconnecting.Since) {
		t.Errorf("running again since %v, not after reconnecting since %v", st.Since, reconnecting.Since)
	}
	cancel()
	close(done)
	<-finished
	link.Lost(time.Now(), errors.New("late"))
	if st := r.Status()[0]; st.State != Stopped || st.LastError == "late" {
		t.Errorf("a report after the attempt ended changed the status: %+v", st)
	}
	if len(w.written()) != 0 {
		t.Errorf("the runner wrote %d windows for a reconnecting source: the source writes its gaps", len(w.written()))
	}
}
