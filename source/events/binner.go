package events

import (
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

const (
	// defaultInterval is the binning interval when --interval is not given.
	defaultInterval = time.Second
	// maxTime bounds event times (ns on the source's clock, ±158 years) so
	// that window arithmetic cannot overflow.
	maxTime = int64(5e18)
)

// binner puts events into windows of one interval (see stream.Binner):
// events may arrive up to one interval out of order (completion lines from
// several CPUs, start times plus latencies); an event further back in time,
// or a jump forward of more than a month, starts a new run. On a relative
// clock runs are laid end to end (tools such as biosnoop count from their
// own start, so a second run starts at 0 again).
type binner struct {
	bins     *stream.Binner
	keys     []stream.Key
	keyIndex map[stream.Key]int
	unit     hist.Unit // of the event being recorded
}

// newBinner bins on the source's clock in ns; onBack is called when time
// goes backwards and a run ends.
func newBinner(src string, interval time.Duration, relative bool, loc *time.Location, onBack func(), emit func(stream.Interval) error) *binner {
	if interval <= 0 {
		interval = defaultInterval
	}
	b := &binner{keyIndex: map[stream.Key]int{}}
	b.bins = stream.NewBinner(stream.BinnerConfig{Source: src, Interval: interval, Relative: relative, Location: loc,
		Late: stream.LateNewRun, OnLate: onBack, Emit: emit,
		Key:     func(s int) stream.Key { return b.keys[s] },
		NewHist: func(int) *hist.Histogram { return hist.NewExact(b.unit, zeroPow(b.unit)) }})
	return b
}

// add records one event of latency v (in unit) that happened at t ns on the
// source's clock (|t| ≤ maxTime).
func (b *binner) add(t int64, key stream.Key, v float64, unit hist.Unit) error {
	if err := b.bins.Place(t); err != nil {
		return err
	}
	b.unit = unit
	h := b.bins.Hist(b.series(key))
	if unit != h.Unit { // the window's first event chose the unit
		v = v * float64(unit) / float64(h.Unit)
	}
	_ = h.Record(v) // callers pass finite v ≥ 0: no error
	return nil
}

// endRun emits everything still open.
func (b *binner) endRun() error { return b.bins.EndRun() }

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
