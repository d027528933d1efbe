package stream

import (
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
)

const (
	// minBinInterval and maxBinInterval bound a Binner's interval: below
	// a microsecond nothing is measured, above a month window arithmetic
	// comes near overflow.
	minBinInterval = time.Microsecond
	maxBinInterval = 31 * 24 * time.Hour
	// maxQuiet is the longest silence a LateNewRun binner reads as a quiet
	// stretch of one run; a longer jump forward starts a new run.
	maxQuiet = 31 * 24 * time.Hour
)

// LatePolicy says what a Binner does with an event older than its open
// windows.
type LatePolicy int

const (
	// LateNewRun ends the run at such an event (everything open is
	// emitted) and starts a new one with it; a jump forward of more than a
	// month does too. Suits inputs that may be concatenations of several
	// recordings (traces, tool outputs).
	LateNewRun LatePolicy = iota
	// LateToOldest counts such an event in the oldest open window; the
	// run never ends before EndRun. Suits one growing input (a log).
	LateToOldest
)

// BinnerConfig configures a Binner. Source, Interval, Key, NewHist and Emit
// are required.
type BinnerConfig struct {
	Source string
	// Interval is the window width, clamped to [1µs, 31 days] and rounded
	// down to a multiple of Tick.
	Interval time.Duration
	// Tick is the unit of the times given to the Binner, a divisor of a
	// second (0: nanoseconds).
	Tick time.Duration
	// Relative: times have no wall clock (Interval.Relative); each run is
	// laid after the previous one, the first one starting in window 0, so
	// that a source whose clock restarts (a tool run again) does not overlap
	// itself.
	Relative bool
	// Location is the zone of emitted start times (nil: UTC; relative
	// times are always UTC).
	Location *time.Location
	Late     LatePolicy
	// OnLate, if set, is called for each late event (before the run it
	// ends is emitted, under LateNewRun).
	OnLate func()
	// Key names series i in emitted intervals, which list their series
	// by index (number them in first-seen order).
	Key func(series int) Key
	// NewHist returns an empty histogram for series i in a new window.
	NewHist func(series int) *hist.Histogram
	// Emitted, if set, sees each histogram of a window just before the
	// window is emitted (to learn its extent, trim it...).
	Emitted func(series int, h *hist.Histogram)
	Emit    func(Interval) error
}

// Binner puts per-event latencies into windows of one interval, aligned on
// multiples of the interval on the source's clock, and emits one Interval
// per window with events and one per quiet stretch between them (windows
// the source observed without events).
//
// Events may arrive up to one interval out of order (completion lines from
// several CPUs or processes), so the two newest windows stay open: a window
// is emitted once an event lands more than one window after it. What
// happens to an event further back is the config's LatePolicy.
//
// A run is a stretch of continuous time: Place starts one, EndRun (or a late
// event under LateNewRun) emits everything open and ends it. Runs on the wall
// clock may overlap earlier ones; relative runs are laid end to end.
//
// Use: Place(t) for each event, then Hist(series) of each series it counts
// in, and record into it. Adding an event allocates nothing once its
// window's histograms exist.
type Binner struct {
	cfg      BinnerConfig
	tick     int64 // ns per unit of time
	perSec   int64 // units per second
	width    int64 // window width in units
	dur      time.Duration
	maxQuiet int64 // in units
	loc      *time.Location

	running bool
	shift   int64 // added to the caller's times in this run (relative runs)
	hi      int64 // newest window of the run
	next    int64 // first window not yet emitted
	floor   int64 // windows below it are closed to the run (LateNewRun)
	maxT    int64 // latest event time of the run (shifted)
	runEnd  int64 // window after the last run
	slots   [2]binWindow
	cur     *binWindow // the window of the last Place

	quiet              bool
	quietFrom, quietTo int64 // windows [from, to) of pending quiet time
}

// binWindow is one window being filled.
type binWindow struct {
	idx   int64
	live  bool
	hists []*hist.Histogram // by series
	used  []int             // series with a histogram
}

// NewBinner returns a binner for cfg.
func NewBinner(cfg BinnerConfig) *Binner {
	tick := min(max(cfg.Tick, time.Nanosecond), time.Second)
	interval := min(max(cfg.Interval, minBinInterval, tick), maxBinInterval)
	width := int64(interval / tick)
	loc := cfg.Location
	if loc == nil {
		loc = time.UTC
	}
	return &Binner{cfg: cfg, tick: int64(tick), perSec: int64(time.Second / tick), width: width,
		dur: time.Duration(width) * tick, maxQuiet: int64(maxQuiet / tick), loc: loc}
}

// Interval returns the window width.
func (b *Binner) Interval() time.Duration { return b.dur }

// SetLocation sets the zone of the start times emitted from now on.
func (b *Binner) SetLocation(loc *time.Location) {
	if loc != nil {
		b.loc = loc
	}
}

// Running says whether a run is open (an event was placed since the last
// EndRun).
func (b *Binner) Running() bool { return b.running }

// Place makes t (in Tick units on the source's clock) the time of the next
// event: the windows it closes are emitted and Hist then returns histograms
// of its window. Callers keep t far enough from the int64 limits (a month
// and a few intervals) that window arithmetic cannot overflow.
func (b *Binner) Place(t int64) error {
	if b.running && b.cfg.Late == LateNewRun && b.breaks(t+b.shift) {
		if err := b.CheckRun(t); err != nil {
			return err
		}
	}
	if !b.running {
		b.startRun(t)
	}
	tt := t + b.shift
	k := windowOf(tt, b.width)
	if k < b.next && b.cfg.Late == LateToOldest {
		b.late()
		k = b.next
	}
	if k > b.hi {
		if err := b.emitBefore(k - 1); err != nil {
			return err
		}
		b.hi = k
	}
	b.maxT = max(b.maxT, tt)
	b.next = min(b.next, k) // only at the start of a run can an event precede every window
	if w := &b.slots[k&1]; w.live && w.idx == k {
		b.cur = w // the common case, kept short
		return nil
	}
	w, err := b.window(k)
	if err != nil {
		return err
	}
	b.cur = w
	return nil
}

// CheckRun ends the run if an event at t cannot join it (LateNewRun: more
// than one interval older than the newest event, in a window already closed,
// or over a month after it), as Place does first. Sources that must reset
// their clock at a new run call it, then Running, before computing t anew.
func (b *Binner) CheckRun(t int64) error {
	if !b.running || b.cfg.Late != LateNewRun {
		return nil
	}
	tt := t + b.shift
	if !b.breaks(tt) {
		return nil
	}
	if b.maxT-tt > b.width || windowOf(tt, b.width) < b.floor {
		b.late()
	}
	return b.EndRun()
}

// breaks says an event at tt (shifted) cannot join the run.
func (b *Binner) breaks(tt int64) bool {
	return b.maxT-tt > b.width || tt-b.maxT > b.maxQuiet || windowOf(tt, b.width) < b.floor
}

func (b *Binner) late() {
	if b.cfg.OnLate != nil {
		b.cfg.OnLate()
	}
}

// startRun begins a run at an event at t: relative runs start in the window
// after the previous run (keeping t's offset in its window), wall-clock runs
// at their own time.
func (b *Binner) startRun(t int64) {
	b.shift, b.floor = 0, minWindow
	if b.cfg.Relative {
		b.shift = b.runEnd*b.width - windowOf(t, b.width)*b.width
		b.floor = b.runEnd
	}
	tt := t + b.shift
	k := windowOf(tt, b.width)
	b.running, b.hi, b.next, b.maxT = true, k, k, tt
}

// minWindow is a window index below every reachable one.
const minWindow = -1 << 62

// Hist returns the histogram of series in the window of the last Place,
// making it with NewHist on first use. It is valid until the next call of
// Place, CheckRun, Flush or EndRun.
func (b *Binner) Hist(series int) *hist.Histogram {
	if hs := b.cur.hists; series < len(hs) && hs[series] != nil {
		return hs[series]
	}
	return b.newHist(series)
}

func (b *Binner) newHist(series int) *hist.Histogram {
	w := b.cur
	if series >= len(w.hists) {
		w.hists = append(w.hists, make([]*hist.Histogram, series-len(w.hists)+1)...)
	}
	h := b.cfg.NewHist(series)
	w.hists[series] = h
	w.used = append(w.used, series)
	return h
}

// Flush emits the windows that ended by t (following a live input, where no
// newer event may come to close them), with the quiet time up to t.
func (b *Binner) Flush(t int64) error {
	if !b.running {
		return nil
	}
	if err := b.emitBefore(windowOf(t+b.shift, b.width)); err != nil {
		return err
	}
	return b.flushQuiet()
}

// EndRun emits everything still open and ends the run.
func (b *Binner) EndRun() error {
	if !b.running {
		return nil
	}
	if err := b.emitBefore(b.hi + 1); err != nil {
		return err
	}
	if err := b.flushQuiet(); err != nil {
		return err
	}
	b.running, b.cur = false, nil
	b.runEnd = max(b.hi, b.next-1) + 1
	return nil
}

// window returns the open window k, opening it if needed.
func (b *Binner) window(k int64) (*binWindow, error) {
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

// emitBefore emits, in time order, every window before index limit,
// including the quiet ones.
func (b *Binner) emitBefore(limit int64) error {
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
	b.floor = max(b.floor, b.next)
	return nil
}

func (b *Binner) oldestLive() *binWindow {
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
func (b *Binner) quietUpTo(x int64) {
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
func (b *Binner) emitWindow(w *binWindow) error {
	w.live = false
	if w == b.cur {
		b.cur = nil
	}
	if len(w.used) == 0 {
		b.quietUpTo(w.idx + 1)
		return nil
	}
	if err := b.flushQuiet(); err != nil {
		return err
	}
	slices.Sort(w.used) // series by index: callers number them in first-seen order
	series := make([]SeriesHist, 0, len(w.used))
	for _, s := range w.used {
		if b.cfg.Emitted != nil {
			b.cfg.Emitted(s, w.hists[s])
		}
		series = append(series, SeriesHist{Key: b.cfg.Key(s), Hist: w.hists[s]})
		w.hists[s] = nil
	}
	w.used = w.used[:0]
	return b.cfg.Emit(Interval{Source: b.cfg.Source, Start: b.start(w.idx), Duration: b.dur, Relative: b.cfg.Relative, Series: series})
}

// flushQuiet emits the pending quiet stretch as one interval.
func (b *Binner) flushQuiet() error {
	if !b.quiet {
		return nil
	}
	b.quiet = false
	n := b.quietTo - b.quietFrom
	return b.cfg.Emit(Interval{Source: b.cfg.Source, Start: b.start(b.quietFrom), Duration: time.Duration(n) * b.dur, Relative: b.cfg.Relative})
}

// start returns the start time of window k.
func (b *Binner) start(k int64) time.Time {
	x := k * b.width
	t := time.Unix(x/b.perSec, x%b.perSec*b.tick) // time.Unix normalises a negative remainder
	if b.cfg.Relative {
		return t.UTC()
	}
	return t.In(b.loc)
}

// windowOf returns the window of time t for windows of width w: t/w
// rounded towards minus infinity.
func windowOf(t, w int64) int64 {
	q := t / w
	if t%w != 0 && (t < 0) != (w < 0) {
		q--
	}
	return q
}
