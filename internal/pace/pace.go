// Package pace serves load generators that must act at exact moments
// (open-loop tests with Poisson arrivals) and account for their own cost:
// precise waits, the process's CPU time, and where it may run.
//
// Go's timers wake about 1 ms late on Linux (measured here: time.Sleep of
// 20–220 µs overslept by 0.97 ms at the median), too coarse for arrivals
// microseconds apart. A Pacer sleeps on its OS thread with the kernel's
// timer slack set to 1 ns and spins only through the last stretch, whose
// length it calibrates to the kernel's actual wake-up lateness.
package pace

import (
	"runtime"
	"slices"
	"time"
)

// Pacer waits until given moments on the calling goroutine's OS thread.
// Create it on the goroutine that uses it (NewPacer locks the thread).
type Pacer struct {
	// margin is how long before the target the sleep ends; the rest is
	// spun.
	margin time.Duration
}

// Margins bound the calibrated spin: at least a few µs (a clock read and a
// loop), at most 200 µs (a host so loaded that sleeping is useless anyway).
const (
	minMargin = 5 * time.Microsecond
	maxMargin = 200 * time.Microsecond
	// calibrationSleeps are timed to learn the wake-up lateness (~10 ms).
	calibrationSleeps = 100
	// longestSleep is the longest single sleep, so that an abort is seen.
	longestSleep = 20 * time.Millisecond
)

// NewPacer locks the calling goroutine to its OS thread and lowers the
// thread's timer slack; margin is the spun part of each wait, from
// Calibrate.
func NewPacer(margin time.Duration) *Pacer {
	lockThread()
	return &Pacer{margin: margin}
}

// Margin is the spun part of each wait.
func (p *Pacer) Margin() time.Duration { return p.margin }

// Calibrate measures how late a thread's sleeps wake up (about 10 ms of
// 50 µs sleeps) and returns the 99th percentile, within [5 µs, 200 µs]:
// the margin for NewPacer.
func Calibrate() time.Duration {
	lockThread()
	defer runtime.UnlockOSThread()
	late := make([]time.Duration, calibrationSleeps)
	for i := range late {
		const d = 50 * time.Microsecond
		target := time.Now().Add(d)
		sleep(d)
		late[i] = time.Since(target)
	}
	slices.Sort(late)
	return min(max(late[len(late)*99/100], minMargin), maxMargin)
}

// WaitUntil returns at t (or at once when t has passed), or early when
// stop reports true; it checks stop at least every 20 ms of sleep.
func (p *Pacer) WaitUntil(t time.Time, stop func() bool) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		if d <= p.margin {
			for time.Now().Before(t) {
			}
			return
		}
		if stop() {
			return
		}
		sleep(min(d-p.margin, longestSleep))
	}
}
