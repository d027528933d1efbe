package oracle

import (
	"context"
	"time"
)

// pacer runs polls on a fixed schedule: the k-th poll starts at
// start + k·interval, so windows stay aligned to --interval instead of
// drifting by the query time (a sleep of one interval after each query
// would). When a poll overruns its next deadline, the deadlines already past
// are skipped, not made up in a burst, and counted.
type pacer struct {
	interval time.Duration
	now      func() time.Time
	sleep    func(ctx context.Context, d time.Duration) error

	start   time.Time // the first poll's start; zero before it
	k       int64     // the index of the last deadline waited for
	skipped int64     // deadlines missed because a poll overran them
}

func newPacer(interval time.Duration, now func() time.Time, sleep func(context.Context, time.Duration) error) *pacer {
	return &pacer{interval: interval, now: now, sleep: sleep}
}

// wait returns at the next deadline: at once for the first poll (which
// fixes the schedule's origin), else at start + k·interval for the smallest
// k not yet past. It returns ctx's error when ctx ends first.
func (p *pacer) wait(ctx context.Context) error {
	now := p.now()
	if p.start.IsZero() {
		p.start = now
		return ctx.Err()
	}
	next := p.k + 1
	if late := now.Sub(p.deadline(next)); late > 0 {
		// the poll overran: skip to the first deadline after now
		due := int64(now.Sub(p.start)/p.interval) + 1
		p.skipped += due - next
		next = due
	}
	p.k = next
	if d := p.deadline(next).Sub(now); d > 0 {
		return p.sleep(ctx, d)
	}
	return ctx.Err()
}

func (p *pacer) deadline(k int64) time.Time { return p.start.Add(time.Duration(k) * p.interval) }

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
