package archive

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/latscope/latscope/stream"
)

// querier is what reads: the database or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// eachRow runs a query and calls scan for every row.
func eachRow(ctx context.Context, q querier, scan func(*sql.Rows) error, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// window is one row of the windows table.
type window struct {
	start, dur     int64
	flags, zoneOff int
	zoneName       string
}

// interval returns the window as an interval of source, without series,
// its start in zone (location(w.zoneName, w.zoneOff), shared by windows).
func (w window) interval(source string, zone *time.Location) stream.Interval {
	return stream.Interval{Source: source, Start: time.Unix(0, w.start).In(zone),
		Duration: time.Duration(w.dur), Gap: w.flags&flagGap != 0, Relative: w.flags&flagRelative != 0}
}

// noLimit asks eachWindow for all windows.
const noLimit = -1

// errEnough stops a scan early; it is not an error for the caller.
var errEnough = errors.New("enough rows")

// eachWindow calls f for a source's windows of one resolution starting in
// [from, to), in time order, at most limit of them (noLimit: all). Windows
// come from the open rows and from the blocks alike: a block and rows
// never share an hour (write.go keeps it so), and a block sorts at its
// start, before every entry it holds, so one ordered scan of both tables
// is in time order.
func eachWindow(ctx context.Context, q querier, source, res, from, to int64, limit int, f func(window) error) error {
	n := 0
	emit := func(w window) error {
		if limit != noLimit && n >= limit {
			return errEnough
		}
		n++
		return f(w)
	}
	var zone string // the previous window's zone name, shared
	err := eachRow(ctx, q, func(rows *sql.Rows) error {
		var w window
		var data []byte
		if err := rows.Scan(&w.start, &w.dur, &w.flags, &w.zoneOff, &w.zoneName, &data); err != nil {
			return err
		}
		if data == nil {
			return emit(w)
		}
		return eachEntry(w.start, data, from, to, func(start int64, p []byte) error {
			w, err := decodeWindow(start, p, zone)
			if err != nil {
				return err
			}
			zone = w.zoneName
			return emit(w)
		})
	}, `SELECT start, dur, flags, zone_off, zone_name, NULL FROM windows
			WHERE source_id = ?1 AND res = ?2 AND start >= ?3 AND start < ?4
		UNION ALL SELECT start, 0, 0, 0, '', data FROM window_blocks
			WHERE source_id = ?1 AND res = ?2 AND start >= ?5 AND start < ?4
		ORDER BY 1`, source, res, from, to, firstBlock(from))
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

// eachPoint calls f for a series' points of one resolution starting in
// [from, to), in time order, from the open rows and the blocks (as
// eachWindow).
func eachPoint(ctx context.Context, q querier, series, res, from, to int64, f func(start int64, data []byte) error) error {
	return eachRow(ctx, q, func(rows *sql.Rows) error {
		var start int64
		var data []byte
		var block bool
		if err := rows.Scan(&start, &data, &block); err != nil {
			return err
		}
		if !block {
			return f(start, data)
		}
		return eachEntry(start, data, from, to, f)
	}, `SELECT start, data, 0 FROM points WHERE series_id = ?1 AND res = ?2 AND start >= ?3 AND start < ?4
		UNION ALL SELECT start, data, 1 FROM point_blocks WHERE series_id = ?1 AND res = ?2 AND start >= ?5 AND start < ?4
		ORDER BY 1`, series, res, from, to, firstBlock(from))
}

// preparedReads is the querier of the read paths: each query is prepared
// once per archive (parsing the windows and points queries took some
// 0.1 ms each, 48 times for a day of one series) and kept until Close.
type preparedReads struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func (p *preparedReads) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (p *preparedReads) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.stmts[query]; ok {
		return st, nil
	}
	st, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if p.stmts == nil {
		p.stmts = map[string]*sql.Stmt{}
	}
	p.stmts[query] = st
	return st, nil
}

// close closes the prepared statements.
func (p *preparedReads) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.stmts {
		st.Close()
	}
	clear(p.stmts)
}
