package events

import (
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

const (
	// defaultInterval is the binning interval when --interval is not given.
	defaultInterval = time.Second
	// maxInterval keeps interval arithmetic far from overflow.
	maxInterval = 31 * 24 * time.Hour
	// maxQuiet is the longest silence read as a quiet stretch of one run;
	// a longer jump forward starts a new run.
	maxQuiet = int64(31 * 24 * time.Hour)
	// maxTime bounds event times (ns on the source's clock, ±158 years) so
	// that window arithmetic cannot overflow.
	maxTime = int64(5e18)
)

// binner puts events into windows of one interval, aligned on multiples of
// the interval on the source's clock, and emits one interval per window with
// events and one per quiet stretch between them.
//
// Events may arrive up to one interval out of order (completion lines from
// several CPUs, start times plus latencies), so the two newest windows stay
// open. An event further back in time, or a jump forward of more than a
// month, ends the run: everything open is emitted and a new run starts. On a
// relative clock runs are laid end to end (tools such as biosnoop count
// from their own start, so a second run starts at 0 again); on the wall
// clock a new run may overlap earlier intervals.
type binner struct {
	src      string
	width    int64 // ns
	emit     func(stream.Interval) error
	relative bool
	loc      *time.Location
	onBack   func() // called when time goes backwards and a run ends

	keys     []stream.Key
	keyIndex map[stream.Key]int

	running bool
	shift   int64 // ns added to the source's times in this run
	hi      int64 // newest window of the run
	next    int64 // first window not yet emitted
	maxT    int64 // latest event time of the run (shifted)
	hadRun  bool
	runEnd  int64 // window index just after the last run
	slots   [2]window

	quiet              bool
	quietFrom, quietTo int64 // windows [from, to) of pending quiet time
}

// window is one interval being filled.
type window struct {
	idx   int64
	live  bool
	hists []*hist.Histogram // by series index
	used  []int
}

func newBinner(src string, interval time.Duration, relative bool, loc *time.Location, emit func(stream.Interval) error) *binner {
	if interval <= 0 {
		interval = defaultInterval
	}
	interval = min(max(interval, time.Microsecond), maxInterval)
	if loc == nil {
		loc = time.UTC
	}
	return &binner{src: src, width: int64(interval), emit: emit, relative: relative, loc: loc,
		keyIndex: map[stream.Key]int{}, onBack: func() {}}
}

// add records one event of latency v (in unit) that happened at t ns on the
// source's clock (|t| ≤ maxTime).
func (b *binner) add(t int64, key stream.Key, v float64, unit hist.Unit) error {
	if b.running {
		tt := t + b.shift
		// A relative run laid after another must not reach back into it.
		back := b.maxT-tt > b.width || (b.relative && floorDiv(tt, b.width) < b.runEnd)
		if back || tt-b.maxT > maxQuiet {
			if back {
				b.onBack()
			}
			if err := b.endRun(); err != nil {
				return err
			}
		}
	}
	if !b.running {
		b.startRun(t)
	}
	tt := t + b.shift
	k := floorDiv(tt, b.width)
	if tt > b.maxT {
		if k > b.hi {
			if err := b.emitBefore(k - 1); err != nil {
				return err
			}
			b.hi = k
		}
		b.maxT = tt
	}
	b.next = min(b.next, k) // only at the start of a run can an event precede every window
	w, err := b.window(k)
	if err != nil {
		return err
	}
	w.record(b.series(key), v, unit)
	return nil
}

// startRun begins a run at an event at t: relative runs start where the
// previous one ended (the first at 0), wall-clock runs at their own time.
func (b *binner) startRun(t int64) {
	b.shift = 0
	if b.relative {
		b.shift = b.runEnd*b.width - floorDiv(t, b.width)*b.width
	}
	tt := t + b.shift
	k := floorDiv(tt, b.width)
	b.running, b.hi, b.next, b.maxT = true, k, k, tt
}

// series returns the index of a key, adding it on first use.
func (b *binner) series(key stream.Key) int {
	i, ok := b.keyIndex[key]
	if !ok {
		i = len(b.keys)
		b.keys = append(b.keys, key)
		b.keyIndex[key] = i
	}
	return i
}

// window returns the open window k, opening it if needed.
func (b *binner) window(k int64) (*window, error) {
	w := &b.slots[k&1]
	if w.live && w.idx != k {
		// Cannot happen (the open windows are hi−1 and hi); never lose
		// its events anyway.
		if err := b.emitWindow(w); err != nil {
			return nil, err
		}
	}
	if !w.live {
		w.live, w.idx = true, k
	}
	return w, nil
}

// record adds one event to series s.
func (w *window) record(s int, v float64, unit hist.Unit) {
	if s >= len(w.hists) {
		w.hists = append(w.hists, make([]*hist.Histogram, s-len(w.hists)+1)...)
	}
	h := w.hists[s]
	if h == nil {
		h = hist.NewExact(unit, zeroPow(unit))
		w.hists[s] = h
		w.used = append(w.used, s)
	}
	if unit != h.Unit {
		v = v * float64(unit) / float64(h.Unit)
	}
	_ = h.Record(v) // callers pass finite v ≥ 0: no error
}

// zeroPow puts the zero bucket's edge just below 1 ns in any unit, so that
// fractional latencies (0.24 ms) keep their resolution and only true zeros
// land in it.
func zeroPow(unit hist.Unit) int {
	switch unit {
	case hist.Microsecond:
		return -10
	case hist.Millisecond:
		return -20
	case hist.Second:
		return -30
	}
	return 0
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

// emitWindow emits a window with events (every live window has some).
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
	for _, s := range w.used {
		series = append(series, stream.SeriesHist{Key: b.keys[s], Hist: w.hists[s]})
		w.hists[s] = nil
	}
	w.used = w.used[:0]
	return b.emit(stream.Interval{Source: b.src, Start: b.start(w.idx), Duration: time.Duration(b.width), Relative: b.relative, Series: series})
}

// flushQuiet emits the pending quiet stretch as one interval.
func (b *binner) flushQuiet() error {
	if !b.quiet {
		return nil
	}
	b.quiet = false
	n := b.quietTo - b.quietFrom
	return b.emit(stream.Interval{Source: b.src, Start: b.start(b.quietFrom), Duration: time.Duration(n * b.width), Relative: b.relative})
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
	b.runEnd = b.hi + 1
	return nil
}

// start returns the start time of window k.
func (b *binner) start(k int64) time.Time {
	t := time.Unix(0, k*b.width)
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
