package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Packing keeps one rule: a series' points of an hour are either rows or
// one block, never both, and so are a source's windows of an hour; the
// window block is written last, so an hour with one is wholly packed.
// Reads scan rows and blocks in one ordered pass (eachWindow, eachPoint).

// packFinished packs, for every source this transaction wrote, the raw
// rows before its newest hour, a series-hour at a time (packSource). A live
// source's hour is packed over the ticks that follow it, and an hour
// reopened by a rewrite (unpackFor) is packed again.
func (w *batchWriter) packFinished(ctx context.Context) error {
	for _, src := range slices.Sorted(maps.Keys(w.newest)) {
		if w.packed >= w.budget() {
			return nil
		}
		if err := w.packSource(ctx, src, w.newest[src]); err != nil {
			return err
		}
	}
	return nil
}

// budget is the number of points this transaction may pack: the archive's
// packBudget plus packPerWritten per point written, so that a tick of
// 200 series packs one or two series-hours (docs/archive.md: the finished
// hour of 200 series is packed over the next minutes, some 10 ms per tick,
// instead of in one tick of 2 s), and a batch import packs as fast as it
// writes.
func (w *batchWriter) budget() int {
	return w.a.packBudget + w.a.packPerWritten*w.written
}

// packBudget is the default number of points a transaction packs beyond
// its share of what it writes (Archive.packBudget). A series-hour is
// packed whole, so a transaction packs at least one: at 1 s, one
// series-hour per tick, about 10 ms of CPU here (docs/benchmarks.md).
const packBudget = 2048

// packPerWritten is the default Archive.packPerWritten.
const packPerWritten = 2

// packCursor is a source's finished hour being packed: the series whose
// points are still rows there, in id order. The window block is written
// last, once every series' block is, so that an hour with a window block
// is wholly packed; before that, each series of the hour is either rows
// or one block, which reads the same.
type packCursor struct {
	hour   int64
	series []int64
}

// packSource packs a source's finished hours within the budget.
func (w *batchWriter) packSource(ctx context.Context, src, newest int64) error {
	for w.packed < w.budget() {
		cur, ok := w.a.packing[src]
		if !ok {
			var err error
			if cur, ok, err = w.nextHour(ctx, src, newest); err != nil || !ok {
				return err
			}
		}
		for len(cur.series) > 0 && w.packed < w.budget() {
			n, err := packSeries(ctx, w.tx, cur.series[0], 0, cur.hour)
			if err != nil {
				return fmt.Errorf("packing the hour at %d: %w", cur.hour, err)
			}
			w.packed += n
			cur.series = cur.series[1:]
		}
		w.a.packing[src] = cur
		if len(cur.series) > 0 {
			return nil // the rest waits for the next writes
		}
		if err := packWindows(ctx, w.tx, src, 0, cur.hour); err != nil {
			return fmt.Errorf("packing the hour at %d: %w", cur.hour, err)
		}
		delete(w.a.packing, src)
		w.a.packedBelow[src] = max(w.a.packedBelow[src], addSat(cur.hour, blockSpan))
	}
	return nil
}

// nextHour returns the cursor of a source's oldest hour of raw rows
// before its open hour, if any.
func (w *batchWriter) nextHour(ctx context.Context, src, newest int64) (packCursor, bool, error) {
	rowsFrom, known := w.a.rowsFrom[src]
	if known && w.oldest[src] >= rowsFrom && blockOf(newest) <= rowsFrom {
		return packCursor{}, false, nil // no rows before rowsFrom, and no new hour begun
	}
	// Two queries: SQLite answers a lone min() or max() from the primary
	// key's ends, but scans the range for both at once.
	var first, last *int64
	for _, q := range []struct {
		agg string
		v   **int64
	}{{"min", &first}, {"max", &last}} {
		if err := w.tx.QueryRowContext(ctx, "SELECT "+q.agg+"(start) FROM windows WHERE source_id = ? AND res = 0", src).Scan(q.v); err != nil {
			return packCursor{}, false, err
		}
	}
	if first == nil {
		return packCursor{}, false, nil
	}
	// newest is in a row; packedBelow covers a rewrite below the blocks.
	below, err := w.packedBelow(ctx, src)
	if err != nil {
		return packCursor{}, false, err
	}
	open := max(blockOf(max(newest, *last)), below)
	if *first >= open {
		w.a.rowsFrom[src] = open
		return packCursor{}, false, nil
	}
	hour := blockOf(*first)
	delete(w.a.rowsFrom, src) // known again once the hours before open are packed
	// The hour gets point blocks from now on: a rewrite into it must
	// unpack it (unpackFor).
	w.a.packedBelow[src] = max(below, addSat(hour, blockSpan))
	ids, err := seriesOf(ctx, w.tx, src)
	return packCursor{hour: hour, series: ids}, err == nil, err
}

// addSat adds without overflowing past the int64 range.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// packSeries turns a series' rows of one block into its point block.
func packSeries(ctx context.Context, tx *sql.Tx, id, res, block int64) (points int, err error) {
	end := addSat(block, blockSpan)
	var rows int
	err = tx.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM points WHERE series_id = ? AND res = ? AND start >= ? AND start < ? LIMIT 1)", id, res, block, end).Scan(&rows)
	if err != nil || rows == 0 {
		return 0, err // no rows: packed already, or no events that hour
	}
	var data []byte
	prev := block
	err = eachPoint(ctx, tx, id, res, block, end, func(start int64, value []byte) error {
		data, prev = appendEntry(data, prev, start, value), start
		points++
		return nil
	})
	if err != nil {
		return 0, err
	}
	return points, putBlock(ctx, tx, "point_blocks", "series_id", "points", id, res, block, end, data)
}

// packWindows turns a source's window rows of one block into its window
// block.
func packWindows(ctx context.Context, tx *sql.Tx, src, res, block int64) error {
	end := addSat(block, blockSpan)
	var data, payload []byte
	prev := block
	err := eachWindow(ctx, tx, src, res, block, end, noLimit, func(w window) error {
		payload = encodeWindow(payload[:0], w)
		data, prev = appendEntry(data, prev, w.start, payload), w.start
		return nil
	})
	if err != nil {
		return err
	}
	return putBlock(ctx, tx, "window_blocks", "source_id", "windows", src, res, block, end, data)
}

// putBlock replaces a block (none when data is empty) and deletes the
// rows it now holds. The table names are constants of this package.
func putBlock(ctx context.Context, tx *sql.Tx, blocks, idColumn, rows string, id, res, block, end int64, data []byte) error {
	if len(data) > 0 {
		q := "INSERT OR REPLACE INTO " + blocks + " (" + idColumn + ", res, start, data) VALUES (?, ?, ?, ?)"
		if _, err := tx.ExecContext(ctx, q, id, res, block, data); err != nil {
			return err
		}
	}
	q := "DELETE FROM " + rows + " WHERE " + idColumn + " = ? AND res = ? AND start >= ? AND start < ?"
	_, err := tx.ExecContext(ctx, q, id, res, block, end)
	return err
}

// seriesOf lists a source's series ids.
func seriesOf(ctx context.Context, tx *sql.Tx, src int64) ([]int64, error) {
	return int64s(ctx, tx, "SELECT id FROM series WHERE source_id = ?", src)
}

// int64s returns a query's one integer column.
func int64s(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	var out []int64
	err := eachRow(ctx, q, func(rows *sql.Rows) error {
		var v int64
		err := rows.Scan(&v)
		out = append(out, v)
		return err
	}, query, args...)
	return out, err
}

// unpackFor reopens the packed hour an interval written again falls in,
// so that the usual replace-a-row path applies to it; the hour is packed
// again by the following writes.
func (w *batchWriter) unpackFor(ctx context.Context, src, start int64) error {
	below, err := w.packedBelow(ctx, src)
	if err != nil || start >= below {
		return err
	}
	delete(w.a.packing, src) // its hour may be this one; the next write looks again
	return unpack(ctx, w.tx, src, 0, blockOf(start))
}

// packedBelow returns a start from which on a source has no raw blocks,
// window or point blocks (an hour being packed has point blocks first).
func (w *batchWriter) packedBelow(ctx context.Context, src int64) (int64, error) {
	if below, ok := w.a.packedBelow[src]; ok {
		return below, nil
	}
	var last *int64
	err := w.tx.QueryRowContext(ctx, `SELECT max(m) FROM (
		SELECT max(start) AS m FROM window_blocks WHERE source_id = ?1 AND res = 0
		UNION ALL SELECT max(start) FROM point_blocks WHERE series_id IN (SELECT id FROM series WHERE source_id = ?1) AND res = 0)`, src).Scan(&last)
	if err != nil {
		return 0, err
	}
	below := int64(math.MinInt64)
	if last != nil {
		below = addSat(*last, blockSpan)
	}
	w.a.packedBelow[src] = below
	return below, nil
}

// unpack turns a source's blocks at block back into rows: its window
// block and its series' point blocks, all there or some (an hour being
// packed).
func unpack(ctx context.Context, tx *sql.Tx, src, res, block int64) error {
	var data []byte
	err := tx.QueryRowContext(ctx, "SELECT data FROM window_blocks WHERE source_id = ? AND res = ? AND start = ?", src, res, block).Scan(&data)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	zone := ""
	err = eachEntry(block, data, math.MinInt64, math.MaxInt64, func(start int64, p []byte) error {
		w, err := decodeWindow(start, p, zone)
		if err != nil {
			return err
		}
		zone = w.zoneName
		_, err = tx.ExecContext(ctx, insertWindow, src, res, w.start, w.dur, w.flags, w.zoneOff, w.zoneName)
		return err
	})
	if err != nil {
		return err
	}
	ids, err := seriesOf(ctx, tx, src)
	if err != nil {
		return err
	}
	for _, id := range ids {
		var data []byte
		err := tx.QueryRowContext(ctx, "SELECT data FROM point_blocks WHERE series_id = ? AND res = ? AND start = ?", id, res, block).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		err = eachEntry(block, data, math.MinInt64, math.MaxInt64, func(start int64, value []byte) error {
			_, err := tx.ExecContext(ctx, insertPoint, id, res, start, value)
			return err
		})
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM point_blocks WHERE series_id = ? AND res = ? AND start = ?", id, res, block); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, "DELETE FROM window_blocks WHERE source_id = ? AND res = ? AND start = ?", src, res, block)
	return err
}
