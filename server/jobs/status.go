package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/latscope/latscope/source"
)

// State is where a job is in its life.
type State string

// Job states.
const (
	Starting State = "starting"
	Running  State = "running" // its source is open and emitting
	// Reconnecting: a live database source lost its server and reconnects
	// by itself; the source writes the time it cannot see as gaps.
	Reconnecting State = "reconnecting"
	Waiting      State = "waiting"    // a scheduled job between runs
	Restarting   State = "restarting" // its source failed; waiting out the backoff
	Stalled      State = "stalled"    // writing the archive failed (a full disk); retrying
	Stopped      State = "stopped"    // the server is shutting down
	Paused       State = "paused"     // paused through the API; resumed the same way
)

// Status is what the API shows of a job.
type Status struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	Interval string `json:"interval"`
	Schedule string `json:"schedule,omitempty"`
	// Retention is how long the job's data of every tier is kept at most
	// ("3d"); empty: as long as the archive's tiers keep it.
	Retention string `json:"retention,omitempty"`
	// Origin is where the job is defined: "config" (the configuration
	// file or the command line) or "api".
	Origin string `json:"origin,omitempty"`
	State  State  `json:"state"`
	// Since is when the job entered its state.
	Since *time.Time `json:"since,omitempty"`
	// LastError is the error of the last failure (kept after recovery).
	LastError string `json:"last_error,omitempty"`
	// LastInterval is the end of the last window written (data or gap).
	LastInterval *time.Time `json:"last_interval,omitempty"`
	// Intervals counts the windows written, gaps included.
	Intervals int64 `json:"intervals"`
	Restarts  int   `json:"restarts"`
	// Backoff is the wait before the pending restart; RetryAt its end.
	Backoff string     `json:"backoff,omitempty"`
	RetryAt *time.Time `json:"retry_at,omitempty"`
}

// running is a job and its live status.
type running struct {
	job    Job
	mu     sync.Mutex
	status Status
	end    time.Time
	// attempt counts the source's openings: a link reports only for the
	// attempt it was made for.
	attempt int
	// cancel stops the job's goroutine, done closes when it has ended;
	// both nil while it does not run (the runner's lock guards them).
	cancel context.CancelFunc
	done   chan struct{}
}

func newRunning(j Job) *running {
	return &running{job: j, status: Status{Name: j.Name, Source: j.Source, Interval: j.Interval.String(),
		Schedule: j.Schedule.String(), Retention: retention(j.Retention), Origin: j.Origin, State: Starting}}
}

// retention shows a job's retention as the configuration writes it; none
// is empty.
func retention(keep time.Duration) string {
	if keep <= 0 {
		return ""
	}
	return source.FormatAge(keep)
}

// stop ends the job's goroutine, if it runs, once it has written its
// in-flight interval. The caller holds the runner's change lock, so
// nothing starts the job meanwhile.
func (j *running) stop() {
	if j.done == nil {
		return
	}
	j.cancel()
	<-j.done
	j.cancel, j.done = nil, nil
}

func (j *running) snapshot() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.status
}

func (j *running) set(s State, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.setLocked(s, time.Now(), err)
}

func (j *running) setLocked(s State, at time.Time, err error) {
	if j.status.State != s || j.status.Since == nil {
		j.status.State, j.status.Since = s, &at
	}
	if err != nil {
		j.status.LastError = err.Error()
	}
	if s != Restarting && s != Stalled {
		j.status.Backoff, j.status.RetryAt = "", nil
	}
}

func (j *running) failed(s State, err error, delay time.Duration) {
	j.set(s, err)
	j.mu.Lock()
	defer j.mu.Unlock()
	retry := time.Now().Add(delay)
	j.status.Restarts++
	j.status.Backoff, j.status.RetryAt = delay.String(), &retry
}

func (j *running) wrote(end time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.end = end
	j.status.LastInterval = &end
	j.status.Intervals++
}

func (j *running) lastEnd() time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.end
}

// begin starts a new attempt to run the source and returns its link.
func (j *running) begin(log *slog.Logger) source.Link {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.attempt++
	j.setLocked(Running, time.Now(), nil)
	return jobLink{j: j, attempt: j.attempt, log: log}
}

// linkChanged applies a source's connection change, unless the attempt
// it belongs to has ended (the job is restarting, waiting or stopped);
// changed says the state changed.
func (j *running) linkChanged(attempt int, s State, at time.Time, err error) (changed bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if attempt != j.attempt || (j.status.State != Running && j.status.State != Reconnecting) {
		return false
	}
	changed = j.status.State != s
	j.setLocked(s, at, err)
	return changed
}

// jobLink shows one attempt's connection changes in the job's state and
// logs them. No gap is written here: the source writes its own for the
// time it could not read its server.
type jobLink struct {
	j       *running
	attempt int
	log     *slog.Logger
}

func (l jobLink) Lost(at time.Time, err error) {
	if l.j.linkChanged(l.attempt, Reconnecting, at, err) {
		l.log.Warn("job lost its server; reconnecting", "job", l.j.job.Name, "error", err.Error())
	}
}

func (l jobLink) Restored(at time.Time) {
	if l.j.linkChanged(l.attempt, Running, at, nil) {
		l.log.Info("job reconnected", "job", l.j.job.Name)
	}
}
