package archive

import (
	"context"
	"database/sql"
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

// interval returns the window as an interval of source, without series.
func (w window) interval(source string) stream.Interval {
	return stream.Interval{Source: source, Start: time.Unix(0, w.start).In(location(w.zoneName, w.zoneOff)),
		Duration: time.Duration(w.dur), Gap: w.flags&flagGap != 0, Relative: w.flags&flagRelative != 0}
}

// noLimit is SQLite's LIMIT for all rows.
const noLimit = -1

// eachWindow calls f for a source's windows of one resolution starting in
// [from, to), in time order, at most limit of them.
func eachWindow(ctx context.Context, q querier, source, res, from, to int64, limit int, f func(window) error) error {
	return eachRow(ctx, q, func(rows *sql.Rows) error {
		var w window
		if err := rows.Scan(&w.start, &w.dur, &w.flags, &w.zoneOff, &w.zoneName); err != nil {
			return err
		}
		return f(w)
	}, `SELECT start, dur, flags, zone_off, zone_name FROM windows
		WHERE source_id = ? AND res = ? AND start >= ? AND start < ? ORDER BY start LIMIT ?`, source, res, from, to, limit)
}

// eachPoint calls f for a series' points of one resolution starting in
// [from, to), in time order.
func eachPoint(ctx context.Context, q querier, series, res, from, to int64, f func(start int64, data []byte) error) error {
	return eachRow(ctx, q, func(rows *sql.Rows) error {
		var start int64
		var data []byte
		if err := rows.Scan(&start, &data); err != nil {
			return err
		}
		return f(start, data)
	}, `SELECT start, data FROM points WHERE series_id = ? AND res = ? AND start >= ? AND start < ? ORDER BY start`,
		series, res, from, to)
}
