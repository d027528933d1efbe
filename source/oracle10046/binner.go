package oracle10046

import (
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

const (
	// defaultInterval is the binning interval when the options give none.
	defaultInterval = 3 * time.Second
	// maxSpanMicros is how far (in tim µs) a wait may be from its anchor;
	// beyond it the tim is unusable.
	maxSpanMicros = 400 * 24 * 3600 * 1e6
)

// binner maps waits' tims to the wall clock and attributes them, by their
// end time, to windows of one interval aligned on multiples of the interval
// since the Unix epoch (see stream.Binner, which works in µs here).
//
// Waits may arrive up to one interval out of order (trcsess merges
// interleave processes, and re-anchoring moves the clock by up to a few ms).
// A wait that is further back in time (on the wall clock or on the tim
// clock), a file boundary, or a jump of over a month ends the run:
// everything open is emitted and a new run starts, possibly overlapping
// earlier intervals. On relative time each run starts at its first wait,
// in the window after the previous run.
type binner struct {
	bins     *stream.Binner
	cfg      stream.BinnerConfig
	width    int64 // µs
	warn     func(line int)
	anchor   anchor
	relative bool
	warned   bool
	placed   bool  // a wait was placed: a new relative run restarts the clock
	lastTim  int64 // tim of the last wait placed
	line     int   // line of the wait being placed, for warnings
	// ranges is, per series, the bucket range its histograms have used:
	// new histograms are sized to it so recording never grows them.
	ranges []bucketRange
}

// bucketRange is a range [lo, hi] of bucket indexes at hist.ExactScale.
type bucketRange struct {
	lo, hi int
	ok     bool
}

func newBinner(src string, interval time.Duration, emit func(stream.Interval) error, keys *[]stream.Key, warn func(int)) *binner {
	if interval <= 0 {
		interval = defaultInterval
	}
	b := &binner{warn: warn}
	b.cfg = stream.BinnerConfig{Source: src, Interval: interval, Tick: time.Microsecond, Late: stream.LateNewRun,
		OnLate:  func() { b.warnBackwards() },
		Key:     func(s int) stream.Key { return (*keys)[s] },
		NewHist: b.newHist, Emitted: b.noteRange, Emit: emit}
	b.bins = stream.NewBinner(b.cfg)
	b.width = int64(b.bins.Interval() / time.Microsecond)
	return b
}

// setRelative bins on time relative to the first wait; it is called before
// any wait is placed.
func (b *binner) setRelative() {
	b.relative, b.cfg.Relative = true, true
	b.bins = stream.NewBinner(b.cfg)
}

func (b *binner) setAnchor(a anchor) {
	b.anchor = a
	b.bins.SetLocation(a.loc)
}

// toWall maps a tim to µs since the epoch; ok is false when the tim is too
// far from the anchor to trust.
func (b *binner) toWall(tim int64) (int64, bool) {
	d := tim - b.anchor.tim // both are non-negative: no overflow
	if d > maxSpanMicros || d < -maxSpanMicros {
		return 0, false
	}
	return b.anchor.wall + d, true
}

// add places a wait (recording it only when keep); placed is false when its
// tim cannot be placed on the clock.
func (b *binner) add(w heldWait, keep bool) (placed bool, err error) {
	wall, ok := b.toWall(w.tim)
	b.line = w.line
	if b.bins.Running() {
		timBack := b.lastTim-w.tim > b.width
		if timBack {
			b.warnBackwards()
		}
		if ok && b.relative {
			// Place would end the run (back on the wall clock, or a
			// jump) only after the clock is read: end it here, so that
			// the new run's clock starts at this wait.
			if err := b.bins.CheckRun(wall); err != nil {
				return true, err
			}
		}
		if timBack || w.brk || (!ok && b.relative) {
			if err := b.bins.EndRun(); err != nil {
				return true, err
			}
		}
	}
	if !b.bins.Running() && b.relative && b.placed {
		// Relative runs are laid end to end: this one starts here.
		b.anchor = anchor{wall: 0, tim: w.tim, loc: time.UTC}
		wall, ok = 0, true
	}
	if !ok {
		return false, nil
	}
	if err := b.bins.Place(wall); err != nil {
		return true, err
	}
	b.placed, b.lastTim = true, w.tim
	if keep {
		h := b.bins.Hist(int(w.series))
		if w.ela == 0 {
			h.ZeroCount++ // [0, 1) µs; adds nothing to the sum
		} else {
			_ = h.Record(float64(w.ela)) // ela > 0: no error
		}
	}
	return true, nil
}

// warnBackwards reports, once, that time went backwards.
func (b *binner) warnBackwards() {
	if !b.warned {
		b.warned = true
		b.warn(b.line)
	}
}

// endRun emits everything still open.
func (b *binner) endRun() error { return b.bins.EndRun() }

// newHist returns an empty histogram for series s, sized to the buckets
// the series has used so far.
func (b *binner) newHist(s int) *hist.Histogram {
	h := hist.NewExact(hist.Microsecond, 0)
	if s < len(b.ranges) && b.ranges[s].ok {
		r := b.ranges[s]
		h.Offset, h.Counts = r.lo, make([]float64, r.hi-r.lo+1)
	}
	return h
}

// noteRange widens the series' bucket range to what h used, then trims h's
// unused buckets at both ends.
func (b *binner) noteRange(s int, h *hist.Histogram) {
	for s >= len(b.ranges) {
		b.ranges = append(b.ranges, bucketRange{})
	}
	if len(h.Counts) == 0 {
		return
	}
	lo, hi := h.Offset, h.Offset+len(h.Counts)-1
	if r := &b.ranges[s]; !r.ok {
		*r = bucketRange{lo: lo, hi: hi, ok: true}
	} else {
		r.lo, r.hi = min(r.lo, lo), max(r.hi, hi)
	}
	first, last := 0, len(h.Counts)-1
	for first <= last && h.Counts[first] == 0 {
		first++
	}
	for last >= first && h.Counts[last] == 0 {
		last--
	}
	if first > last {
		h.Counts, h.Offset = nil, 0
		return
	}
	h.Counts, h.Offset = h.Counts[first:last+1], h.Offset+first
}
