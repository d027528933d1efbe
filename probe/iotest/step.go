package iotest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/pace"
	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/stream"
)

// drainGrace is how long an open-loop step waits after its end for the
// I/Os scheduled before the end; what is still unissued then is counted as
// not issued.
const drainGrace = 2 * time.Second

// Result is what a test measured, step by step.
type Result struct {
	Path string
	// Kind is "scratch file", "file" or "block device".
	Kind string
	// Direct says the reads bypassed the page cache; WhyCached says why
	// not.
	Direct    bool
	WhyCached string
	BlockSize int
	// WorkingSet is the bytes the random offsets cover, over all files.
	WorkingSet int64
	Files      int
	Write      bool
	OpenLoop   bool
	// Engine is psync or io_uring.
	Engine    string
	Steps     []StepResult
	Placement pace.Placement
	// SpinMargin is the open loop's calibrated spin before each arrival.
	SpinMargin time.Duration
}

// StepResult is one step's measurement.
type StepResult struct {
	loadtest.Step
	// IssueDelay is the open loop's issue time − intended time, in µs:
	// small when the generator kept its schedule, growing when I/Os queued
	// behind slow ones.
	IssueDelay *hist.Histogram
	// NotIssued counts open-loop arrivals before the step's end that were
	// never issued (the device could not keep up within the grace time,
	// or the test was stopped).
	NotIssued int64
	// Complete is false for a step cut short by cancellation.
	Complete bool
	// Start is the wall-clock time the measured part began (after the
	// warm-up), on the intervals' clock: where the step shows on a heat map.
	Start time.Time
	// Readers and IODepth make up the step's Concurrency (readers ×
	// iodepth I/Os in flight).
	Readers, IODepth int
	// Completed counts the I/Os the workers saw complete, warm-up
	// included; MaxInFlight is the most one worker had in flight.
	Completed   int64
	MaxInFlight int
}

// Result returns the steps measured so far; call it after Run returns.
func (t *Test) Result() Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.result
	r.Steps = append([]StepResult(nil), r.Steps...)
	return r
}

// setTarget records what the test reads.
func (t *Test) setTarget(tg *target) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ws int64
	for _, f := range tg.files {
		ws += f.size
	}
	t.result = Result{
		Path: t.cfg.Path, Kind: tg.kind, Direct: tg.direct, WhyCached: tg.whyCached,
		BlockSize: t.cfg.BlockSize, WorkingSet: ws, Files: len(tg.files), Write: t.cfg.Write, Engine: t.cfg.Engine,
		OpenLoop: t.cfg.openLoop(), Placement: pace.CurrentPlacement(),
	}
}

func (t *Test) addStep(s StepResult) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.result.Steps = append(t.result.Steps, s)
}

// now is what the test is doing, for Status.
type now struct {
	step, steps         int
	lv                  level
	start, warmEnd, end time.Time
}

// Status says what the test is doing: "step 2/6: 2 readers, warm-up" or
// "step 3/6: 5000 IOPS, 12 s left"; "" before the first step.
func (t *Test) Status() string {
	t.mu.Lock()
	n := t.now
	t.mu.Unlock()
	if n.steps == 0 {
		return ""
	}
	load := fmt.Sprintf("%d reader", n.lv.readers)
	if n.lv.readers != 1 {
		load += "s"
	}
	if n.lv.depth > 1 {
		load += fmt.Sprintf(" × iodepth %d", n.lv.depth)
	}
	if n.lv.rate > 0 {
		load = fmt.Sprintf("%g I/Os per second (Poisson)", n.lv.rate)
	}
	phase := ""
	switch now := time.Now(); {
	case now.Before(n.warmEnd):
		phase = ", warm-up"
	case !n.end.IsZero():
		phase = fmt.Sprintf(", %s left", max(n.end.Sub(now), 0).Round(time.Second))
	}
	return fmt.Sprintf("step %d/%d: %s%s", n.step, n.steps, load, phase)
}

func (t *Test) setNow(n now) {
	t.mu.Lock()
	t.now = n
	t.mu.Unlock()
}

// level is one step's load: readers (each with depth I/Os in flight) for
// a closed loop, a rate for an open one.
type level struct {
	readers int
	depth   int
	rate    float64
}

// levels lists the steps in order.
func (c Config) levels() []level {
	var ls []level
	if c.openLoop() {
		for _, r := range c.Rates {
			ls = append(ls, level{readers: c.Workers, depth: 1, rate: r})
		}
		return ls
	}
	depths := c.IODepths
	if len(depths) == 0 {
		depths = []int{1}
	}
	// check allows only one of the two lists to sweep, so this is a
	// sweep of one of them.
	for _, n := range c.Steps {
		for _, d := range depths {
			ls = append(ls, level{readers: n, depth: d})
		}
	}
	return ls
}

// runSteps runs every step in order; a cancelled context ends the test
// after the current step's last interval.
func (t *Test) runSteps(ctx context.Context, tg *target, emit func(stream.Interval) error) error {
	var margin time.Duration
	if t.cfg.openLoop() {
		margin = pace.Calibrate()
		t.mu.Lock()
		t.result.SpinMargin = margin
		t.mu.Unlock()
	}
	key := stream.Key{Event: t.event(tg.direct), Instance: t.cfg.Path}
	levels := t.cfg.levels()
	clk := newClock()
	start := clk.base
	for i, lv := range levels {
		// StepDuration 0 runs until cancelled (the iotest:DIR probe); with
		// several steps only the last can run that long.
		sr := &stepRun{test: t, tg: tg, key: key, clock: clk, lv: lv, margin: margin, warmup: t.cfg.Warmup,
			duration: t.cfg.StepDuration, index: i + 1, steps: len(levels)}
		res, err := sr.run(ctx, start, emit)
		start = sr.winStart
		if res.Step.Latency != nil {
			t.addStep(res)
		}
		if err != nil || ctx.Err() != nil {
			return err
		}
	}
	return nil
}

// event names the series: "8 KiB random read", "write" for write tests,
// with "(page cache)" when I/O cannot bypass it.
func (t *Test) event(direct bool) string {
	e := formatSize(int64(t.cfg.BlockSize)) + " random read"
	if t.cfg.Write {
		e = formatSize(int64(t.cfg.BlockSize)) + " random write (O_DSYNC)"
	}
	if !direct {
		e += " (page cache)"
	}
	return e
}

// stepRun runs one step: its workers, its windows and its measurement.
type stepRun struct {
	test     *Test
	tg       *target
	key      stream.Key
	clock    clock
	lv       level
	margin   time.Duration
	warmup   time.Duration
	duration time.Duration // 0: until cancelled
	index    int           // from 1, of steps
	steps    int

	shards    []*loadtest.Recorder
	counts    []*ioCounts
	stop      atomic.Bool // closed loop: stop issuing; open loop: abort
	wg        sync.WaitGroup
	notIssued atomic.Int64

	winStart  time.Time
	measuring bool
	measured  time.Time
	cpu0      time.Duration
	errors0   int
	step      *loadtest.Window
}

// run measures the step, emitting one interval per cfg.Interval plus
// shorter ones at the end of the warm-up and of the step, so that every
// interval is either warm-up or measurement.
//
// The step starts at start, where the previous one ended, so that the
// intervals of all steps join; the moments spent switching steps are part
// of the next step's warm-up window.
func (s *stepRun) run(ctx context.Context, start time.Time, emit func(stream.Interval) error) (StepResult, error) {
	warmEnd := start.Add(s.warmup)
	var end time.Time // zero: until cancelled
	if s.duration > 0 {
		end = warmEnd.Add(s.duration)
	}
	s.winStart, s.step = start, loadtest.NewWindow()
	s.test.setNow(now{step: s.index, steps: s.steps, lv: s.lv, start: start, warmEnd: warmEnd, end: end})
	s.startWorkers(start, end)
	if s.warmup == 0 {
		s.beginMeasuring(start)
	}
	interval := s.test.cfg.Interval
	tick := start.Add(interval)
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		next := tick
		if !s.measuring && warmEnd.Before(next) {
			next = warmEnd
		}
		if !end.IsZero() && end.Before(next) {
			next = end
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			stopped := time.Now()
			s.stopWorkers(true)
			s.emitWindow(stopped, emit)
			return s.result(stopped, false), nil
		case <-timer.C:
		}
		at := time.Now()
		if !end.IsZero() && !at.Before(end) {
			s.stopWorkers(false)
			s.emitWindow(end, emit)
			return s.result(end, true), nil
		}
		if err := s.emitWindow(at, emit); err != nil {
			s.stopWorkers(true)
			if ctx.Err() != nil {
				err = nil
			}
			return s.result(at, false), err
		}
		if !s.measuring && !at.Before(warmEnd) {
			s.beginMeasuring(at)
			// The timer may fire late (a loaded machine): a closed loop
			// still measures its whole duration, from when measuring
			// began (an open loop's arrivals keep their schedule).
			if !end.IsZero() && at.After(warmEnd) && s.lv.rate == 0 {
				end = at.Add(s.duration)
				s.test.setNow(now{step: s.index, steps: s.steps, lv: s.lv, start: start, warmEnd: warmEnd, end: end})
			}
		}
		if !at.Before(tick) {
			tick = nextBoundary(tick, at, interval)
		}
	}
}

// startWorkers starts the step's readers (closed loop) or its open-loop
// workers, which issue arrivals from start until end.
func (s *stepRun) startWorkers(start, end time.Time) {
	cfg := s.test.cfg
	s.shards = make([]*loadtest.Recorder, s.lv.readers)
	s.counts = make([]*ioCounts, s.lv.readers)
	for i := range s.shards {
		s.shards[i] = loadtest.NewRecorder()
		w := newWorker(s.tg.fileFor(i), cfg.BlockSize, cfg.Write, s.shards[i])
		s.counts[i] = &w.counts
		s.wg.Add(1)
		if cfg.Engine == EngineIOUring {
			u := newUringWorker(w, s.lv.depth)
			go func() {
				defer s.wg.Done()
				u.runClosed(&s.stop, s.test.reportIOError)
			}()
			continue
		}
		go func() {
			defer s.wg.Done()
			if s.lv.rate == 0 {
				w.runClosed(&s.stop, s.test.reportIOError)
				return
			}
			p := pace.NewPacer(s.margin)
			stopAt := end
			if stopAt.IsZero() {
				stopAt = start.Add(100 * 365 * 24 * time.Hour)
			}
			s.notIssued.Add(w.runOpen(p, start, stopAt, s.lv.rate/float64(s.lv.readers), &s.stop, s.test.reportIOError))
		}()
	}
}

// stopWorkers ends the step's workers. A closed loop stops at once; an open
// loop first issues what was scheduled before its end, for at most
// drainGrace, unless abort.
func (s *stepRun) stopWorkers(abort bool) {
	if abort || s.lv.rate == 0 {
		s.stop.Store(true)
		s.wg.Wait()
		return
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainGrace):
		s.stop.Store(true)
		<-done
	}
}

// beginMeasuring ends the warm-up at now.
func (s *stepRun) beginMeasuring(now time.Time) {
	s.measuring, s.measured, s.cpu0 = true, now, pace.ProcessCPU()
	s.errors0 = s.test.diag.Count(s.test.name)
}

// emitWindow drains the shards into the interval [winStart, end) and, when
// measuring, into the step.
func (s *stepRun) emitWindow(end time.Time, emit func(stream.Interval) error) error {
	w := loadtest.Drain(s.shards)
	if s.measuring {
		s.step.Add(w)
	}
	iv := stream.Interval{Source: s.test.name, Start: s.clock.wall(s.winStart), Duration: end.Sub(s.winStart)}
	s.winStart = end
	if w.Lat.Count() > 0 && keepEvent(s.test.cfg.Events, s.key.Event) {
		iv.Series = []stream.SeriesHist{{Key: s.key, Hist: w.Lat}}
	}
	if iv.Duration <= 0 {
		return nil
	}
	if !s.tg.direct {
		for _, f := range s.tg.files {
			dropCache(f.buffered)
		}
	}
	return emit(iv)
}

// result is the step's measurement, ended at end.
func (s *stepRun) result(end time.Time, complete bool) StepResult {
	if !s.measuring {
		return StepResult{}
	}
	ops := s.step.Lat.Count()
	var completed int64
	maxInFlight := 0
	for _, c := range s.counts {
		completed += c.completed.Load()
		maxInFlight = max(maxInFlight, int(c.maxInFlight.Load()))
	}
	return StepResult{
		Step: loadtest.Step{
			Concurrency: s.lv.readers * s.lv.depth, Rate: s.lv.rate, Elapsed: end.Sub(s.measured),
			Bytes: int64(ops) * int64(s.test.cfg.BlockSize), Latency: s.step.Lat, Max: s.step.Max,
			CPU: pace.ProcessCPU() - s.cpu0, Errors: int64(s.test.diag.Count(s.test.name) - s.errors0),
		},
		IssueDelay: s.step.Delay, NotIssued: s.notIssued.Load(), Complete: complete,
		Start: s.clock.wall(s.measured), Readers: s.lv.readers, IODepth: s.lv.depth,
		Completed: completed, MaxInFlight: maxInFlight,
	}
}

// clock maps monotonic times to wall-clock interval starts from one base,
// so that consecutive intervals of all steps join without gaps or overlaps
// even when the wall clock is adjusted during the test.
type clock struct{ base, wallBase time.Time }

func newClock() clock {
	now := time.Now()
	return clock{base: now, wallBase: now.Round(0)}
}

// wall returns the wall-clock time of the monotonic time t.
func (c clock) wall(t time.Time) time.Time { return c.wallBase.Add(t.Sub(c.base)) }

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

// reportIOError counts a failed I/O; Diagnostics prints the first few.
func (t *Test) reportIOError(err error) {
	t.diag.MalformedAt(t.name, time.Now(), err.Error())
}

// keepEvent reports whether an event passes the Events filter.
func keepEvent(events []string, event string) bool {
	return len(events) == 0 || slices.Contains(events, event)
}
