package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/stream"
)

// Maintain builds the coarser tiers from the finer ones up to now, then
// drops data beyond each tier's retention and, with MaxBytes, the oldest
// data until the archive fits. A writer calls it periodically (latscope
// record --archive: every minute of data and at the end).
func (a *Archive) Maintain(ctx context.Context, now time.Time) error {
	if a.opts.ReadOnly {
		return a.errorf("opened read-only")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := 1; i < len(a.opts.Tiers); i++ {
		if err := a.downsample(ctx, a.opts.Tiers[i-1].Step, a.opts.Tiers[i].Step, now); err != nil {
			return a.errorf("downsampling to %s: %w", a.opts.Tiers[i].Step, err)
		}
	}
	for _, t := range a.opts.Tiers {
		if t.Keep == 0 {
			continue
		}
		if err := a.dropBefore(ctx, resOf(t.Step), now.Add(-t.Keep).UnixNano(), allSources); err != nil {
			return a.errorf("dropping data older than %s: %w", t.Keep, err)
		}
	}
	if err := a.dropSources(ctx, now); err != nil {
		return err
	}
	if a.opts.MaxBytes > 0 {
		if err := a.fitSize(ctx); err != nil {
			return a.errorf("keeping within %d bytes: %w", a.opts.MaxBytes, err)
		}
	}
	a.ckpt.wrote()
	return nil
}

// downsample merges the windows and points of tier fine into windows of
// step coarse, for every whole coarse window that ended at least one step
// before now and was not built yet.
func (a *Archive) downsample(ctx context.Context, fine, coarse time.Duration, now time.Time) error {
	key := metaDownsampled + coarse.String()
	done, err := a.meta(ctx, key)
	if err != nil {
		return err
	}
	from := int64(math.MinInt64)
	if done != "" {
		if from, err = strconv.ParseInt(done, 10, 64); err != nil {
			return fmt.Errorf("meta %s: %w", key, err)
		}
	}
	until := floorTo(now.Add(-coarse).UnixNano(), int64(coarse))
	if until <= from {
		return nil
	}
	sources, err := a.selectSeries(ctx, Query{})
	if err != nil {
		return err
	}
	fineRes, coarseRes := resOf(fine), resOf(coarse)
	return a.inTx(ctx, func(tx *sql.Tx) error {
		for _, s := range sources {
			if err := mergeWindows(ctx, tx, s.id, fineRes, coarseRes, int64(coarse), from, until); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			for _, si := range s.series {
				if err := mergePoints(ctx, tx, si, fineRes, coarseRes, int64(coarse), from, until); err != nil {
					return fmt.Errorf("%s %s: %w", s.name, si.Key, err)
				}
			}
		}
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, strconv.FormatInt(until, 10))
		return err
	})
}

// floorTo rounds t down to a multiple of step.
func floorTo(t, step int64) int64 {
	r := t % step
	if r < 0 {
		r += step
	}
	return t - r
}

// mergeWindows writes the coarse windows of a source in [from, until),
// streaming the fine ones in order: one coarse window in memory. A coarse
// window starts at the step boundary and lasts the time its fine windows
// observed, so rates (events per observed second) stay right; one that saw
// only gaps is a gap over the whole step. The inserts go to another
// resolution, outside the range being scanned.
func mergeWindows(ctx context.Context, tx *sql.Tx, source, fineRes, coarseRes, step, from, until int64) error {
	var cur *window
	flush := func() error {
		if cur == nil {
			return nil
		}
		if cur.dur == 0 { // only gaps
			cur.dur, cur.flags = step, cur.flags|flagGap
		}
		_, err := tx.ExecContext(ctx, insertWindow, source, coarseRes, cur.start, cur.dur, cur.flags, cur.zoneOff, cur.zoneName)
		return err
	}
	err := eachWindow(ctx, tx, source, fineRes, from, until, noLimit, func(w window) error {
		if b := floorTo(w.start, step); cur == nil || b != cur.start {
			if err := flush(); err != nil {
				return err
			}
			cur = &window{start: b}
		}
		cur.zoneOff, cur.zoneName = w.zoneOff, w.zoneName
		cur.flags |= w.flags & flagRelative
		if w.flags&flagGap == 0 {
			cur.dur += w.dur
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// mergePoints writes the coarse points of a series in [from, until),
// merging the fine ones of each coarse window: histograms with
// hist.Merge (exact on one grid), means by adding counts and sums.
func mergePoints(ctx context.Context, tx *sql.Tx, si SeriesInfo, fineRes, coarseRes, step, from, until int64) error {
	var (
		bucket = int64(math.MinInt64)
		h      *hist.Histogram
		m      stream.SeriesMean
		have   bool
		buf    []byte
	)
	flush := func() error {
		if !have {
			return nil
		}
		if si.Mean {
			buf = recording.AppendMean(buf[:0], m)
		} else {
			buf = recording.AppendHistogram(buf[:0], h)
		}
		_, err := tx.ExecContext(ctx, insertPoint, si.ID, coarseRes, bucket, buf)
		return err
	}
	err := eachPoint(ctx, tx, si.ID, fineRes, from, until, func(start int64, data []byte) error {
		if b := floorTo(start, step); !have || b != bucket {
			if err := flush(); err != nil {
				return err
			}
			bucket, h, m, have = b, nil, stream.SeriesMean{}, true
		}
		if err := mergeValue(si, data, &h, &m); err != nil {
			return fmt.Errorf("at %d: %w", start, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// mergeValue adds one stored value into the accumulator of its kind.
func mergeValue(si SeriesInfo, data []byte, h **hist.Histogram, m *stream.SeriesMean) error {
	if si.Mean {
		v, err := recording.DecodeMean(data, si.Key)
		if err != nil {
			return err
		}
		if m.Unit == 0 {
			*m = v
		} else {
			*m = m.Plus(v)
		}
		return nil
	}
	v, err := recording.DecodeHistogram(data)
	if err != nil {
		return err
	}
	if *h == nil {
		*h = v
	} else {
		(*h).Merge(v)
	}
	return nil
}

// dropSources applies Options.SourceKeep: each named source's data of
// every tier older than its retention goes.
func (a *Archive) dropSources(ctx context.Context, now time.Time) error {
	for _, name := range slices.Sorted(maps.Keys(a.opts.SourceKeep)) {
		keep := a.opts.SourceKeep[name]
		if keep <= 0 {
			continue
		}
		var id int64
		err := a.db.QueryRowContext(ctx, "SELECT id FROM sources WHERE name = ?", name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			continue // nothing archived yet
		}
		if err != nil {
			return a.errorf("source %s: %w", name, err)
		}
		for _, t := range a.opts.Tiers {
			if err := a.dropBefore(ctx, resOf(t.Step), now.Add(-keep).UnixNano(), id); err != nil {
				return a.errorf("dropping %s's data older than %s: %w", name, keep, err)
			}
		}
	}
	return nil
}

// allSources asks dropBefore for every source (ids start at 1).
const allSources = 0

// dropBefore deletes a resolution's windows and points that start before
// cutoff, of one source or of allSources, source by source and series by
// series along the primary keys. A block holding both older and newer
// entries is unpacked first, so that its older rows go with the others;
// the source's next write packs it again.
func (a *Archive) dropBefore(ctx context.Context, res, cutoff, source int64) error {
	return a.inTx(ctx, func(tx *sql.Tx) error {
		if split := firstBlock(cutoff); split < cutoff {
			// An hour being packed has point blocks and no window block yet.
			sources, err := int64s(ctx, tx, `SELECT source_id FROM window_blocks WHERE source_id IN (SELECT id FROM sources WHERE ?3 IN (0, id)) AND res = ?1 AND start = ?2
				UNION SELECT source_id FROM series WHERE ?3 IN (0, source_id) AND id IN (SELECT series_id FROM point_blocks WHERE res = ?1 AND start = ?2)`, res, split, source)
			if err != nil {
				return err
			}
			clear(a.rowsFrom) // unpacked hours are rows again
			clear(a.packing)
			for _, src := range sources {
				if err := unpack(ctx, tx, src, res, split); err != nil {
					return err
				}
			}
		}
		for _, q := range []string{
			`DELETE FROM windows WHERE source_id IN (SELECT id FROM sources WHERE ?4 IN (0, id)) AND res = ?1 AND start < ?2`,
			`DELETE FROM points WHERE series_id IN (SELECT id FROM series WHERE ?4 IN (0, source_id)) AND res = ?1 AND start < ?2`,
			`DELETE FROM window_blocks WHERE source_id IN (SELECT id FROM sources WHERE ?4 IN (0, id)) AND res = ?1 AND start < ?3`,
			`DELETE FROM point_blocks WHERE series_id IN (SELECT id FROM series WHERE ?4 IN (0, source_id)) AND res = ?1 AND start < ?3`,
		} {
			if _, err := tx.ExecContext(ctx, q, res, cutoff, firstBlock(cutoff), source); err != nil {
				return err
			}
		}
		return nil
	})
}

// usedBytes is the database's size without its free pages.
func (a *Archive) usedBytes(ctx context.Context) (int64, error) {
	var pages, free, size int64
	for q, v := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &size} {
		if err := a.db.QueryRowContext(ctx, q).Scan(v); err != nil {
			return 0, err
		}
	}
	return (pages - free) * size, nil
}

// fitSize drops the oldest hour of data, whatever its tier, until the
// archive's used size is within MaxBytes. Freed pages are reused by later
// writes (the file does not shrink).
func (a *Archive) fitSize(ctx context.Context) error {
	for {
		used, err := a.usedBytes(ctx)
		if err != nil {
			return err
		}
		if used <= a.opts.MaxBytes {
			return nil
		}
		oldest, ok, err := a.oldestStart(ctx)
		if err != nil || !ok {
			return err // !ok: nothing left to drop, the schema alone is larger
		}
		cutoff := oldest + int64(time.Hour)
		for _, t := range a.opts.Tiers {
			if err := a.dropBefore(ctx, resOf(t.Step), cutoff, allSources); err != nil {
				return err
			}
		}
	}
}

// oldestStart returns the earliest window start of any tier.
func (a *Archive) oldestStart(ctx context.Context) (oldest int64, ok bool, err error) {
	oldest = math.MaxInt64
	for _, t := range a.opts.Tiers {
		// A block's start is at or before its first window: the oldest
		// hour either way.
		for _, table := range []string{"windows", "window_blocks"} {
			var first *int64
			if err := a.db.QueryRowContext(ctx, "SELECT min(start) FROM "+table+" WHERE res = ?", resOf(t.Step)).Scan(&first); err != nil {
				return 0, false, err
			}
			if first != nil {
				oldest, ok = min(oldest, *first), true
			}
		}
	}
	return oldest, ok, nil
}
