// Package oracle samples live Oracle databases with the pure-Go go-ora
// driver: GV$EVENT_HISTOGRAM(_MICRO) polls turned into per-interval wait
// histograms (through source/awr's row mapping), and a wait-history sampler
// over X$KSLWH (SYS) or V$SESSION_WAIT_HISTORY giving exact per-wait
// durations. Every query goes through a rowSource: the database/sql
// implementation talks to Oracle, a fixture replayer feeds tests, and all
// the SQL text and row mapping is shared; only the driver's network I/O is
// untested here (no Oracle server can run on the build machines).
package oracle

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// rows is a query result: column names upper-cased, values as the driver
// (or a fixture) returned them.
type rows struct {
	columns []string
	values  [][]any
}

// col returns the index of a column (−1 when absent).
func (r *rows) col(name string) int {
	for i, c := range r.columns {
		if c == name {
			return i
		}
	}
	return -1
}

// rowSource runs queries. Implementations: sqlRowSource (database/sql with
// go-ora) and fixtureRowSource (tests).
type rowSource interface {
	query(ctx context.Context, text string, args ...any) (*rows, error)
	Close() error
}

// sqlRowSource runs queries on a database/sql connection pool.
type sqlRowSource struct {
	db      *sql.DB
	timeout time.Duration
}

func (s *sqlRowSource) query(ctx context.Context, text string, args ...any) (*rows, error) {
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	res, err := s.db.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	names, err := res.Columns()
	if err != nil {
		return nil, err
	}
	out := &rows{columns: make([]string, len(names))}
	for i, n := range names {
		out.columns[i] = strings.ToUpper(n)
	}
	for res.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := res.Scan(ptrs...); err != nil {
			return nil, err
		}
		out.values = append(out.values, vals)
	}
	return out, res.Err()
}

func (s *sqlRowSource) Close() error { return s.db.Close() }

// fixtureRowSource replays recorded results: each query text (matched by a
// substring such as a FROM clause's view name) returns its results in turn;
// a result with err set fails that call. After the last result the query
// fails with errFixtureDone.
type fixtureRowSource struct {
	results map[string][]fixtureResult
	calls   map[string]int
}

type fixtureResult struct {
	rows *rows
	err  error
}

var errFixtureDone = fmt.Errorf("fixture: no more results")

func (f *fixtureRowSource) add(match string, r *rows, err error) {
	if f.results == nil {
		f.results, f.calls = map[string][]fixtureResult{}, map[string]int{}
	}
	f.results[match] = append(f.results[match], fixtureResult{r, err})
}

func (f *fixtureRowSource) query(_ context.Context, text string, _ ...any) (*rows, error) {
	for match, list := range f.results {
		if !strings.Contains(text, match) {
			continue
		}
		n := f.calls[match]
		if n >= len(list) {
			return nil, errFixtureDone
		}
		f.calls[match] = n + 1
		return list[n].rows, list[n].err
	}
	return nil, fmt.Errorf("fixture: no result for query %.60q", text)
}

func (f *fixtureRowSource) Close() error { return nil }

// Value conversions: go-ora returns NUMBER as int64, float64 or string
// depending on scale, VARCHAR2 as string, DATE/TIMESTAMP as time.Time;
// fixtures hold strings as SQL*Plus prints them.

func asString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999999-07:00")
	}
	return fmt.Sprint(v)
}

// asInt reads a whole number; ok is false for NULL, fractions and text.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<62 {
			return 0, false
		}
		return int64(x), true
	case string, []byte:
		n, err := strconv.ParseInt(strings.TrimSpace(asString(x)), 10, 64)
		return n, err == nil
	}
	return 0, false
}
