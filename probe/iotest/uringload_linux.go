//go:build linux

package iotest

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// uringWorker is a closed-loop reader (or writer) that keeps depth random
// I/Os in flight on its own io_uring and issues a new one as each
// completes, in the loop of fio's io_uring engine with its defaults
// (iodepth_batch_submit=1, iodepth_batch_complete_min=max=1): take one
// completion, submit its replacement with its own io_uring_enter, take
// the next, and wait only when none is ready.
//
// Its latency is fio's "lat": from submission (the clock read just before
// the io_uring_enter that hands the I/O to the kernel) to completion (the
// clock read when the worker takes it from the ring, after the
// replacements of those taken before it, as fio times it).
type uringWorker struct {
	*worker
	depth int
	fd    int
	bufs  [][]byte // one aligned block per slot, alive until its completion
	offs  []int64  // each slot's offset, for error messages
	// issued is each slot's submission time since base.
	issued []time.Duration
	base   time.Time
}

// drainTries bounds the io_uring_enter calls spent waiting for the I/Os
// still in flight after a failed submission.
const drainTries = 100

// newUringWorker turns w into an io_uring worker of depth slots.
func newUringWorker(w *worker, depth int) *uringWorker {
	u := &uringWorker{worker: w, depth: depth, fd: int(w.f.fd), bufs: make([][]byte, depth), offs: make([]int64, depth),
		issued: make([]time.Duration, depth), base: time.Now()}
	u.bufs[0] = w.buf
	for i := 1; i < depth; i++ {
		u.bufs[i] = alignedBlock(int(w.bs))
		if w.write {
			w.fillRandom(u.bufs[i])
		}
	}
	return u
}

// runClosed keeps depth I/Os in flight until stop, then waits for those
// in flight; failed I/Os go to report.
func (u *uringWorker) runClosed(stop *atomic.Bool, report func(error)) {
	// The ring is single-issuer: created, submitted to and reaped on this
	// one thread, which lets the kernel run completions only when asked.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := newRing(uint32(u.depth), true)
	if err != nil {
		report(fmt.Errorf("io_uring: %w", err))
		return
	}
	defer r.close()
	inFlight := 0
	for slot := range u.depth {
		took, err := u.issue(r, slot)
		inFlight += took
		if err != nil {
			report(err)
			u.drain(r, inFlight)
			return
		}
	}
	u.counts.maxInFlight.Store(int32(inFlight))
	for inFlight > 0 {
		head, tail := r.ready()
		if head == tail {
			if _, err := r.wait(); err != nil {
				report(err)
				u.drain(r, inFlight)
				return
			}
			continue
		}
		took, err := u.take(r, head, stop, report)
		inFlight += took - 1
		if err != nil {
			report(err)
			u.drain(r, inFlight)
			return
		}
	}
}

// issue submits slot's next I/O at a random block with its own
// io_uring_enter, as fio does (iodepth_batch_submit=1). One enter for
// several I/Os would be cheaper, but the kernel plugs such a batch and
// dispatches it to the device at once, and completions then come in
// bunches (p50 15–30 % above fio's at iodepth 8 and 32 here, the mean
// unchanged). It returns how many I/Os the kernel took (0 or 1).
func (u *uringWorker) issue(r *ring, slot int) (int, error) {
	off := u.randomOffset()
	if u.write {
		u.restamp(u.bufs[slot])
	}
	u.offs[slot] = off
	r.prepare(u.write, u.fd, u.bufs[slot], off, uint64(slot))
	u.issued[slot] = time.Since(u.base)
	n, err := r.submitN(1, 0)
	return int(n), err
}

// take records the completion at head and frees it, then, unless
// stopped, submits its slot's next I/O. It returns how many I/Os it
// submitted (0 or 1) and a submission error.
func (u *uringWorker) take(r *ring, head uint32, stop *atomic.Bool, report func(error)) (int, error) {
	c := r.cqe(head)
	slot := int(c.userData)
	failed := u.check(c.res, slot)
	if failed == nil {
		u.shard.Record(time.Since(u.base) - u.issued[slot])
	}
	r.consume(head + 1)
	u.counts.completed.Add(1)
	if failed != nil {
		report(failed)
		u.backoff(stop)
	}
	if stop.Load() {
		return 0, nil
	}
	return u.issue(r, slot)
}

// check turns a completion's result into the error of its I/O, if any.
func (u *uringWorker) check(res int32, slot int) error {
	switch {
	case res < 0:
		return u.ioError(u.offs[slot], 0, syscall.Errno(-res))
	case int64(res) < u.bs:
		return u.ioError(u.offs[slot], int(res), io.ErrUnexpectedEOF)
	}
	return nil
}

// drain waits (a bounded number of times) for the I/Os still in flight
// after a failed submission, so that the kernel writes no buffer after
// the worker is gone; closing the ring cancels the rest.
func (u *uringWorker) drain(r *ring, inFlight int) {
	for try := 0; inFlight > 0 && try < drainTries; try++ {
		if _, err := r.wait(); err != nil && !errors.Is(err, syscall.EAGAIN) {
			break
		}
		head, tail := r.ready()
		r.consume(tail)
		inFlight -= int(tail - head)
	}
}
