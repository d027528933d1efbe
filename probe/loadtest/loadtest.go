// Package loadtest analyses latency load tests such as `latscope iotest`
// and `latscope nettest`: each load level (a step) is measured as a
// latency histogram with exact counts, and this package turns the steps
// into the figures a capacity planner reads: throughput, percentiles, CPU
// per operation, the saturation knee, a fitted scalability model, the
// Little's-law check and the modes of the latency distribution.
//
// Summarize turns a Step into Stats; FindKnee, FitUSL, FitQueue and
// LittleCheck read a sweep of Stats; FindModes reads a latency histogram;
// WriteSteps prints the table of steps.
//
// The package knows nothing about storage or networks: callers label the
// modes and name the operations and workers (Words).
package loadtest

import (
	"time"

	"github.com/latscope/latscope/hist"
)

// Step is the raw measurement of one load level.
type Step struct {
	// Concurrency is the number of closed-loop workers (readers,
	// connections), or the open-loop worker pool.
	Concurrency int
	// Rate is the intended open-loop arrival rate per second; 0 means a
	// closed loop.
	Rate float64
	// Elapsed is the measured time, warm-up excluded.
	Elapsed time.Duration
	// Bytes is the payload moved by the completed operations.
	Bytes int64
	// Latency holds every completed operation's latency in µs (an exact
	// histogram, see hist.NewExact); its count is the number of operations.
	// In an open loop a latency counts from the operation's intended
	// start, so that time queued behind a slow operation is not hidden.
	Latency *hist.Histogram
	// Max is the exact largest latency.
	Max time.Duration
	// CPU is the process's user+system CPU time during Elapsed.
	CPU time.Duration
	// Errors counts failed operations (not in Latency).
	Errors int64
}
