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

// delay is the wait after the n-th failure in a row (n ≥ 1).
func (b Backoff) delay(n int) time.Duration {
	d := b.Min
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Runner runs a set of jobs until its context ends.
type Runner struct {
	jobs    []*running
	out     Writer
	backoff Backoff
	log     *slog.Logger
}

// NewRunner prepares jobs writing to out; nothing runs before Run.
func NewRunner(jobs []Job, out Writer, backoff Backoff, log *slog.Logger) (*Runner, error) {
	r := &Runner{out: out, backoff: backoff, log: log}
	seen := map[string]bool{}
	for _, j := range jobs {
		if j.Name == "" || j.Open == nil {
			return nil, fmt.Errorf("job %q: a job needs a name and a source", j.Name)
		}
		if seen[j.Name] {
			return nil, fmt.Errorf("job %q is defined twice", j.Name)
		}
		seen[j.Name] = true
		r.jobs = append(r.jobs, &running{job: j, status: Status{Name: j.Name, Source: j.Source,
			Interval: j.Interval.String(), Schedule: j.Schedule.String(), State: Starting}})
	}
	return r, nil
}

// Run runs every job until ctx ends, then returns once each has written
// its in-flight interval (and the gap of a pending restart).
func (r *Runner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, j := range r.jobs {
		wg.Go(func() { r.runJob(ctx, j) })
	}
	wg.Wait()
}

// Status returns every job's state, in definition order.
func (r *Runner) Status() []Status {
	out := make([]Status, len(r.jobs))
	for i, j := range r.jobs {
		out[i] = j.snapshot()
	}
	return out
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
	delay := r.backoff.delay(failures)
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
