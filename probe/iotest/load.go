package iotest

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/latscope/latscope/internal/pace"
	"github.com/latscope/latscope/probe/loadtest"
)

const (
	// alignment is the buffer alignment O_DIRECT needs on any device.
	alignment = 4096
	// errorBackoff slows a reader down after a failed I/O so that a
	// persistent error does not spin a core.
	errorBackoff = 10 * time.Millisecond
)

// worker issues random block-aligned I/Os to one file.
type worker struct {
	f      rawFile
	write  bool
	buf    []byte
	rng    *rand.Rand
	blocks int64
	bs     int64
	shard  *loadtest.Recorder
	stamp  uint64
	counts ioCounts
}

// ioCounts are a worker's own tallies, read when its step ends.
type ioCounts struct {
	completed   atomic.Int64 // I/Os completed, failed ones included
	maxInFlight atomic.Int32 // the most I/Os it had in flight at once
}

// newWorker returns a worker on f; writes go to f.writer.
func newWorker(f *testFile, bs int, write bool, s *loadtest.Recorder) *worker {
	w := &worker{
		f:      newRawFile(f.reader),
		write:  write,
		buf:    alignedBlock(bs),
		rng:    rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		blocks: f.size / int64(bs),
		bs:     int64(bs),
		shard:  s,
	}
	if write {
		w.f = newRawFile(f.writer)
		w.fillRandom(w.buf)
	}
	w.counts.maxInFlight.Store(1)
	return w
}

// fillRandom fills buf with random bytes, the body of every write.
func (w *worker) fillRandom(buf []byte) {
	for i := 0; i+8 <= len(buf); i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], w.rng.Uint64())
	}
}

// runClosed issues one I/O after the other until stop; failed I/Os go to
// report.
func (w *worker) runClosed(stop *atomic.Bool, report func(error)) {
	for !stop.Load() {
		t0 := time.Now()
		err := w.once()
		elapsed := time.Since(t0)
		if err != nil {
			report(err)
			w.backoff(stop)
			continue
		}
		w.shard.Record(elapsed)
	}
}

// runOpen issues I/Os at Poisson arrivals of rate per second from start
// until end (or abort). Latency counts from the intended start, so an I/O
// delayed by a slow predecessor carries the wait. It returns how many
// arrivals before end were never issued because of abort.
func (w *worker) runOpen(p *pace.Pacer, start, end time.Time, rate float64, abort *atomic.Bool, report func(error)) int64 {
	next := start.Add(w.interarrival(rate))
	for next.Before(end) {
		p.WaitUntil(next, abort.Load)
		if abort.Load() {
			return 1 + int64(end.Sub(next).Seconds()*rate)
		}
		issued := time.Now()
		err := w.once()
		done := time.Now()
		if err != nil {
			report(err)
		} else {
			w.shard.RecordOpen(done.Sub(next), issued.Sub(next))
		}
		next = next.Add(w.interarrival(rate))
	}
	return 0
}

// interarrival draws the exponential gap between two Poisson arrivals.
func (w *worker) interarrival(rate float64) time.Duration {
	return time.Duration(w.rng.ExpFloat64() / rate * float64(time.Second))
}

// backoff waits errorBackoff unless stopped first.
func (w *worker) backoff(stop *atomic.Bool) {
	for end := time.Now().Add(errorBackoff); time.Now().Before(end) && !stop.Load(); {
		time.Sleep(time.Millisecond)
	}
}

// once reads (or writes) one random block. It allocates nothing unless the
// I/O fails.
func (w *worker) once() error {
	off := w.randomOffset()
	var n int
	var err error
	if w.write {
		w.restamp(w.buf)
		n, err = w.f.WriteAt(w.buf, off)
	} else {
		n, err = w.f.ReadAt(w.buf, off)
	}
	w.counts.completed.Add(1)
	if err != nil {
		return w.ioError(off, n, err)
	}
	return nil
}

// randomOffset draws the offset of the next block, uniformly with repeats.
func (w *worker) randomOffset() int64 { return w.rng.Int64N(w.blocks) * w.bs }

// ioError says which I/O failed: n bytes done of a block at off.
func (w *worker) ioError(off int64, n int, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the region is whole blocks inside the file: EOF is wrong
	}
	verb := "read"
	if w.write {
		verb = "write"
	}
	return fmt.Errorf("%s of %d bytes at offset %d (did %d): %w", verb, w.bs, off, n, err)
}

// restamp makes every 512-byte sector of buf, the next write, unique, so
// that no layer can deduplicate or compress the written blocks away.
func (w *worker) restamp(buf []byte) {
	w.stamp++
	for i := 0; i+16 <= len(buf); i += sectorSize {
		binary.LittleEndian.PutUint64(buf[i:], w.stamp)
		binary.LittleEndian.PutUint64(buf[i+8:], uint64(i))
	}
}

// alignedBlock returns a size-byte buffer whose first byte is aligned to
// 4096, as O_DIRECT requires; Go's heap does not move objects, so the
// alignment holds for the buffer's life.
func alignedBlock(size int) []byte {
	buf := make([]byte, size+alignment)
	skip := 0
	if rem := int(uintptr(unsafe.Pointer(&buf[0])) & (alignment - 1)); rem != 0 {
		skip = alignment - rem
	}
	return buf[skip : skip+size : skip+size]
}
