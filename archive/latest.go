package archive

import (
	"context"
	"database/sql"
	"math"
	"time"
)

// Extent returns the start of a source's first window and the end of its
// last at one resolution (Raw or a tier's step); ok is false when the
// source has no window there. A tier lags the raw data by up to two of its
// steps (Maintain builds whole windows) and keeps data longer.
func (a *Archive) Extent(ctx context.Context, source string, resolution time.Duration) (first, end time.Time, ok bool, err error) {
	id, found, err := a.sourceID(ctx, source)
	if err != nil || !found {
		return first, end, false, err
	}
	res := int64(0)
	if resolution > 0 {
		res = resOf(resolution)
	}
	var start, last int64
	err = eachWindow(ctx, a.reads, id, res, math.MinInt64, math.MaxInt64, 1, func(w window) error {
		start, ok = w.start, true
		return nil
	})
	if err != nil || !ok {
		return first, end, false, a.wrapExtent(source, err)
	}
	// The newest window is in the open rows or in the last block: scan
	// from the later of the two starts.
	var rowStart, blockStart sql.NullInt64
	err = a.rdb.QueryRowContext(ctx, `SELECT (SELECT MAX(start) FROM windows WHERE source_id = ?1 AND res = ?2),
		(SELECT MAX(start) FROM window_blocks WHERE source_id = ?1 AND res = ?2)`, id, res).Scan(&rowStart, &blockStart)
	if err != nil {
		return first, end, false, a.wrapExtent(source, err)
	}
	from := max(rowStart.Int64, blockStart.Int64)
	if !rowStart.Valid || !blockStart.Valid {
		from = rowStart.Int64 + blockStart.Int64 // the one that is set
	}
	err = eachWindow(ctx, a.reads, id, res, from, math.MaxInt64, noLimit, func(w window) error {
		last = max(last, w.start+w.dur)
		return nil
	})
	if err != nil {
		return first, end, false, a.wrapExtent(source, err)
	}
	return time.Unix(0, start).UTC(), time.Unix(0, last).UTC(), true, nil
}

// LatestEnd returns the end of a source's newest window at any
// resolution; ok is false when the archive has no window of it. Views
// that open on "the last hour" start from it rather than from the clock,
// so a source that stopped still shows its data.
func (a *Archive) LatestEnd(ctx context.Context, source string) (end time.Time, ok bool, err error) {
	for _, t := range a.opts.Tiers {
		res := t.Step
		if res == 0 {
			res = Raw
		}
		_, e, found, err := a.Extent(ctx, source, res)
		if err != nil {
			return end, false, err
		}
		if found && (!ok || e.After(end)) {
			end, ok = e, true
		}
	}
	return end, ok, nil
}

func (a *Archive) sourceID(ctx context.Context, source string) (id int64, ok bool, err error) {
	err = a.rdb.QueryRowContext(ctx, "SELECT id FROM sources WHERE name = ?", source).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, a.errorf("finding source %s: %w", source, err)
	}
	return id, true, nil
}

func (a *Archive) wrapExtent(source string, err error) error {
	if err == nil {
		return nil
	}
	return a.errorf("finding the extent of %s: %w", source, err)
}
