package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
)

// Packing keeps one rule: an hour of a source is either open (its windows
// and points are rows) or packed (one window block and one block per
// series), never both, so reads can scan rows and blocks in one ordered
// pass (eachWindow).

// packFinished packs, for every source this transaction wrote, the raw
// rows before its newest hour: a live source's hour is packed by the first
// write of the next hour, in the same transaction, and an hour reopened
// by a rewrite (unpackFor) is packed again.
func (w *batchWriter) packFinished(ctx context.Context) error {
	for src, newest := range w.newest {
		rowsFrom, known := w.a.rowsFrom[src]
		if known && w.oldest[src] >= rowsFrom && blockOf(newest) <= rowsFrom {
			continue // no rows before rowsFrom, and no new hour begun
		}
		// Two queries: SQLite answers a lone min() or max() from the
		// primary key's ends, but scans the range for both at once.
		var first, last *int64
		for _, q := range []struct {
			agg string
			v   **int64
		}{{"min", &first}, {"max", &last}} {
			if err := w.tx.QueryRowContext(ctx, "SELECT "+q.agg+"(start) FROM windows WHERE source_id = ? AND res = 0", src).Scan(q.v); err != nil {
				return err
			}
		}
		if first == nil {
			continue
		}
		// newest is in a row; packedBelow covers a rewrite below the blocks.
		open := max(blockOf(max(newest, *last)), w.a.packedBelow[src])
		w.a.rowsFrom[src] = open
		if *first >= open {
			continue
		}
		hours, err := openHours(ctx, w.tx, src, open)
		if err != nil {
			return err
		}
		for i, h := range hours {
			if w.packed >= w.a.packBudget {
				w.a.rowsFrom[src] = h // the rest waits for the next writes
				break
			}
			n, err := pack(ctx, w.tx, src, 0, h)
			if err != nil {
				return fmt.Errorf("packing the hour at %d: %w", h, err)
			}
			w.packed += n
			w.a.packedBelow[src] = max(w.a.packedBelow[src], addSat(hours[i], blockSpan))
		}
	}
	return nil
}

// packBudget is the default bound on the points one transaction packs
// (Archive.packBudget), beyond its first hour: the first write after migrating a week of 200 series at 1 s would
// otherwise pack 120 million points in one transaction. About 3 s here
// (docs/benchmarks.md); the hours left are packed by the next writes.
const packBudget = 1 << 20

// addSat adds without overflowing past the int64 range.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// openHours lists the blocks of a source's raw rows before until.
func openHours(ctx context.Context, tx *sql.Tx, src, until int64) ([]int64, error) {
	var hours []int64
	err := eachRow(ctx, tx, func(rows *sql.Rows) error {
		var start int64
		if err := rows.Scan(&start); err != nil {
			return err
		}
		if h := blockOf(start); len(hours) == 0 || hours[len(hours)-1] != h {
			hours = append(hours, h)
		}
		return nil
	}, "SELECT start FROM windows WHERE source_id = ? AND res = 0 AND start < ? ORDER BY start", src, until)
	return hours, err
}

// pack turns a source's rows of one block into its window block and one
// block per series.
func pack(ctx context.Context, tx *sql.Tx, src, res, block int64) (points int, err error) {
	end := addSat(block, blockSpan)
	var data, payload []byte
	prev := block
	err = eachWindow(ctx, tx, src, res, block, end, noLimit, func(w window) error {
		payload = encodeWindow(payload[:0], w)
		data, prev = appendEntry(data, prev, w.start, payload), w.start
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := putBlock(ctx, tx, "window_blocks", "source_id", "windows", src, res, block, end, data); err != nil {
		return 0, err
	}
	ids, err := seriesOf(ctx, tx, src)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		data, prev = data[:0], block
		err := eachPoint(ctx, tx, id, res, block, end, func(start int64, value []byte) error {
			data, prev = appendEntry(data, prev, start, value), start
			points++
			return nil
		})
		if err != nil {
			return 0, err
		}
		if err := putBlock(ctx, tx, "point_blocks", "series_id", "points", id, res, block, end, data); err != nil {
			return 0, err
		}
	}
	return points, nil
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
// again at the end of the transaction.
func (w *batchWriter) unpackFor(ctx context.Context, src, start int64) error {
	below, ok := w.a.packedBelow[src]
	if !ok {
		var last *int64
		if err := w.tx.QueryRowContext(ctx, "SELECT max(start) FROM window_blocks WHERE source_id = ? AND res = 0", src).Scan(&last); err != nil {
			return err
		}
		below = math.MinInt64
		if last != nil {
			below = addSat(*last, blockSpan)
		}
		w.a.packedBelow[src] = below
	}
	if start >= below {
		return nil
	}
	return unpack(ctx, w.tx, src, 0, blockOf(start))
}

// unpack turns a source's blocks at block back into rows.
func unpack(ctx context.Context, tx *sql.Tx, src, res, block int64) error {
	var data []byte
	err := tx.QueryRowContext(ctx, "SELECT data FROM window_blocks WHERE source_id = ? AND res = ? AND start = ?", src, res, block).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
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
