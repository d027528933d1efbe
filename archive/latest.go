package archive

import (
	"context"
	"database/sql"
	"math"
	"time"
)

// LatestEnd returns the end of a source's newest window at any
// resolution; ok is false when the archive has no window of it. Views
// that open on "the last hour" start from it rather than from the clock,
// so a source that stopped still shows its data.
func (a *Archive) LatestEnd(ctx context.Context, source string) (end time.Time, ok bool, err error) {
	var id int64
	err = a.rdb.QueryRowContext(ctx, "SELECT id FROM sources WHERE name = ?", source).Scan(&id)
	if err == sql.ErrNoRows {
		return end, false, nil
	}
	if err != nil {
		return end, false, a.errorf("finding source %s: %w", source, err)
	}
	latest := int64(math.MinInt64)
	for _, t := range a.opts.Tiers {
		res := resOf(t.Step)
		// The newest window is in the open rows or in the last block: scan
		// from the later of the two starts.
		var rowStart, blockStart sql.NullInt64
		err := a.rdb.QueryRowContext(ctx, `SELECT (SELECT MAX(start) FROM windows WHERE source_id = ?1 AND res = ?2),
			(SELECT MAX(start) FROM window_blocks WHERE source_id = ?1 AND res = ?2)`, id, res).Scan(&rowStart, &blockStart)
		if err != nil {
			return end, false, a.errorf("finding the newest window of %s: %w", source, err)
		}
		if !rowStart.Valid && !blockStart.Valid {
			continue
		}
		from := max(rowStart.Int64, blockStart.Int64)
		if !rowStart.Valid || !blockStart.Valid {
			from = rowStart.Int64 + blockStart.Int64 // the one that is set
		}
		err = eachWindow(ctx, a.reads, id, res, from, math.MaxInt64, noLimit, func(w window) error {
			latest, ok = max(latest, w.start+w.dur), true
			return nil
		})
		if err != nil {
			return end, false, a.errorf("reading the newest window of %s: %w", source, err)
		}
	}
	if !ok {
		return end, false, nil
	}
	return time.Unix(0, latest).UTC(), true, nil
}
