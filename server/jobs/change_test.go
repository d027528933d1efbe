package jobs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// flusher emits a window every step and, when stopped, the window in
// flight (marked by its instance), as real sources do at shutdown.
type flusher struct{ step time.Duration }

func (f flusher) Name() string { return "flusher" }

func (f flusher) Run(ctx context.Context, emit func(stream.Interval) error) error {
	for {
		start := time.Now()
		if !sleep(ctx, f.step) {
			last := stream.Interval{Start: start, Duration: time.Since(start),
				Series: []stream.SeriesHist{{Key: stream.Key{Event: "in-flight"}}}}
			if err := emit(last); err != nil {
				return err
			}
			return ctx.Err()
		}
		if err := emit(stream.Interval{Start: start, Duration: f.step}); err != nil {
			return err
		}
	}
}

func flushJob(name string, step time.Duration) Job {
	return Job{Name: name, Source: "flusher", Interval: step, Origin: "api",
		Open: func(context.Context, source.Link) (source.Source, error) { return flusher{step: step}, nil }}
}

// counts are a writer's windows per job and the in-flight windows among them.
func counts(w *memWriter) (windows, inFlight map[string]int) {
	windows, inFlight = map[string]int{}, map[string]int{}
	for _, iv := range w.written() {
		windows[iv.Source]++
		if len(iv.Series) == 1 && iv.Series[0].Key.Event == "in-flight" {
			inFlight[iv.Source]++
		}
	}
	return windows, inFlight
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Jobs are added, paused, resumed, replaced and removed while the runner
// runs; each stop writes the job's in-flight window, and a paused or
// removed job writes nothing more.
func TestJobsChangeWhileRunning(t *testing.T) {
	w := &memWriter{}
	r, err := NewRunner([]Job{flushJob("a", 10*time.Millisecond)}, w, DefaultBackoff(), quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	if err := r.Add(flushJob("b", 10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(flushJob("b", time.Second)); !errors.Is(err, ErrJobExists) {
		t.Errorf("a second job b: %v, want ErrJobExists", err)
	}
	waitFor(t, "windows of the added job", func() bool { n, _ := counts(w); return n["b"] >= 3 })

	if err := r.Pause("a"); err != nil {
		t.Fatal(err)
	}
	n, flushed := counts(w)
	if flushed["a"] != 1 {
		t.Errorf("pausing a wrote %d in-flight windows, want 1", flushed["a"])
	}
	if st, _ := r.Job("a"); st.State != Paused || st.Origin != "api" {
		t.Errorf("paused job %+v", st)
	}
	time.Sleep(60 * time.Millisecond)
	if later, _ := counts(w); later["a"] != n["a"] {
		t.Errorf("a paused job wrote %d windows", later["a"]-n["a"])
	}
	if err := r.Pause("a"); err != nil {
		t.Errorf("pausing twice: %v", err)
	}
	if err := r.Resume("a"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "windows after resuming", func() bool { m, _ := counts(w); return m["a"] >= n["a"]+3 })
	if st, _ := r.Job("a"); st.State != Running {
		t.Errorf("resumed job %+v", st)
	}

	// Replaced: the old source's in-flight window, then the new one's.
	if err := r.Replace(flushJob("b", 30*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, flushed := counts(w); flushed["b"] != 1 {
		t.Errorf("replacing b wrote %d in-flight windows, want 1", flushed["b"])
	}
	if st, _ := r.Job("b"); st.Interval != "30ms" {
		t.Errorf("replaced job %+v", st)
	}
	waitFor(t, "windows of the replacement", func() bool {
		ivs := w.written()
		return ivs[len(ivs)-1].Source == "b" && ivs[len(ivs)-1].Duration == 30*time.Millisecond
	})

	if err := r.Remove("a"); err != nil {
		t.Fatal(err)
	}
	n, flushed = counts(w)
	if flushed["a"] != 2 {
		t.Errorf("removing a wrote %d in-flight windows in all, want 2 (pause, remove)", flushed["a"])
	}
	time.Sleep(50 * time.Millisecond)
	if later, _ := counts(w); later["a"] != n["a"] {
		t.Errorf("a removed job wrote %d windows", later["a"]-n["a"])
	}
	if st := r.Status(); len(st) != 1 || st[0].Name != "b" {
		t.Errorf("jobs after removing a: %+v", st)
	}
	for _, err := range []error{r.Remove("a"), r.Pause("zz"), r.Resume("zz"), r.Replace(flushJob("zz", time.Second))} {
		if !errors.Is(err, ErrNoJob) {
			t.Errorf("change of an unknown job: %v, want ErrNoJob", err)
		}
	}
}

// A job defined paused shows so and does not run until resumed; changes
// made before Run take effect when it starts.
func TestPausedJobWaitsForResume(t *testing.T) {
	w := &memWriter{}
	j := flushJob("p", 10*time.Millisecond)
	j.Paused = true
	r, err := NewRunner([]Job{j}, w, DefaultBackoff(), quiet())
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := r.Job("p"); st.State != Paused {
		t.Errorf("state %q before Run, want paused", st.State)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	time.Sleep(50 * time.Millisecond)
	if len(w.written()) != 0 {
		t.Fatalf("a paused job wrote %d windows", len(w.written()))
	}
	if err := r.Resume("p"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "windows after resume", func() bool { return len(w.written()) >= 2 })
	cancel()
	<-done
	if err := r.Add(flushJob("late", 10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if st, _ := r.Job("late"); st.State != Starting {
		t.Errorf("a job added after shutdown runs: %+v", st)
	}
}
