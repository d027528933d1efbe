package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// MySQL 8.0.19+ keeps statement latency histograms of its own:
// events_statements_histogram_global (one row per bucket) and
// events_statements_histogram_by_digest (one row per digest and bucket),
// cumulative since the server started or the table was truncated. Their 450
// buckets are the server's (storage/perfschema/pfs_histogram.cc): bucket 0
// is [0, 10 µs), bucket n ≥ 1 starts at 10 µs × 10^((n−1)/50) (the ratio
// BUCKET_BASE = 10^(1/50) ≈ 1.0471, 50 buckets a decade), and the last
// bucket, 449, ends at ULLONG_MAX: open-topped. The sampler polls them once
// per interval and emits the deltas with those edges (hist.NewCustom).
// MariaDB (10.11 at least) has neither table.

// Series names of the native histograms.
const (
	globalHistogramSeries = "statements (histogram)"
	histogramSuffix       = " (histogram)"
	// maxHistogramDigests caps the digest histograms per interval, the
	// digests with the most statements in the interval first.
	maxHistogramDigests = 20
)

// The SQL the histogram poller runs; %s is the schema (performance_schema,
// or a copy in tests).
const (
	histogramTablesSQL = `SELECT COUNT(*) FROM information_schema.tables
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN ('events_statements_histogram_global', 'events_statements_histogram_by_digest')`
	globalHistogramSQL = `SELECT BUCKET_NUMBER, BUCKET_TIMER_LOW, BUCKET_TIMER_HIGH, COUNT_BUCKET
		FROM %s.events_statements_histogram_global ORDER BY BUCKET_NUMBER`
	// Only the non-empty buckets: the table has 450 rows per digest. The
	// digest text comes from the digest summary; the histogram has none.
	digestHistogramSQL = `SELECT h.SCHEMA_NAME, h.DIGEST, s.DIGEST_TEXT, h.BUCKET_NUMBER, h.BUCKET_TIMER_LOW, h.BUCKET_TIMER_HIGH, h.COUNT_BUCKET
		FROM %s.events_statements_histogram_by_digest h
		LEFT JOIN %s.events_statements_summary_by_digest s ON s.SCHEMA_NAME <=> h.SCHEMA_NAME AND s.DIGEST <=> h.DIGEST
		WHERE h.COUNT_BUCKET > 0`
)

// rowSource is what the poller reads query answers from (*sql.Rows).
type rowSource interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// queryFunc runs a query; the live path wraps a connection's QueryContext,
// the tests return fixture rows for the same SQL.
type queryFunc func(ctx context.Context, query string, args ...any) (rowSource, error)

// connQuery adapts a querier (connection) to queryFunc.
func connQuery(q querier) queryFunc {
	return func(ctx context.Context, query string, args ...any) (rowSource, error) {
		return q.QueryContext(ctx, query, args...)
	}
}

// hasHistogramTables reports whether the server has both histogram tables
// (MySQL 8.0.19+): checked once, silently false on MariaDB.
func hasHistogramTables(ctx context.Context, q querier, schema string) (bool, error) {
	var n int
	if err := q.QueryRowContext(ctx, histogramTablesSQL, schema).Scan(&n); err != nil {
		return false, fmt.Errorf("looking for the statement histogram tables: %w", err)
	}
	return n == 2, nil
}

// bucketRow is one histogram row; times in picoseconds.
type bucketRow struct {
	number    int
	low, high uint64
	count     uint64
}

// histLayout is the server's bucket edges in µs, for hist.NewCustom:
// bounds[0] is bucket 0's upper edge (bucket 0 is the zero bucket), bounds[n]
// bucket n's upper edge, +Inf for the open top.
type histLayout struct {
	bounds []float64
	lows   []uint64 // BUCKET_TIMER_LOW per bucket, to check digest rows
}

// layoutFromRows builds the layout from the global table's complete set of
// rows (bucket numbers 0..n−1 in order, each starting where the previous
// ends, the first at 0).
func layoutFromRows(rows []bucketRow) (*histLayout, error) {
	if len(rows) < 2 {
		return nil, fmt.Errorf("statement histogram has %d buckets", len(rows))
	}
	l := &histLayout{bounds: make([]float64, len(rows)), lows: make([]uint64, len(rows))}
	for i, r := range rows {
		switch {
		case r.number != i:
			return nil, fmt.Errorf("statement histogram bucket %d in row %d", r.number, i)
		case i == 0 && r.low != 0:
			return nil, fmt.Errorf("statement histogram bucket 0 starts at %d ps, not 0", r.low)
		case i > 0 && r.low != rows[i-1].high:
			return nil, fmt.Errorf("statement histogram bucket %d starts at %d ps, bucket %d ends at %d ps", i, r.low, i-1, rows[i-1].high)
		case r.high <= r.low:
			return nil, fmt.Errorf("statement histogram bucket %d is [%d, %d) ps", i, r.low, r.high)
		}
		l.lows[i] = r.low
		l.bounds[i] = float64(r.high) / 1e6
	}
	if rows[len(rows)-1].high == math.MaxUint64 {
		l.bounds[len(rows)-1] = math.Inf(1)
	}
	if _, err := hist.NewCustom(hist.Microsecond, l.bounds); err != nil {
		return nil, fmt.Errorf("statement histogram edges: %w", err)
	}
	return l, nil
}

// same reports whether rows describe this layout.
func (l *histLayout) same(rows []bucketRow) bool {
	if len(rows) != len(l.lows) {
		return false
	}
	for i, r := range rows {
		if r.low != l.lows[i] {
			return false
		}
	}
	return true
}

// add adds one row's count to h (a histogram on this layout), checking
// that the row's edges are the layout's.
func (l *histLayout) add(h *hist.Histogram, r bucketRow) error {
	if r.number < 0 || r.number >= len(l.lows) || r.low != l.lows[r.number] {
		return fmt.Errorf("statement histogram bucket %d [%d, %d) ps is not the server's layout", r.number, r.low, r.high)
	}
	return h.AddCustom(r.number-1, float64(r.count))
}

// newHist returns an empty histogram on the layout (whose edges
// layoutFromRows checked with hist.NewCustom).
func (l *histLayout) newHist() *hist.Histogram {
	h, _ := hist.NewCustom(hist.Microsecond, l.bounds)
	return h
}

// histPoller turns the cumulative histogram tables into per-interval
// deltas. One poller lives as long as a connection: a new connection
// starts from a new baseline, so a gap's statements are never attributed to
// the window after it.
type histPoller struct {
	schema  string // "performance_schema"
	layout  *histLayout
	global  *stream.Differ
	digests *stream.Differ
	names   map[stream.Key]string // digest → series name
}

func newHistPoller(schema string) *histPoller {
	return &histPoller{schema: schema, global: stream.NewDiffer("global"), digests: stream.NewDiffer("digests"),
		names: map[stream.Key]string{}}
}

// poll reads both tables and returns the series of the interval ending at
// now: the global histogram and the digests with the most statements,
// named as the statement sampler names them plus " (histogram)". The first
// poll only sets the baseline. reset reports a table whose counts went
// back (TRUNCATE): its series are left out of this interval.
func (p *histPoller) poll(ctx context.Context, query queryFunc, now time.Time) (series []stream.SeriesHist, reset bool, err error) {
	rows, err := readBuckets(ctx, query, fmt.Sprintf(globalHistogramSQL, p.schema))
	if err != nil {
		return nil, false, err
	}
	if p.layout == nil || !p.layout.same(rows) {
		if p.layout, err = layoutFromRows(rows); err != nil {
			return nil, false, err
		}
		// New edges (a server upgrade behind a reconnect): new baselines.
		p.global, p.digests = stream.NewDiffer("global"), stream.NewDiffer("digests")
	}
	global := p.layout.newHist()
	for _, r := range rows {
		if err := p.layout.add(global, r); err != nil {
			return nil, false, err
		}
	}
	digests, err := p.readDigests(ctx, query)
	if err != nil {
		return nil, false, err
	}
	g, gok, err := p.global.Next(now, 0, false, []stream.SeriesHist{{Key: stream.Key{Event: globalHistogramSeries}, Hist: global}})
	if err != nil {
		return nil, false, err
	}
	d, dok, err := p.digests.Next(now, 0, false, digests)
	if err != nil {
		return nil, false, err
	}
	if gok && !g.Gap {
		series = append(series, g.Series...)
	}
	if dok && !d.Gap {
		series = append(series, p.topDigests(d.Series)...)
	}
	return series, g.Gap || d.Gap, nil
}

// digestKey identifies a digest's cumulative histogram for the Differ.
func digestKey(schema, digest sql.NullString) stream.Key {
	return stream.Key{Event: schema.String + "\x00" + digest.String, Instance: fmt.Sprint(schema.Valid, digest.Valid)}
}

// readDigests reads the digest histograms, one per (schema, digest), and
// remembers each one's series name.
func (p *histPoller) readDigests(ctx context.Context, query queryFunc) ([]stream.SeriesHist, error) {
	rs, err := query(ctx, fmt.Sprintf(digestHistogramSQL, p.schema, p.schema))
	if err != nil {
		return nil, fmt.Errorf("polling events_statements_histogram_by_digest: %w", err)
	}
	defer rs.Close()
	byKey := map[stream.Key]int{}
	var out []stream.SeriesHist
	for rs.Next() {
		var schema, digest, text sql.NullString
		var r bucketRow
		if err := rs.Scan(&schema, &digest, &text, &r.number, &r.low, &r.high, &r.count); err != nil {
			return nil, fmt.Errorf("reading events_statements_histogram_by_digest: %w", err)
		}
		k := digestKey(schema, digest)
		i, ok := byKey[k]
		if !ok {
			i = len(out)
			byKey[k] = i
			out = append(out, stream.SeriesHist{Key: k, Hist: p.layout.newHist()})
			p.names[k] = digestSeries(digest, text)
		}
		if err := p.layout.add(out[i].Hist, r); err != nil {
			return nil, fmt.Errorf("events_statements_histogram_by_digest: %w", err)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("reading events_statements_histogram_by_digest: %w", err)
	}
	return out, nil
}

// digestSeries names a digest's histogram like the sampler's statement
// series, plus " (histogram)".
func digestSeries(digest, text sql.NullString) string {
	switch {
	case text.Valid && text.String != "":
		return statementSeries(text, "") + histogramSuffix
	case digest.Valid:
		return "statement: digest " + digest.String + histogramSuffix
	}
	return "statement: (no digest)" + histogramSuffix
}

// topDigests names the digest deltas, merges digests of the same name (the
// same text in two schemas, as the sampler does) and keeps the
// maxHistogramDigests with the most statements.
func (p *histPoller) topDigests(deltas []stream.SeriesHist) []stream.SeriesHist {
	byName := map[string]*hist.Histogram{}
	for _, d := range deltas {
		name := p.names[d.Key]
		if h := byName[name]; h != nil {
			h.Merge(d.Hist)
		} else {
			byName[name] = d.Hist.Clone()
		}
	}
	out := make([]stream.SeriesHist, 0, len(byName))
	for name, h := range byName {
		out = append(out, stream.SeriesHist{Key: stream.Key{Event: name}, Hist: h})
	}
	sort.Slice(out, func(i, j int) bool {
		if ci, cj := out[i].Hist.Count(), out[j].Hist.Count(); ci != cj {
			return ci > cj
		}
		return out[i].Key.Event < out[j].Key.Event
	})
	return out[:min(len(out), maxHistogramDigests)]
}

// readBuckets reads the global histogram's rows.
func readBuckets(ctx context.Context, query queryFunc, q string) ([]bucketRow, error) {
	rs, err := query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("polling events_statements_histogram_global: %w", err)
	}
	defer rs.Close()
	var rows []bucketRow
	for rs.Next() {
		var r bucketRow
		if err := rs.Scan(&r.number, &r.low, &r.high, &r.count); err != nil {
			return nil, fmt.Errorf("reading events_statements_histogram_global: %w", err)
		}
		rows = append(rows, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("reading events_statements_histogram_global: %w", err)
	}
	return rows, nil
}
