package postgres

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// backendRow is one pg_stat_activity row.
type backendRow struct {
	pid                        int32
	state, waitType, waitEvent string
	queryStart                 time.Time
	queryID                    int64 // pg_wait_sampling's statement identity
}

// label is the series a sampled backend counts in ("" for none: idle
// backends wait for their client, which is not latency).
func (r backendRow) label() string {
	switch {
	case r.state != "active" && !strings.HasPrefix(r.state, "idle in transaction"):
		return ""
	case r.waitType != "":
		return r.waitType + ":" + r.waitEvent
	case r.state == "active":
		return CPUEvent
	}
	return ""
}

// openWait is a wait seen in the latest sample.
type openWait struct {
	event      string
	queryStart time.Time
	queryID    int64
	first      time.Time
}

// doneWait is a wait that was seen to end.
type doneWait struct {
	event string
	end   time.Time
	dur   time.Duration
}

// waitTracker turns consecutive samples into estimated wait durations: a
// wait lasts, per backend, while consecutive samples show the same event
// for the same statement (query_start); it ends at the first sample that
// shows something else.
type waitTracker struct {
	open map[int32]openWait
}

func newWaitTracker() *waitTracker { return &waitTracker{open: map[int32]openWait{}} }

// update takes the sample taken at at and returns the waits it ended.
func (t *waitTracker) update(at time.Time, rows []backendRow) []doneWait {
	var done []doneWait
	seen := make(map[int32]bool, len(rows))
	for _, r := range rows {
		ev := r.label()
		if ev == "" || seen[r.pid] {
			continue
		}
		seen[r.pid] = true
		cur, ok := t.open[r.pid]
		if ok && cur.event == ev && cur.queryStart.Equal(r.queryStart) && cur.queryID == r.queryID {
			continue
		}
		if ok {
			done = appendDone(done, cur, at)
		}
		t.open[r.pid] = openWait{event: ev, queryStart: r.queryStart, queryID: r.queryID, first: at}
	}
	for pid, cur := range t.open {
		if !seen[pid] {
			done = appendDone(done, cur, at)
			delete(t.open, pid)
		}
	}
	return done
}

func appendDone(done []doneWait, w openWait, at time.Time) []doneWait {
	if d := at.Sub(w.first); d > 0 {
		done = append(done, doneWait{event: w.event, end: at, dur: d})
	}
	return done
}

// liveWindows gathers the sampler's and the probe's events into windows
// aligned on multiples of the interval; a window nobody could observe
// (disconnected) is emitted as a gap.
type liveWindows struct {
	mu    sync.Mutex
	src   string
	width int64 // ns
	next  int64 // first window not emitted
	open  map[int64]*liveWindow
	keys  []string
	known map[string]bool
	// seen is set by the first observation: until then nothing has been
	// emitted (see observed).
	seen    bool
	emitted bool
}

type liveWindow struct {
	observed bool
	hists    map[string]*hist.Histogram
	means    []stream.SeriesMean // the statistics views' means, in arrival order
}

func newLiveWindows(src string, width time.Duration, start time.Time) *liveWindows {
	return &liveWindows{src: src, width: int64(width), next: floorDiv(start.UnixNano(), int64(width)),
		open: map[int64]*liveWindow{}, known: map[string]bool{}}
}

func (w *liveWindows) window(t time.Time) *liveWindow {
	idx := max(floorDiv(t.UnixNano(), w.width), w.next) // late events go to the oldest open window
	lw := w.open[idx]
	if lw == nil {
		lw = &liveWindow{hists: map[string]*hist.Histogram{}}
		w.open[idx] = lw
	}
	return lw
}

// record adds an event of us microseconds that ended at t.
func (w *liveWindows) record(t time.Time, event string, us float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	lw := w.window(t)
	h := lw.hists[event]
	if h == nil {
		h = hist.NewExact(hist.Microsecond, zeroPow)
		lw.hists[event] = h
		if !w.known[event] {
			w.known[event] = true
			w.keys = append(w.keys, event)
		}
	}
	_ = h.Record(us) // us is a positive duration: never rejected
}

// mean adds the statistics views' means for the stretch ending about t:
// equal keys are summed.
func (w *liveWindows) mean(t time.Time, means []stream.SeriesMean) {
	w.mu.Lock()
	defer w.mu.Unlock()
	lw := w.window(t)
	for _, m := range means {
		if i := slices.IndexFunc(lw.means, func(o stream.SeriesMean) bool { return o.Key == m.Key }); i >= 0 {
			lw.means[i].Count += m.Count
			lw.means[i].Sum += m.Sum
			continue
		}
		lw.means = append(lw.means, m)
	}
}

// observed says the sampler saw the server at t. The first observation,
// when nothing has been emitted yet, drops the empty windows before it:
// they lie before sampling began (the first window is aligned down and the
// first connection takes time), not in a time the server could not be
// seen; calling them gaps would report an outage that never was.
func (w *liveWindows) observed(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.seen && !w.emitted {
		for idx := floorDiv(t.UnixNano(), w.width); w.next < idx; w.next++ {
			if lw := w.open[w.next]; lw != nil && (len(lw.hists) > 0 || len(lw.means) > 0) {
				break // another reader (the probe) saw events there
			}
			delete(w.open, w.next)
		}
	}
	w.seen = true
	w.window(t).observed = true
}

// flush emits the windows that ended by upTo; final also emits the
// window in progress, shortened to upTo.
func (w *liveWindows) flush(upTo time.Time, final bool, emit func(stream.Interval) error) error {
	for {
		w.mu.Lock()
		start := time.Unix(0, w.next*w.width)
		end := start.Add(time.Duration(w.width))
		if end.After(upTo) && (!final || !upTo.After(start)) {
			w.mu.Unlock()
			return nil
		}
		lw := w.open[w.next]
		delete(w.open, w.next)
		w.next++
		w.emitted = true
		iv := stream.Interval{Source: w.src, Start: start.UTC(), Duration: time.Duration(w.width)}
		if end.After(upTo) {
			iv.Duration = upTo.Sub(start)
		}
		empty := lw == nil || (!lw.observed && len(lw.hists) == 0 && len(lw.means) == 0)
		if empty && end.After(upTo) {
			// The last, partial window of a stopped source that had no poll
			// in it yet (stopped a few ms after a window began): nothing
			// was missed, so it is left out rather than shown as a gap.
			w.mu.Unlock()
			return nil
		}
		if empty {
			iv.Gap = true
		} else {
			iv.Means = lw.means
			for _, k := range w.keys {
				if h := lw.hists[k]; h != nil {
					iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: k}, Hist: h})
				}
			}
		}
		w.mu.Unlock()
		if err := emit(iv); err != nil {
			return err
		}
	}
}
