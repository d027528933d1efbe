package postgres

import (
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

const (
	// defaultLogInterval is the binning interval of server logs (like
	// traces) when --interval is not given.
	defaultLogInterval = 3 * time.Second
	// maxSeries caps the per-statement series; further statements go to
	// otherStatements (the "all statements" series still counts them).
	maxSeries = 200
	// AllStatements is the series holding every logged statement.
	AllStatements   = "all statements"
	otherStatements = "other statements (over 200 distinct)"
	// zeroPow makes the zero bucket [0, 2^-10) µs: below the log's 1 µs
	// resolution.
	zeroPow = -10
)

// binner attributes statements to wall-clock windows aligned on multiples
// of the interval since the epoch, by the time their log line was written
// (the statement's end); see stream.Binner. Log lines of different backends
// may be written slightly out of order, so the two newest windows stay
// open; a statement older than them is counted in the oldest open one.
type binner struct {
	bins   *stream.Binner
	width  int64 // ns
	series map[string]int
	keys   []string
}

// newBinner bins statements; late is called for a statement older than the
// open windows.
func newBinner(src string, interval time.Duration, emit func(stream.Interval) error, late func()) *binner {
	if interval <= 0 {
		interval = defaultLogInterval
	}
	b := &binner{series: map[string]int{}}
	b.bins = stream.NewBinner(stream.BinnerConfig{Source: src, Interval: interval, Late: stream.LateToOldest, OnLate: late,
		Emit:    emit,
		Key:     func(s int) stream.Key { return stream.Key{Event: b.keys[s]} },
		NewHist: func(int) *hist.Histogram { return hist.NewExact(hist.Microsecond, zeroPow) }})
	b.width = int64(b.bins.Interval())
	return b
}

// add records a statement of us microseconds that ended at end, in the
// "all statements" series and/or its own.
func (b *binner) add(end time.Time, statement string, us float64, inAll, inOwn bool) error {
	if err := b.bins.Place(end.UnixNano()); err != nil {
		return err
	}
	all, own := -1, -1
	if inAll {
		all = b.seriesID(AllStatements)
	}
	if inOwn {
		own = b.seriesID(statement)
	}
	for _, id := range [2]int{all, own} {
		if id < 0 {
			continue
		}
		if err := b.bins.Hist(id).Record(us); err != nil {
			return err
		}
	}
	return nil
}

func (b *binner) seriesID(name string) int {
	if id, ok := b.series[name]; ok {
		return id
	}
	if len(b.keys) >= maxSeries+1 && name != AllStatements {
		return b.seriesID(otherStatements)
	}
	b.series[name] = len(b.keys)
	b.keys = append(b.keys, name)
	return len(b.keys) - 1
}

// flushOlderThan emits the windows that ended before t (following a live
// log, where no newer statement may come to close them).
func (b *binner) flushOlderThan(t time.Time) error { return b.bins.Flush(t.UnixNano()) }

// end emits everything still open.
func (b *binner) end() error { return b.bins.EndRun() }

// floorDiv divides rounding towards minus infinity (window arithmetic of
// the live source).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
