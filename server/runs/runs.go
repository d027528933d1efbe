// Package runs is latscope serve's on-demand runs (Semaphore's task
// model): an operator starts an iotest, a nettest, a flame capture or a
// report through the API; the run's parameters, who started it, its live
// progress, its outputs and its exit status are kept in runs.db and under
// DATA/runs/ID/, browsable by viewers.
//
// A run is a child process of latscope itself with an argv the server
// builds from validated, typed parameters (never a shell, never raw
// arguments from a client), in its own process group so that cancel
// reaches everything it started.
package runs

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// State is where a run is in its life.
type State string

// Run states; the last three are final.
const (
	Queued    State = "queued"
	Running   State = "running"
	Succeeded State = "succeeded"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// Final reports whether a run in state s has ended.
func (s State) Final() bool { return s == Succeeded || s == Failed || s == Cancelled }

// ServerStopped is the error of runs the server's shutdown (or crash)
// ended.
const ServerStopped = "server stopped"

// Run is what the API shows of a run.
type Run struct {
	ID     int64           `json:"id"`
	Kind   string          `json:"kind"`
	Params json.RawMessage `json:"params"`
	// User and Remote are who started the run, and from where.
	User   string `json:"user"`
	Remote string `json:"remote"`
	State  State  `json:"state"`
	// ExitCode is the child's (the first failing step's); nil until the
	// run ends, and for runs that never started.
	ExitCode    *int       `json:"exit_code,omitempty"`
	Error       string     `json:"error,omitempty"`
	CancelledBy string     `json:"cancelled_by,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	Progress    Progress   `json:"progress"`
	// Commands are the argv the server ran, the binary named "latscope".
	Commands [][]string `json:"commands"`
	Outputs  []Output   `json:"outputs"`
}

// Progress is how far a run is: the child's latest stderr line and an
// estimate from the planned duration (nil when the kind has none).
type Progress struct {
	Percent  *float64 `json:"percent,omitempty"`
	Line     string   `json:"line,omitempty"`
	LogBytes int64    `json:"log_bytes"`
}

// Output is one file a run wrote; names are fixed by the server.
type Output struct {
	Name        string `json:"name"`
	Size        int64  `json:"size"`
	ContentType string `json:"content_type"`
}

// LogName is every run's log: what the server says about it and the
// child's stderr.
const LogName = "log.txt"

// FoldedName is a flame run's stacks, folded (frame;frame;... count):
// what its flame.html is drawn from, and what a differential flame graph
// of two runs is built from.
const FoldedName = "flame.folded"

// contentTypes are the only output names a run writes, with the type
// they are served as.
var contentTypes = map[string]string{
	"report.json": "application/json",
	"report.html": "text/html; charset=utf-8",
	"flame.html":  "text/html; charset=utf-8",
	FoldedName:    "text/plain; charset=utf-8",
	LogName:       "text/plain; charset=utf-8",
}

// outputNames lists the output names in order, for messages.
func outputNames() string {
	names := slices.Sorted(maps.Keys(contentTypes))
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// ContentType returns how an output is served, and whether name is one a
// run can have at all.
func ContentType(name string) (string, bool) {
	ct, ok := contentTypes[name]
	return ct, ok
}

// Duration is a Go duration written as a string in JSON ("30s", "1m").
type Duration time.Duration

// UnmarshalJSON reads "30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"30s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: want a duration such as \"30s\"", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes "30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d Duration) String() string { return time.Duration(d).String() }
