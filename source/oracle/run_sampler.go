package oracle

import (
	"context"
	"fmt"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// pollEvery is the wait-history sampler's polling period: as the seed's
// script, a tight loop (each session keeps only 10 waits).
const pollEvery = 10 * time.Millisecond

// waitSampler polls a wait-history query, de-duplicates and collects.
type waitSampler struct {
	rs      rowSource
	name    string
	diag    *input.Diagnostics
	query   string
	fixed   bool // X$KSLWH (else V$SESSION_WAIT_HISTORY)
	kslwh   kslwhTracker
	swh     swhTracker
	c       waitCollector
	polls   int64
	failed  bool // a poll of the current window failed
	started time.Time
}

func newWaitSampler(rs rowSource, name string, diag *input.Diagnostics, opts source.Options) *waitSampler {
	cond := opts.DB.Sessions
	if cond == "" {
		cond = defaultSessions
	}
	q := sessionWaitHistoryQuery
	if opts.DB.FixedTables {
		q = kslwhQuery
	}
	return &waitSampler{rs: rs, name: name, diag: diag, query: fmt.Sprintf(q, cond), fixed: opts.DB.FixedTables,
		c: waitCollector{keep: opts.KeepEvent, onBlockRead: opts.BlockReads}}
}

// pollOnce runs one poll; a failure resets the de-duplication (the next
// poll is a new baseline) and makes the window a gap.
func (w *waitSampler) pollOnce(ctx context.Context, at time.Time) error {
	r, err := w.rs.query(ctx, w.query)
	if err == nil {
		var ws []swhRow
		var bad int
		if ws, bad, err = mapWaits(r); err == nil {
			if bad > 0 {
				w.diag.MalformedAt(w.name, at, fmt.Sprintf("%d wait history rows with non-numeric fields skipped", bad))
			}
			w.polls++
			w.c.add(w.dedup(ws), at)
			return nil
		}
	}
	w.failed = true
	w.kslwh, w.swh = kslwhTracker{missed: w.missed()}, swhTracker{kslwh: kslwhTracker{missed: w.missed()}}
	w.diag.MalformedAt(w.name, at, "poll failed: "+err.Error())
	return err
}

func (w *waitSampler) dedup(ws []swhRow) []waitRow {
	if w.fixed {
		return w.kslwh.poll(plainRows(ws))
	}
	return w.swh.poll(ws)
}

func (w *waitSampler) missed() int64 { return w.kslwh.missed + w.swh.kslwh.missed }

func plainRows(ws []swhRow) []waitRow {
	out := make([]waitRow, len(ws))
	for i, r := range ws {
		out[i] = r.waitRow
	}
	return out
}

// window closes the window [start, end): a gap if a poll failed in it.
func (w *waitSampler) window(start, end time.Time) stream.Interval {
	iv := w.c.interval(w.name, start, end)
	if w.failed {
		iv.Series, iv.Gap = nil, true
		w.failed = false
	}
	return iv
}

func (w *waitSampler) stats(now time.Time) stream.SamplerStats {
	st := stream.SamplerStats{Missed: w.missed()}
	st.Kind = "oracle V$SESSION_WAIT_HISTORY sampler"
	if w.fixed {
		st.Kind = "oracle X$KSLWH sampler"
	}
	if el := now.Sub(w.started).Seconds(); el > 0 {
		st.PollsPerSecond = float64(w.polls) / el
	}
	return st
}

// runSampler polls every pollEvery (backing off to 5 s while polls fail)
// and emits one interval per --interval until ctx is done.
func (s *liveSource) runSampler(ctx context.Context, rs rowSource, interval time.Duration, emit func(stream.Interval) error) error {
	w := newWaitSampler(rs, s.name, s.diag, s.opts)
	w.started = time.Now()
	start, backoff := w.started, time.Duration(0)
	link := source.NewLinkWatch(s.opts.DB.Link)
	for {
		now := time.Now()
		if err := w.pollOnce(ctx, now); err != nil {
			backoff = min(max(2*backoff, 100*time.Millisecond), 5*time.Second)
			if ctx.Err() == nil {
				link.Lost(fmt.Errorf("poll failed: %w", err))
			}
		} else {
			backoff = 0
			link.Reached()
		}
		s.mu.Lock()
		s.stats = w.stats(time.Now())
		s.mu.Unlock()
		if now.Sub(start) >= interval {
			if err := emit(w.window(start, now)); err != nil {
				return err
			}
			start = now
		}
		if sleepCtx(ctx, max(pollEvery, backoff)) != nil {
			return nil
		}
	}
}
