// Package jobs runs latscope serve's collection jobs: each job reads one
// SOURCE continuously or on a schedule and writes every interval to the
// archive as it comes. A failing job restarts with capped exponential
// backoff, and the time it could not observe is written as a gap, so an
// outage stays visible instead of being skipped.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Job is one collection job.
type Job struct {
	Name string
	// Source is the SOURCE as shown to users: any password removed.
	Source   string
	Interval time.Duration
	Schedule Schedule
	// Retention is how long the archive keeps the job's data at most (0:
	// the tiers' retention), shown in its status.
	Retention time.Duration
	// Origin says where the job is defined ("config", "api"), for the API.
	Origin string
	// Paused jobs are kept but not run until resumed.
	Paused bool
	// Open opens the job's source; it is called at every start and
	// restart, so a source that failed is opened afresh. A live database
	// source reports its lost and restored connections to link
	// (source.DBOptions.Link), which the job's state shows.
	Open func(ctx context.Context, link source.Link) (source.Source, error)
}

// Writer stores intervals: the archive (*archive.Archive).
type Writer interface {
	Write(ctx context.Context, iv stream.Interval) error
}

// Backoff bounds the wait before a failed job restarts: Min after the
// first failure, doubling with every failure in a row, at most Max.
type Backoff struct {
	Min, Max time.Duration
}

// DefaultBackoff waits 1 s, 2 s, 4 s ... up to 1 min.
func DefaultBackoff() Backoff { return Backoff{Min: time.Second, Max: time.Minute} }

// Delay is the wait after the n-th failure in a row (n ≥ 1).
func (b Backoff) Delay(n int) time.Duration {
	d := b.Min
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Runner runs a set of jobs until its context ends. Jobs can be added,
// replaced, removed, paused and resumed while it runs: a job that stops
// writes its in-flight interval first, as at shutdown.
type Runner struct {
	out     Writer
	backoff Backoff
	log     *slog.Logger

	// change serialises Add, Replace, Remove, Pause and Resume, which wait
	// for a stopping job without holding mu (Status stays answerable).
	change sync.Mutex
	mu     sync.Mutex
	jobs   []*running // in definition order
	ctx    context.Context
	ended  bool // Run's context ended: nothing starts any more
	wg     sync.WaitGroup
}

// Errors of job changes.
var (
	ErrNoJob     = errors.New("no such job")
	ErrJobExists = errors.New("a job of that name exists")
)

// NewRunner prepares jobs writing to out; nothing runs before Run. A nil
// log discards.
func NewRunner(jobs []Job, out Writer, backoff Backoff, log *slog.Logger) (*Runner, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Runner{out: out, backoff: backoff, log: log}
	for _, j := range jobs {
		if err := r.Add(j); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Run runs every job until ctx ends, then returns once each has written
// its in-flight interval (and the gap of a pending restart).
func (r *Runner) Run(ctx context.Context) {
	r.change.Lock()
	r.mu.Lock()
	r.ctx = ctx
	for _, j := range r.jobs {
		r.startLocked(j)
	}
	r.mu.Unlock()
	r.change.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	r.ended = true
	r.mu.Unlock()
	r.wg.Wait()
}

// Status returns every job's state, in definition order.
func (r *Runner) Status() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Status, len(r.jobs))
	for i, j := range r.jobs {
		out[i] = j.snapshot()
	}
	return out
}

// Job returns one job's state.
func (r *Runner) Job(name string) (Status, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := r.indexLocked(name); i >= 0 {
		return r.jobs[i].snapshot(), nil
	}
	return Status{}, fmt.Errorf("job %q: %w", name, ErrNoJob)
}

// Add adds a job, started at once if the runner runs (and the job is
// not paused).
func (r *Runner) Add(j Job) error {
	if j.Name == "" || j.Open == nil {
		return fmt.Errorf("job %q: a job needs a name and a source", j.Name)
	}
	r.change.Lock()
	defer r.change.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.indexLocked(j.Name) >= 0 {
		return fmt.Errorf("job %q is defined twice: %w", j.Name, ErrJobExists)
	}
	nj := newRunning(j)
	r.jobs = append(r.jobs, nj)
	r.startLocked(nj)
	return nil
}

// Replace stops the job of j's name (its in-flight interval written) and
// runs j in its place; the archive's series of the name go on.
func (r *Runner) Replace(j Job) error {
	if j.Open == nil {
		return fmt.Errorf("job %q: a job needs a source", j.Name)
	}
	return r.withStopped(j.Name, func(i int) {
		nj := newRunning(j)
		r.jobs[i] = nj
		r.startLocked(nj)
	})
}

// Remove stops a job (its in-flight interval written) and forgets it;
// what it archived stays.
func (r *Runner) Remove(name string) error {
	return r.withStopped(name, func(i int) {
		r.jobs = append(r.jobs[:i], r.jobs[i+1:]...)
	})
}

// Pause stops a job (its in-flight interval written) and keeps it,
// paused, until Resume. Pausing a paused job does nothing.
func (r *Runner) Pause(name string) error {
	return r.withStopped(name, func(i int) {
		j := r.jobs[i]
		j.job.Paused = true
		j.set(Paused, nil)
	})
}

// Resume runs a paused job again; resuming a running job does nothing.
func (r *Runner) Resume(name string) error {
	return r.withStopped(name, func(i int) {
		j := r.jobs[i]
		if j.job.Paused {
			j.job.Paused = false
			j.set(Starting, nil)
		}
		r.startLocked(j)
	})
}

// withStopped stops the named job's goroutine, if it runs, then calls
// change with the job's index under the runner's lock; change decides what
// runs next (startLocked).
func (r *Runner) withStopped(name string, change func(i int)) error {
	r.change.Lock()
	defer r.change.Unlock()
	r.mu.Lock()
	i := r.indexLocked(name)
	if i < 0 {
		r.mu.Unlock()
		return fmt.Errorf("job %q: %w", name, ErrNoJob)
	}
	j := r.jobs[i]
	r.mu.Unlock()
	j.stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	change(r.indexLocked(name))
	return nil
}

func (r *Runner) indexLocked(name string) int {
	for i, j := range r.jobs {
		if j.job.Name == name {
			return i
		}
	}
	return -1
}

// startLocked runs a job in its own goroutine, with a context of its own
// so that it can be stopped alone, if the runner runs and the job is not
// paused or already running. The caller holds both locks.
func (r *Runner) startLocked(j *running) {
	if j.job.Paused {
		j.set(Paused, nil)
		return
	}
	if r.ctx == nil || r.ended || j.done != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	j.cancel, j.done = cancel, done
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(done)
		defer cancel()
		r.runJob(ctx, j)
	}()
}

// errWrite marks a failure to store an interval: the job is stalled
// rather than its source broken.
var errWrite = errors.New("writing the archive")

func (r *Runner) runJob(ctx context.Context, j *running) {
	failures := 0
	for ctx.Err() == nil {
		runCtx, cancel := ctx, context.CancelFunc(func() {})
		if !j.job.Schedule.Continuous() {
			j.set(Waiting, nil)
			if !sleep(ctx, time.Until(j.job.Schedule.next(time.Now()))) {
				break
			}
			runCtx, cancel = context.WithTimeout(ctx, j.job.Schedule.Run)
		}
		began := time.Now()
		wrote, err := r.attempt(runCtx, j)
		scheduledRunEnded := runCtx.Err() != nil && ctx.Err() == nil
		cancel()
		if ctx.Err() != nil {
			break
		}
		if scheduledRunEnded && !errors.Is(err, errWrite) {
			failures = 0
			continue
		}
		if err == nil {
			err = errors.New("the source ended")
		}
		if wrote {
			failures = 0
		}
		failures++
		r.restartAfter(ctx, j, err, failures, began)
	}
	j.set(Stopped, nil)
}

// attempt opens the job's source and writes its intervals until it stops.
func (r *Runner) attempt(ctx context.Context, j *running) (wrote bool, err error) {
	link := j.begin(r.log)
	src, err := j.job.Open(ctx, link)
	if err != nil {
		return false, err
	}
	err = src.Run(ctx, func(iv stream.Interval) error {
		iv.Source = j.job.Name // one archive source per job, across restarts
		// The in-flight interval is written even when shutdown has begun.
		if err := r.out.Write(context.WithoutCancel(ctx), iv); err != nil {
			return fmt.Errorf("%w: %w", errWrite, err)
		}
		wrote = true
		j.wrote(iv.End())
		return nil
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return wrote, err
}

// restartAfter records the failure, waits out the backoff and writes the
// time not observed, from the end of the last interval (or the failed
// attempt's start) to now, as a gap.
func (r *Runner) restartAfter(ctx context.Context, j *running, err error, failures int, began time.Time) {
	delay := r.backoff.Delay(failures)
	state := Restarting
	if errors.Is(err, errWrite) {
		state = Stalled
	}
	j.failed(state, err, delay)
	r.log.Warn("job failed", "job", j.job.Name, "state", string(state), "error", err.Error(), "retry_in", delay.String())
	sleep(ctx, delay)
	from := j.lastEnd()
	if from.IsZero() {
		from = began
	}
	now := time.Now()
	if !now.After(from) {
		return
	}
	gap := stream.Interval{Source: j.job.Name, Start: from, Duration: now.Sub(from), Gap: true}
	if werr := r.out.Write(context.WithoutCancel(ctx), gap); werr != nil {
		r.log.Warn("job gap not written", "job", j.job.Name, "error", werr.Error())
		return
	}
	j.wrote(gap.End())
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Then returns a writer that writes each interval to out and, once out
// took it, hands it to after: what follows the archive (live streams,
// /metrics, remote write) sees only what is archived.
func Then(out Writer, after func(context.Context, stream.Interval)) Writer {
	return then{out: out, after: after}
}

type then struct {
	out   Writer
	after func(context.Context, stream.Interval)
}

func (t then) Write(ctx context.Context, iv stream.Interval) error {
	if err := t.out.Write(ctx, iv); err != nil {
		return err
	}
	t.after(ctx, iv)
	return nil
}
