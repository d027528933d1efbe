package archive

import (
	"context"
	"sync"

	"github.com/latscope/latscope/stream"
)

// groupCommit gathers the intervals of concurrent Writes (latscope serve's
// jobs, each writing its own) into one transaction: classic group commit.
// A Write that finds no transaction under way leads: it commits at once
// what is queued, its own interval included, so an idle archive adds no
// latency. Writes that arrive meanwhile queue, and the first of them leads
// the next transaction with all of them. One transaction per group instead
// of per interval shares its commit, its statements and the b-tree pages
// the intervals have in common.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*queuedWrite
	leading bool // a Write is committing groups
}

// queuedWrite is one Write waiting for its group: done receives its
// result, or lead when it is to commit the next group.
type queuedWrite struct {
	iv   stream.Interval
	done chan groupResult
}

type groupResult struct {
	err  error
	lead bool
}

// Write appends one interval and returns once it is committed (durable as
// any commit in WAL mode with synchronous NORMAL: a crash of the process
// keeps it). Concurrent Writes share a transaction; each still fails
// alone: an interval the group's transaction could not take is written
// again by itself, so one bad interval does not fail the others. A crash
// loses at most the group being written: of each writer, its last interval.
// The transaction runs to its end even when ctx ends, as other writers'
// intervals are in it.
func (a *Archive) Write(ctx context.Context, iv stream.Interval) error {
	if err := a.checkWritable(iv); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return a.errorf("writing %s: %w", a.path, err)
	}
	w := &queuedWrite{iv: iv, done: make(chan groupResult, 1)}
	g := &a.group
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		r := <-w.done
		if !r.lead {
			return r.err
		}
	}
	a.commitGroups(context.WithoutCancel(ctx))
	return (<-w.done).err
}

// commitGroups commits the queued group, the leader's own interval in it
// (it queued before it led, and no one else takes the queue meanwhile),
// then hands the lead to the first Write queued since, so that no Write
// waits longer than for the group before its own.
func (a *Archive) commitGroups(ctx context.Context) {
	g := &a.group
	g.mu.Lock()
	group := g.queue
	g.queue = nil
	g.mu.Unlock()
	a.commitGroup(ctx, group)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.leading = false
		return
	}
	g.queue[0].done <- groupResult{lead: true}
}

// commitGroup writes a group in one transaction, and when that fails each
// of its intervals in its own, so that each Write gets its own result.
func (a *Archive) commitGroup(ctx context.Context, group []*queuedWrite) {
	ivs := make([]stream.Interval, len(group))
	for i, w := range group {
		ivs[i] = w.iv
	}
	err := a.writeChecked(ctx, ivs)
	if err == nil || len(group) == 1 {
		for _, w := range group {
			w.done <- groupResult{err: err}
		}
		return
	}
	for _, w := range group {
		w.done <- groupResult{err: a.writeChecked(ctx, []stream.Interval{w.iv})}
	}
}
