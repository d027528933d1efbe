package jobs

import (
	"sync"
	"time"
)

// State is where a job is in its life.
type State string

// Job states.
const (
	Starting   State = "starting"
	Running    State = "running"    // its source is open and emitting
	Waiting    State = "waiting"    // a scheduled job between runs
	Restarting State = "restarting" // its source failed; waiting out the backoff
	Stalled    State = "stalled"    // writing the archive failed (a full disk); retrying
	Stopped    State = "stopped"    // the server is shutting down
)

// Status is what the API shows of a job.
type Status struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	Interval string `json:"interval"`
	Schedule string `json:"schedule,omitempty"`
	State    State  `json:"state"`
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
}

func (j *running) snapshot() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.status
}

func (j *running) set(s State, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.status.State = s
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
