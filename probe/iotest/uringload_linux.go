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
// completes, as fio's io_uring engine does at --iodepth.
//
// Its latency is fio's "lat": from submission (the clock read just before
// the io_uring_enter that hands the I/O to the kernel) to completion (the
// clock read when that completion is reaped). I/Os submitted or reaped
// together share one clock read, as in fio.
type uringWorker struct {
	*worker
	depth int
	fd    int
	bufs  [][]byte // one aligned block per slot, alive until its completion
	offs  []int64  // each slot's offset, for error messages
	// issued is each slot's submission time since base; waiting lists the
	// slots prepared but not yet submitted.
	issued  []time.Duration
	waiting []int
	base    time.Time
}

// drainTries bounds the io_uring_enter calls spent waiting for the I/Os
// still in flight after a failed submission.
const drainTries = 100

// newUringWorker turns w into an io_uring worker of depth slots.
func newUringWorker(w *worker, depth int) *uringWorker {
	u := &uringWorker{worker: w, depth: depth, fd: int(w.f.fd), bufs: make([][]byte, depth), offs: make([]int64, depth),
		issued: make([]time.Duration, depth), waiting: make([]int, 0, depth), base: time.Now()}
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
	for slot := range u.depth {
		u.prepare(r, slot)
	}
	inFlight := 0
	for len(u.waiting) > 0 || inFlight > 0 {
		took, err := u.submit(r)
		inFlight += took
		if err != nil {
			report(err)
			u.drain(r, inFlight)
			return
		}
		if int32(inFlight) > u.counts.maxInFlight.Load() {
			u.counts.maxInFlight.Store(int32(inFlight))
		}
		done, failed := u.reap(r, stop, report)
		inFlight -= done
		if failed {
			u.backoff(stop)
		}
	}
}

// submit hands the waiting I/Os to the kernel, one io_uring_enter each as
// fio does (iodepth_batch_submit=1), the last one also waiting for a
// completion; with none waiting it only waits. One enter for several I/Os
// would be cheaper, but the kernel plugs such a batch and dispatches it
// to the device at once, and completions then come in bunches: p50 was
// 15–30 % above fio's at iodepth 8 and 32 (the mean unchanged), and 0–5 %
// below it submitting one by one. It returns how many the kernel took.
func (u *uringWorker) submit(r *ring) (int, error) {
	if len(u.waiting) == 0 {
		_, err := r.wait()
		return 0, err
	}
	took := 0
	for took < len(u.waiting) {
		last := took == len(u.waiting)-1
		u.issued[u.waiting[took]] = time.Since(u.base)
		n, err := r.submitN(1, boolToUint32(last))
		if err != nil {
			return took, err
		}
		if n == 0 {
			break // not taken: tried again after the next completions
		}
		took++
	}
	u.waiting = u.waiting[:copy(u.waiting, u.waiting[took:])]
	return took, nil
}

// boolToUint32 is 1 for true.
func boolToUint32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// prepare queues slot's next I/O at a random block.
func (u *uringWorker) prepare(r *ring, slot int) {
	off := u.randomOffset()
	if u.write {
		u.restamp(u.bufs[slot])
	}
	u.offs[slot] = off
	r.prepare(u.write, u.fd, u.bufs[slot], off, uint64(slot))
	u.waiting = append(u.waiting, slot)
}

// reap records every completion ready and, unless stopped, prepares the
// slot's next I/O. It returns how many completed and whether one failed.
func (u *uringWorker) reap(r *ring, stop *atomic.Bool, report func(error)) (int, bool) {
	done := time.Since(u.base)
	head, tail := r.ready()
	failed := false
	for i := head; i != tail; i++ {
		c := r.cqe(i)
		slot := int(c.userData)
		if err := u.check(c.res, slot); err != nil {
			report(err)
			failed = true
		} else {
			u.shard.Record(done - u.issued[slot])
		}
		if !stop.Load() {
			u.prepare(r, slot)
		}
	}
	r.consume(tail)
	u.counts.completed.Add(int64(tail - head))
	return int(tail - head), failed
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
