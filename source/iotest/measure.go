package iotest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

const (
	// zeroPow puts the zero bucket's edge at 2^-10 µs ≈ 1 ns.
	zeroPow = -10
	// alignment is the buffer alignment O_DIRECT needs on any device.
	alignment = 4096
	// errorBackoff slows a reader down after a failed read so that a
	// persistent error does not spin a core.
	errorBackoff = 10 * time.Millisecond
)

// measure runs the readers until ctx is cancelled, emitting one interval
// per cfg.Interval and a last, shorter one when stopped.
func (p *probe) measure(ctx context.Context, sf *scratch, emit func(stream.Interval) error) error {
	key := stream.Key{Event: p.event(sf.reader == sf.buffered), Instance: p.cfg.Dir}
	shards := make([]*shard, p.cfg.Readers)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range shards {
		shards[i] = newShard()
		r := newReader(sf.reader, p.cfg, shards[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.run(done, p.reportReadError)
		}()
	}
	stop := sync.OnceFunc(func() { close(done); wg.Wait() })
	defer stop()

	start := time.Now()
	next := start.Add(p.cfg.Interval)
	timer := time.NewTimer(p.cfg.Interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			stop()
			iv, _ := p.collect(shards, key, start, time.Since(start))
			if iv.Duration > 0 {
				_ = emit(iv) // the consumer may be gone already: we are stopping anyway
			}
			return nil
		case <-timer.C:
			iv, end := p.collect(shards, key, start, time.Since(start))
			start = end
			if sf.reader == sf.buffered {
				dropCache(sf.buffered)
			}
			if err := emit(iv); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			next = nextBoundary(next, end, p.cfg.Interval)
			timer.Reset(time.Until(next))
		}
	}
}

// nextBoundary returns the end of the window that starts at start: the
// boundary after prev on the schedule, skipping boundaries so close that a
// late wake-up (a loaded machine) would make a sliver of a window.
func nextBoundary(prev, start time.Time, interval time.Duration) time.Time {
	next := prev.Add(interval)
	for next.Sub(start) < interval/2 {
		next = next.Add(interval)
	}
	return next
}

// event names the series: "8 KiB random read", with "(page cache)" when
// reads cannot bypass it.
func (p *probe) event(cached bool) string {
	e := formatSize(int64(p.cfg.BlockSize)) + " random read"
	if cached {
		e += " (page cache)"
	}
	return e
}

// collect takes the readers' histograms of the window [start, start+d) and
// returns it as an interval with the start of the next window, which
// follows without a gap. d is measured on the monotonic clock.
func (p *probe) collect(shards []*shard, key stream.Key, start time.Time, d time.Duration) (stream.Interval, time.Time) {
	h := hist.NewExact(hist.Microsecond, zeroPow)
	for _, s := range shards {
		s.drainInto(h)
	}
	iv := stream.Interval{Source: p.name, Start: start.Round(0), Duration: d}
	if h.Count() > 0 && p.opts.KeepEvent(key.Event) {
		iv.Series = []stream.SeriesHist{{Key: key, Hist: h}}
	}
	return iv, start.Add(d)
}

// reportReadError counts a failed read; Diagnostics prints the first few.
func (p *probe) reportReadError(err error) {
	p.diag.MalformedAt(p.name, time.Now(), err.Error())
}

// shard is one reader's histogram of the current window. The lock is
// uncontended except at a window boundary.
type shard struct {
	mu sync.Mutex
	h  *hist.Histogram
}

func newShard() *shard { return &shard{h: hist.NewExact(hist.Microsecond, zeroPow)} }

// record adds one latency in µs.
func (s *shard) record(us float64) {
	s.mu.Lock()
	_ = s.h.Record(us) // a monotonic duration is never negative or NaN
	s.mu.Unlock()
}

// drainInto adds the shard's counts to h and zeroes them. The counts keep
// their length and offset so that recording the next window allocates
// nothing once the latency range has been seen.
func (s *shard) drainInto(h *hist.Histogram) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Merge(s.h)
	s.h.ZeroCount, s.h.Sum = 0, 0
	clear(s.h.Counts)
}

// reader issues random block-aligned reads of the scratch file.
type reader struct {
	f      *os.File
	buf    []byte
	rng    *rand.Rand
	blocks int64
	bs     int64
	shard  *shard
}

func newReader(f *os.File, cfg Config, s *shard) *reader {
	return &reader{
		f:      f,
		buf:    alignedBlock(cfg.BlockSize),
		rng:    rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		blocks: cfg.FileSize / int64(cfg.BlockSize),
		bs:     int64(cfg.BlockSize),
		shard:  s,
	}
}

// run reads until done is closed; failed reads go to report.
func (r *reader) run(done <-chan struct{}, report func(error)) {
	for {
		select {
		case <-done:
			return
		default:
		}
		if err := r.readOnce(); err != nil {
			report(err)
			select {
			case <-done:
				return
			case <-time.After(errorBackoff):
			}
		}
	}
}

// readOnce reads one random block and records its latency. It allocates
// nothing unless the read fails.
func (r *reader) readOnce() error {
	off := r.rng.Int64N(r.blocks) * r.bs
	t0 := time.Now()
	n, err := r.f.ReadAt(r.buf, off)
	elapsed := time.Since(t0)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // the file is written in full: EOF inside it is wrong
		}
		return fmt.Errorf("read of %d bytes at offset %d (got %d): %w", len(r.buf), off, n, err)
	}
	r.shard.record(float64(elapsed) / float64(time.Microsecond))
	return nil
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
