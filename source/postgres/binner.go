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
// (the statement's end). Log lines of different backends may be written
// slightly out of order, so the two newest windows stay open; a window is
// emitted once a statement ends after the next one. Windows without
// statements are observed quiet time, emitted as one interval per stretch.
type binner struct {
	src   string
	width int64 // ns
	emit  func(stream.Interval) error
	late  func() // called for a statement older than the open windows

	started bool
	next    int64     // first window index not emitted
	open    []*window // ascending, at most two
	series  map[string]int
	keys    []string
}

type window struct {
	idx   int64
	hists map[int]*hist.Histogram
}

func newBinner(src string, interval time.Duration, emit func(stream.Interval) error, late func()) *binner {
	if interval <= 0 {
		interval = defaultLogInterval
	}
	return &binner{src: src, width: int64(interval), emit: emit, late: late, series: map[string]int{}}
}

// add records a statement of us microseconds that ended at end, in the
// "all statements" series and/or its own.
func (b *binner) add(end time.Time, statement string, us float64, inAll, inOwn bool) error {
	idx := floorDiv(end.UnixNano(), b.width)
	if !b.started {
		b.started, b.next = true, idx
	}
	if idx < b.next {
		b.late()
		idx = b.next
	}
	if n := len(b.open); n > 0 && idx > b.open[n-1].idx {
		if err := b.flushBefore(idx - 1); err != nil {
			return err
		}
	}
	w := b.window(idx)
	ids := make([]int, 0, 2)
	if inAll {
		ids = append(ids, b.seriesID(AllStatements))
	}
	if inOwn {
		ids = append(ids, b.seriesID(statement))
	}
	for _, id := range ids {
		h := w.hists[id]
		if h == nil {
			h = hist.NewExact(hist.Microsecond, zeroPow)
			w.hists[id] = h
		}
		if err := h.Record(us); err != nil {
			return err
		}
	}
	return nil
}

// window returns the open window idx, opening it.
func (b *binner) window(idx int64) *window {
	pos := 0
	for pos < len(b.open) && b.open[pos].idx < idx {
		pos++
	}
	if pos < len(b.open) && b.open[pos].idx == idx {
		return b.open[pos]
	}
	w := &window{idx: idx, hists: map[int]*hist.Histogram{}}
	b.open = append(b.open, nil)
	copy(b.open[pos+1:], b.open[pos:])
	b.open[pos] = w
	return w
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

// flushBefore emits every window before limit, with the quiet stretches
// between them.
func (b *binner) flushBefore(limit int64) error {
	for len(b.open) > 0 && b.open[0].idx < limit {
		w := b.open[0]
		b.open = b.open[1:]
		if err := b.quiet(w.idx); err != nil {
			return err
		}
		if err := b.emit(b.interval(w)); err != nil {
			return err
		}
		b.next = w.idx + 1
	}
	if len(b.open) == 0 && b.started {
		return b.quiet(limit)
	}
	return nil
}

// quiet emits the windows [next, upTo) as one interval without events.
func (b *binner) quiet(upTo int64) error {
	if upTo <= b.next {
		return nil
	}
	iv := stream.Interval{Source: b.src, Start: time.Unix(0, b.next*b.width).UTC(), Duration: time.Duration((upTo - b.next) * b.width)}
	b.next = upTo
	return b.emit(iv)
}

// flushOlderThan emits the windows that ended before t (following a live
// log, where no newer statement may come to close them).
func (b *binner) flushOlderThan(t time.Time) error {
	if !b.started {
		return nil
	}
	return b.flushBefore(floorDiv(t.UnixNano(), b.width))
}

// end emits everything still open.
func (b *binner) end() error {
	if n := len(b.open); n > 0 {
		return b.flushBefore(b.open[n-1].idx + 1)
	}
	return nil
}

func (b *binner) interval(w *window) stream.Interval {
	iv := stream.Interval{Source: b.src, Start: time.Unix(0, w.idx*b.width).UTC(), Duration: time.Duration(b.width)}
	for id, name := range b.keys {
		if h := w.hists[id]; h != nil {
			iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: name}, Hist: h})
		}
	}
	return iv
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
