package oracle10046

import (
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

const (
	// defaultInterval is the binning interval when the options give none.
	defaultInterval = 3 * time.Second
	// maxInterval keeps interval arithmetic far from overflow.
	maxInterval = 31 * 24 * time.Hour
	// maxSpanMicros is how far (in tim µs) a wait may be from its anchor;
	// beyond it the tim is unusable.
	maxSpanMicros = 400 * 24 * 3600 * 1e6
	// maxQuietMicros is the longest silence read as a quiet stretch of
	// one trace; a longer jump forward starts a new run instead.
	maxQuietMicros = 31 * 24 * 3600 * 1e6
)

// binner attributes waits to wall-clock windows of one interval, aligned on
// multiples of the interval since the Unix epoch, by the wait's end time.
//
// A run is a stretch of continuous time. Waits may arrive up to one interval
// out of order (trcsess merges interleave processes, and re-anchoring moves
// the clock by up to a few ms), so the two newest windows stay open: a window
// is emitted once a wait ends more than one interval after its end. Windows
// with no (kept) events are observed quiet time, emitted as one interval per
// quiet stretch. A wait that is further back in time, a file boundary, or a
// jump of over a month ends the run: everything open is emitted and a new run
// starts, possibly overlapping earlier intervals.
type binner struct {
	src   string
	width int64 // µs
	dur   time.Duration
	emit  func(stream.Interval) error
	keys  *[]stream.Key
	warn  func(line int)

	anchor   anchor
	loc      *time.Location
	relative bool
	warned   bool

	running bool
	hi      int64 // newest window index of the run
	next    int64 // first window index not yet emitted
	maxWall int64 // latest wait end of the run, µs
	lastTim int64
	hadRun  bool
	runEnd  int64 // end of the last run, µs (relative runs follow each other)
	slots   [2]window
	// ranges is, per series, the bucket range its histograms have used:
	// new histograms are sized to it so recording never grows them.
	ranges []bucketRange

	quiet              bool
	quietFrom, quietTo int64 // window indexes [from, to) of pending quiet time
}

// bucketRange is a range [lo, hi] of bucket indexes at hist.ExactScale.
type bucketRange struct {
	lo, hi int
	ok     bool
}

// window is one interval being filled.
type window struct {
	idx   int64
	live  bool
	hists []*hist.Histogram // by series index
	used  []int32
}

func newBinner(src string, interval time.Duration, emit func(stream.Interval) error, keys *[]stream.Key, warn func(int)) binner {
	if interval <= 0 {
		interval = defaultInterval
	}
	interval = min(max(interval, time.Microsecond), maxInterval)
	width := int64(interval / time.Microsecond)
	return binner{src: src, width: width, dur: time.Duration(width) * time.Microsecond, emit: emit, keys: keys, warn: warn, loc: time.UTC}
}

func (b *binner) setAnchor(a anchor) {
	b.anchor = a
	if a.loc != nil {
		b.loc = a.loc
	}
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
	if b.running {
		back := b.lastTim-w.tim > b.width || (ok && b.maxWall-wall > b.width)
		jump := ok && wall-b.maxWall > maxQuietMicros
		if back || w.brk || jump || (!ok && b.relative) {
			if back && !b.warned {
				b.warned = true
				b.warn(w.line)
			}
			if err := b.endRun(); err != nil {
				return true, err
			}
		}
	}
	if !b.running && b.relative && b.hadRun {
		// Relative runs are laid end to end.
		b.anchor = anchor{wall: b.runEnd, tim: w.tim, loc: time.UTC}
		wall, ok = b.runEnd, true
	}
	if !ok {
		return false, nil
	}
	k := floorDiv(wall, b.width)
	switch {
	case !b.running:
		b.running, b.hi, b.next, b.maxWall = true, k, k, wall
	case wall > b.maxWall:
		if k > b.hi {
			if err := b.emitBefore(k - 1); err != nil {
				return true, err
			}
			b.hi = k
		}
		b.maxWall = wall
	}
	// Only at the start of a run can a late wait precede every window.
	b.next = min(b.next, k)
	b.lastTim = w.tim
	win, err := b.window(k)
	if err != nil {
		return true, err
	}
	if keep {
		win.record(w.series, w.ela, b.ranges)
	}
	return true, nil
}

// window returns the open window k, opening it if needed.
func (b *binner) window(k int64) (*window, error) {
	w := &b.slots[k&1]
	if w.live && w.idx != k {
		// Cannot happen (open windows are hi-1 and hi); stay safe anyway.
		if err := b.emitWindow(w); err != nil {
			return nil, err
		}
	}
	if !w.live {
		w.live, w.idx = true, k
	}
	return w, nil
}

func (w *window) record(s int32, ela int64, ranges []bucketRange) {
	if int(s) >= len(w.hists) {
		w.hists = append(w.hists, make([]*hist.Histogram, int(s)-len(w.hists)+1)...)
	}
	h := w.hists[s]
	if h == nil {
		h = hist.NewExact(hist.Microsecond, 0)
		if int(s) < len(ranges) && ranges[s].ok {
			r := ranges[s]
			h.Offset, h.Counts = r.lo, make([]float64, r.hi-r.lo+1)
		}
		w.hists[s] = h
		w.used = append(w.used, s)
	}
	if ela == 0 {
		h.ZeroCount++ // [0, 1) µs; adds nothing to the sum
		return
	}
	_ = h.Record(float64(ela)) // ela > 0: no error
}

// noteRange widens the series' bucket range to what h used, then trims h's
// unused buckets at both ends.
func (b *binner) noteRange(s int32, h *hist.Histogram) {
	for int(s) >= len(b.ranges) {
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

// emitBefore emits, in time order, every window before index limit,
// including the quiet ones.
func (b *binner) emitBefore(limit int64) error {
	for {
		w := b.oldestLive()
		if w == nil || w.idx >= limit {
			break
		}
		b.quietUpTo(w.idx)
		if err := b.emitWindow(w); err != nil {
			return err
		}
		b.next = max(b.next, w.idx+1)
	}
	b.quietUpTo(limit)
	return nil
}

func (b *binner) oldestLive() *window {
	a, c := &b.slots[0], &b.slots[1]
	switch {
	case a.live && c.live:
		if a.idx < c.idx {
			return a
		}
		return c
	case a.live:
		return a
	case c.live:
		return c
	}
	return nil
}

// quietUpTo marks the windows from next up to x (excluded) as quiet.
func (b *binner) quietUpTo(x int64) {
	if x <= b.next {
		return
	}
	if !b.quiet {
		b.quiet, b.quietFrom = true, b.next
	}
	b.quietTo, b.next = x, x
}

// emitWindow emits a window with events, or adds an empty one to the quiet
// stretch.
func (b *binner) emitWindow(w *window) error {
	w.live = false
	if len(w.used) == 0 {
		b.quietUpTo(w.idx + 1)
		return nil
	}
	if err := b.flushQuiet(); err != nil {
		return err
	}
	slices.Sort(w.used) // series in first-seen order
	series := make([]stream.SeriesHist, 0, len(w.used))
	keys := *b.keys
	for _, s := range w.used {
		b.noteRange(s, w.hists[s])
		series = append(series, stream.SeriesHist{Key: keys[s], Hist: w.hists[s]})
		w.hists[s] = nil
	}
	w.used = w.used[:0]
	return b.emit(stream.Interval{Source: b.src, Start: b.start(w.idx), Duration: b.dur, Relative: b.relative, Series: series})
}

// flushQuiet emits the pending quiet stretch as one interval.
func (b *binner) flushQuiet() error {
	if !b.quiet {
		return nil
	}
	b.quiet = false
	n := b.quietTo - b.quietFrom
	return b.emit(stream.Interval{Source: b.src, Start: b.start(b.quietFrom), Duration: time.Duration(n) * b.dur, Relative: b.relative})
}

// endRun emits everything still open.
func (b *binner) endRun() error {
	if !b.running {
		return nil
	}
	if err := b.emitBefore(b.hi + 1); err != nil {
		return err
	}
	if err := b.flushQuiet(); err != nil {
		return err
	}
	b.running, b.hadRun = false, true
	b.runEnd = (b.hi + 1) * b.width
	return nil
}

// start returns the start time of window k.
func (b *binner) start(k int64) time.Time {
	t := time.UnixMicro(k * b.width)
	if b.relative {
		return t.UTC()
	}
	return t.In(b.loc)
}

// floorDiv divides rounding towards minus infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
