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
// completes, in the pattern of fio's io_uring engine with its defaults
// (iodepth_batch_submit=1, iodepth_batch_complete_min=1): take every
// completion ready, then submit each replacement with its own
// io_uring_enter, and wait only when none is ready.
//
// Its latency is fio's "lat": from submission (the clock read just before
// the io_uring_enter that hands the I/O to the kernel) to completion (one
// clock read when the worker takes the completions ready, as fio reads the
// clock once per reaped batch).
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
		took, err := u.reap(r, head, tail, stop, report)
		inFlight += took - int(tail-head)
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

// reap takes the completions from head up to tail: it records them all
// at one clock read, then, unless stopped, submits each one's slot's next
// I/O, and frees them. It returns how many I/Os it submitted and a
// submission error.
func (u *uringWorker) reap(r *ring, head, tail uint32, stop *atomic.Bool, report func(error)) (took int, err error) {
	now := time.Since(u.base)
	failed := false
	for i := head; i != tail; i++ {
		c := r.cqe(i)
		slot := int(c.userData)
		if err := u.check(c.res, slot); err != nil {
			report(err)
			failed = true
		} else {
			u.shard.Record(now - u.issued[slot])
		}
	}
	u.counts.completed.Add(int64(tail - head))
	// The entries stay unfreed while their slots are resubmitted: the
	// kernel cannot need them, as a slot is either in flight or here.
	defer r.consume(tail)
	if stop.Load() {
		return 0, nil
	}
	if failed {
		u.backoff(stop)
	}
	for i := head; i != tail; i++ {
		n, err := u.issue(r, int(r.cqe(i).userData))
		took += n
		if err != nil {
			return took, err
		}
	}
	return took, nil
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
