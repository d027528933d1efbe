package loadtest

import (
	"sync"
	"time"

	"github.com/latscope/latscope/hist"
)

// zeroPow puts the zero bucket's edge of latency histograms at 2^-10 µs
// ≈ 1 ns.
const zeroPow = -10

// NewLatencyHist returns an exact µs histogram: 64 buckets per octave, so
// a bucket's width is 1.1 % of its value and an interpolated percentile is
// off by well under 1 %.
func NewLatencyHist() *hist.Histogram { return hist.NewExact(hist.Microsecond, zeroPow) }

// Recorder is one load worker's share of the current window: latencies,
// open-loop issue delays and the exact maximum. The lock is uncontended
// except when the window is drained; recording allocates nothing once the
// latency range has been seen.
type Recorder struct {
	mu    sync.Mutex
	lat   *hist.Histogram
	delay *hist.Histogram
	max   time.Duration
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{lat: NewLatencyHist(), delay: NewLatencyHist()} }

// Record adds one latency.
func (r *Recorder) Record(lat time.Duration) {
	r.mu.Lock()
	_ = r.lat.Record(Micros(lat)) // a monotonic duration is never negative or NaN
	r.max = max(r.max, lat)
	r.mu.Unlock()
}

// RecordOpen adds one open-loop latency (from the intended start) and its
// issue delay (actual − intended start).
func (r *Recorder) RecordOpen(lat, delay time.Duration) {
	r.mu.Lock()
	_ = r.lat.Record(Micros(lat))
	_ = r.delay.Record(Micros(max(delay, 0)))
	r.max = max(r.max, lat)
	r.mu.Unlock()
}

// Micros converts a duration to µs.
func Micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Window is what recorders held over one window (or a whole step).
type Window struct {
	Lat, Delay *hist.Histogram
	Max        time.Duration
}

// NewWindow returns an empty window.
func NewWindow() *Window { return &Window{Lat: NewLatencyHist(), Delay: NewLatencyHist()} }

// Add merges o into w.
func (w *Window) Add(o *Window) {
	w.Lat.Merge(o.Lat)
	w.Delay.Merge(o.Delay)
	w.Max = max(w.Max, o.Max)
}

// DrainInto adds the recorder's counts to w and zeroes them, keeping the
// counts' length and offset so that the next window allocates nothing.
func (r *Recorder) DrainInto(w *Window) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w.Lat.Merge(r.lat)
	w.Delay.Merge(r.delay)
	w.Max = max(w.Max, r.max)
	for _, h := range []*hist.Histogram{r.lat, r.delay} {
		h.ZeroCount, h.Sum = 0, 0
		clear(h.Counts)
	}
	r.max = 0
}

// Drain empties every recorder into a new window.
func Drain(rs []*Recorder) *Window {
	w := NewWindow()
	for _, r := range rs {
		r.DrainInto(w)
	}
	return w
}
