package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/stream"
)

// Series kinds.
const (
	kindHist = 0
	kindMean = 1
)

// Window flags.
const (
	flagGap      = 1
	flagRelative = 2
)

// seriesRef names a series row: its source and kind with the key.
type seriesRef struct {
	source int64
	kind   int
	key    stream.Key
}

// idCache remembers the ids of sources and series already in the archive,
// so that appending an interval costs no lookups.
type idCache struct {
	sources map[string]int64
	series  map[seriesRef]int64
}

func newIDCache() idCache {
	return idCache{sources: map[string]int64{}, series: map[seriesRef]int64{}}
}

// WriteBatch appends intervals (of any sources) in one transaction, the
// way a collector writes every job's interval of one tick: either all are
// kept or none. Writing an interval again (same source and start)
// replaces it, so re-importing a recording is idempotent.
func (a *Archive) WriteBatch(ctx context.Context, ivs []stream.Interval) error {
	if err := a.checkWritable(ivs...); err != nil {
		return err
	}
	return a.writeChecked(ctx, ivs)
}

// checkWritable refuses writes to a read-only archive and intervals it
// cannot store.
func (a *Archive) checkWritable(ivs ...stream.Interval) error {
	if a.opts.ReadOnly {
		return a.errorf("opened read-only")
	}
	for _, iv := range ivs {
		if err := checkInterval(iv); err != nil {
			return a.errorf("cannot archive interval: %w", err)
		}
	}
	return nil
}

// writeChecked writes intervals checkInterval passed in one transaction.
func (a *Archive) writeChecked(ctx context.Context, ivs []stream.Interval) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	added := newIDCache() // ids this transaction creates, forgotten if it fails
	err := a.inTx(ctx, func(tx *sql.Tx) error {
		w := batchWriter{a: a, tx: tx, added: added, newest: map[int64]int64{}, oldest: map[int64]int64{}}
		defer w.close()
		for _, iv := range ivs {
			if err := w.write(ctx, iv); err != nil {
				return err
			}
		}
		return w.packFinished(ctx)
	})
	if err != nil {
		clear(a.packedBelow) // they may describe the rolled-back transaction
		clear(a.rowsFrom)
		clear(a.packing)
		return a.errorf("writing %s: %w", a.path, err)
	}
	a.ckpt.wrote()
	for k, v := range added.sources {
		a.ids.sources[k] = v
	}
	for k, v := range added.series {
		a.ids.series[k] = v
	}
	return nil
}

// Starts are stored as Unix nanoseconds.
var (
	minStart = time.Unix(0, math.MinInt64)
	maxStart = time.Unix(0, math.MaxInt64)
)

// checkInterval refuses what the archive cannot store or read back.
func checkInterval(iv stream.Interval) error {
	if err := iv.Validate(); err != nil {
		return err
	}
	if iv.Start.Before(minStart) || iv.Start.After(maxStart) {
		return fmt.Errorf("%s: start %s outside the years 1678-2262 (Unix nanoseconds)", iv.Source, iv.Start)
	}
	for _, s := range iv.Series {
		if err := recording.CheckHistogram(s.Hist); err != nil {
			return fmt.Errorf("%s: series %s: %w", iv.Source, s.Key, err)
		}
	}
	return nil
}

// batchWriter writes the intervals of one transaction.
type batchWriter struct {
	a             *Archive
	tx            *sql.Tx
	added         idCache
	window, point *sql.Stmt
	buf           []byte
	// newest is the latest start written per source: the hours before its
	// own are finished and get packed at the end of the transaction.
	newest  map[int64]int64
	oldest  map[int64]int64
	packed  int // points packed in this transaction (budget)
	written int // points written in this transaction
}

func (w *batchWriter) close() {
	for _, s := range []*sql.Stmt{w.window, w.point} {
		if s != nil {
			s.Close()
		}
	}
}

func (w *batchWriter) write(ctx context.Context, iv stream.Interval) error {
	var err error
	if w.window == nil {
		if w.window, err = w.tx.PrepareContext(ctx, newWindow); err != nil {
			return err
		}
		if w.point, err = w.tx.PrepareContext(ctx, insertPoint); err != nil {
			return err
		}
	}
	src, err := w.sourceID(ctx, iv.Source)
	if err != nil {
		return err
	}
	start := iv.Start.UnixNano()
	if err := w.unpackFor(ctx, src, start); err != nil {
		return err
	}
	if n, ok := w.newest[src]; !ok || start > n {
		w.newest[src] = start
	}
	if o, ok := w.oldest[src]; !ok || start < o {
		w.oldest[src] = start
	}
	name, off := iv.Start.Zone()
	res, err := w.window.ExecContext(ctx, src, 0, start, int64(iv.Duration), windowFlags(iv), off, name)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err := w.replaceWindow(ctx, src, start, iv); err != nil {
			return err
		}
	}
	w.written += len(iv.Series) + len(iv.Means)
	for _, s := range iv.Series {
		w.buf = recording.AppendHistogram(w.buf[:0], s.Hist)
		if err := w.putPoint(ctx, seriesRef{src, kindHist, s.Key}, 0, start); err != nil {
			return err
		}
	}
	for _, m := range iv.Means {
		w.buf = recording.AppendMean(w.buf[:0], m)
		if err := w.putPoint(ctx, seriesRef{src, kindMean, m.Key}, 0, start); err != nil {
			return err
		}
	}
	return nil
}

// replaceWindow handles an interval written again: its window is
// replaced and the points of its previous version go, so that a series it
// no longer has does not linger.
func (w *batchWriter) replaceWindow(ctx context.Context, src, start int64, iv stream.Interval) error {
	if _, err := w.tx.ExecContext(ctx, `DELETE FROM points WHERE series_id IN (SELECT id FROM series WHERE source_id = ?) AND res = 0 AND start = ?`, src, start); err != nil {
		return err
	}
	name, off := iv.Start.Zone()
	_, err := w.tx.ExecContext(ctx, insertWindow, src, 0, start, int64(iv.Duration), windowFlags(iv), off, name)
	return err
}

const (
	// newWindow inserts a window unless its source already has one at
	// that start (then it affects no row).
	newWindow    = `INSERT INTO windows (source_id, res, start, dur, flags, zone_off, zone_name) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	insertWindow = `INSERT OR REPLACE INTO windows (source_id, res, start, dur, flags, zone_off, zone_name) VALUES (?, ?, ?, ?, ?, ?, ?)`
	insertPoint  = `INSERT OR REPLACE INTO points (series_id, res, start, data) VALUES (?, ?, ?, ?)`
)

func windowFlags(iv stream.Interval) int {
	f := 0
	if iv.Gap {
		f |= flagGap
	}
	if iv.Relative {
		f |= flagRelative
	}
	return f
}

// putPoint stores w.buf as the point of a series.
func (w *batchWriter) putPoint(ctx context.Context, ref seriesRef, res int64, start int64) error {
	id, err := w.seriesID(ctx, ref)
	if err != nil {
		return err
	}
	_, err = w.point.ExecContext(ctx, id, res, start, w.buf)
	return err
}

func (w *batchWriter) sourceID(ctx context.Context, name string) (int64, error) {
	if id, ok := w.a.ids.sources[name]; ok {
		return id, nil
	}
	if id, ok := w.added.sources[name]; ok {
		return id, nil
	}
	id, err := upsertID(ctx, w.tx, "INSERT OR IGNORE INTO sources (name) VALUES (?)", "SELECT id FROM sources WHERE name = ?", name)
	if err != nil {
		return 0, fmt.Errorf("source %s: %w", name, err)
	}
	w.added.sources[name] = id
	return id, nil
}

func (w *batchWriter) seriesID(ctx context.Context, ref seriesRef) (int64, error) {
	if id, ok := w.a.ids.series[ref]; ok {
		return id, nil
	}
	if id, ok := w.added.series[ref]; ok {
		return id, nil
	}
	id, err := upsertID(ctx, w.tx,
		"INSERT OR IGNORE INTO series (source_id, kind, event, instance, key_source) VALUES (?, ?, ?, ?, ?)",
		"SELECT id FROM series WHERE source_id = ? AND kind = ? AND event = ? AND instance = ? AND key_source = ?",
		ref.source, ref.kind, ref.key.Event, ref.key.Instance, ref.key.Source)
	if err != nil {
		return 0, fmt.Errorf("series %s: %w", ref.key, err)
	}
	w.added.series[ref] = id
	return id, nil
}

// upsertID inserts a row unless it exists and returns its id.
func upsertID(ctx context.Context, tx *sql.Tx, insert, lookup string, args ...any) (int64, error) {
	if _, err := tx.ExecContext(ctx, insert, args...); err != nil {
		return 0, err
	}
	var id int64
	err := tx.QueryRowContext(ctx, lookup, args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, errors.New("inserted row not found")
	}
	return id, err
}
