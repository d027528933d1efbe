package stream

import (
	"fmt"
	"time"

	"github.com/latscope/latscope/hist"
)

// Differ turns cumulative snapshots (counters since instance start, as in
// V$EVENT_HISTOGRAM or PyLatencyMap records) into per-interval deltas.
//
// The first snapshot is only a baseline. A series that appears later is
// diffed against zero (it had no events before). When any counter goes
// backwards (an instance restart, a reset) the interval becomes a Gap and the
// snapshot the new baseline: counts are never negative.
type Differ struct {
	Source string
	prev   map[Key]*hist.Histogram
	seen   bool
}

// NewDiffer returns a Differ for one source.
func NewDiffer(source string) *Differ {
	return &Differ{Source: source, prev: make(map[Key]*hist.Histogram)}
}

// Next takes the cumulative snapshot taken at end, duration after the
// previous one, and returns the interval between them. ok is false for the
// first snapshot, which only sets the baseline.
func (d *Differ) Next(end time.Time, duration time.Duration, relative bool, snap []SeriesHist) (iv Interval, ok bool, err error) {
	first := !d.seen
	d.seen = true
	iv = Interval{Source: d.Source, Start: end.Add(-duration), Duration: duration, Relative: relative}
	var deltas []SeriesHist
	reset := false
	for _, s := range snap {
		prev := d.prev[s.Key]
		if prev == nil {
			prev = s.Hist.EmptyLike()
		}
		delta, wentBack, err := s.Hist.Sub(prev)
		if err != nil {
			return Interval{}, false, fmt.Errorf("%s: series %s: %w", d.Source, s.Key, err)
		}
		if wentBack {
			reset = true
			continue
		}
		if delta.Count() > 0 {
			deltas = append(deltas, SeriesHist{Key: s.Key, Hist: delta})
		}
	}
	for _, s := range snap {
		d.prev[s.Key] = s.Hist
	}
	if first {
		return Interval{}, false, nil
	}
	if reset {
		iv.Gap = true
		return iv, true, nil
	}
	iv.Series = deltas
	return iv, true, nil
}

// Rebase replaces a series' previous snapshot, for sources whose bucket
// layout grows (a Prometheus histogram gaining an le edge): the previous
// counts, moved onto the new layout, are the baseline of the next delta.
func (d *Differ) Rebase(k Key, prev *hist.Histogram) {
	d.prev[k] = prev
}
