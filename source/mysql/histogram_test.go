package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
)

// mysql8Timers returns BUCKET_TIMER_LOW of MySQL 8's 450 statement histogram
// buckets plus the last one's BUCKET_TIMER_HIGH, in picoseconds, computed
// as storage/perfschema/pfs_histogram.cc (PFS_histogram_timers::init) does:
// bucket 0 starts at 0, bucket 1 at 10 µs, each next one BUCKET_BASE =
// 1.047128548050900 (10^(1/50)) times higher, truncated to integers; bucket
// 449 ends at ULLONG_MAX. The reference manual's example
// (events_statements_histogram_by_digest, "Statement Histogram Summary
// Tables") shows buckets 42..45 at 66069344, 69183097, 72443596, 75857757,
// 79432823 ps: TestMySQL8BucketEdges checks them.
func mysql8Timers() []uint64 {
	t := make([]uint64, 451)
	cur := 10e6
	for i := 1; i < 450; i++ {
		t[i] = uint64(cur)
		cur *= 1.047128548050900
	}
	t[450] = math.MaxUint64
	return t
}

func TestMySQL8BucketEdges(t *testing.T) {
	timers := mysql8Timers()
	for n, want := range map[int]uint64{0: 0, 1: 10000000, 42: 66069344, 43: 69183097, 44: 72443596, 45: 75857757, 46: 79432823} {
		if timers[n] != want {
			t.Errorf("bucket %d starts at %d ps, want %d", n, timers[n], want)
		}
	}
}

// SYNTHETIC: no MySQL 8 server can run here. These are the rows MySQL 8's
// events_statements_histogram_global and _by_digest return, with the
// server's real bucket edges (mysql8Timers) and made-up counts.

// globalRows returns the 450 rows of the global histogram with counts.
func globalRows(counts map[int]uint64) [][]any {
	timers := mysql8Timers()
	rows := make([][]any, 450)
	for n := range rows {
		rows[n] = []any{n, timers[n], timers[n+1], counts[n]}
	}
	return rows
}

// digestRows returns a digest's non-empty bucket rows.
func digestRows(schema, digest, text any, counts map[int]uint64) [][]any {
	timers := mysql8Timers()
	var rows [][]any
	for n := range 450 {
		if c := counts[n]; c > 0 {
			rows = append(rows, []any{schema, digest, text, n, timers[n], timers[n+1], c})
		}
	}
	return rows
}

// fakeRows replays fixture rows through the rowSource interface.
type fakeRows struct {
	rows [][]any
	i    int
}

func (f *fakeRows) Next() bool   { f.i++; return f.i <= len(f.rows) }
func (f *fakeRows) Err() error   { return nil }
func (f *fakeRows) Close() error { return nil }
func (f *fakeRows) Scan(dest ...any) error {
	row := f.rows[f.i-1]
	if len(dest) != len(row) {
		return fmt.Errorf("scan of %d columns into %d", len(row), len(dest))
	}
	for i, v := range row {
		switch d := dest[i].(type) {
		case *int:
			*d = v.(int)
		case *uint64:
			*d = v.(uint64)
		case *sql.NullString:
			*d = sql.NullString{}
			if v != nil {
				*d = sql.NullString{String: v.(string), Valid: true}
			}
		default:
			return fmt.Errorf("column %d: cannot scan into %T", i, dest[i])
		}
	}
	return nil
}

// fixtureServer answers the poller's two queries with one poll's rows,
// checking the SQL text is what the live path sends.
type fixtureServer struct {
	t       *testing.T
	global  [][]any
	digests [][]any
}

func (f *fixtureServer) query(_ context.Context, q string, args ...any) (rowSource, error) {
	switch q {
	case fmt.Sprintf(globalHistogramSQL, "performance_schema"):
		return &fakeRows{rows: f.global}, nil
	case fmt.Sprintf(digestHistogramSQL, "performance_schema", "performance_schema"):
		return &fakeRows{rows: f.digests}, nil
	}
	f.t.Fatalf("unexpected query %q", q)
	return nil, nil
}

func TestHistogramPollerSynthetic(t *testing.T) {
	const (
		sel = "SELECT `pad` FROM `big` WHERE `id` = ?"
		upd = "UPDATE `big` SET `pad` = ? WHERE `id` = ?"
	)
	selName := "statement: " + sel + " (histogram)"
	updName := "statement: " + upd + " (histogram)"
	polls := []fixtureServer{
		{ // baseline: counts since server start
			global: globalRows(map[int]uint64{0: 5, 42: 100, 449: 1}),
			digests: append(digestRows("app", "aa11", sel, map[int]uint64{42: 90}),
				digestRows("app", "bb22", upd, map[int]uint64{0: 5, 42: 10, 449: 1})...),
		},
		{ // +3 in bucket 0, +7 in 42, +2 in 100; sel in two schemas
			global: globalRows(map[int]uint64{0: 8, 42: 107, 100: 2, 449: 1}),
			digests: append(append(digestRows("app", "aa11", sel, map[int]uint64{42: 95}),
				digestRows("app", "bb22", upd, map[int]uint64{0: 8, 42: 10, 449: 1})...),
				append(digestRows("test", "aa11", sel, map[int]uint64{42: 2, 100: 2}),
					digestRows(nil, nil, nil, map[int]uint64{})...)...),
		},
		{ // TRUNCATE of both tables, then 4 statements: counts went back
			global:  globalRows(map[int]uint64{42: 4}),
			digests: digestRows("app", "aa11", sel, map[int]uint64{42: 4}),
		},
		{ // +1 in the open top bucket, +1 in 43
			global:  globalRows(map[int]uint64{42: 4, 43: 1, 449: 1}),
			digests: digestRows("app", "aa11", sel, map[int]uint64{42: 4, 43: 1, 449: 1}),
		},
	}
	p := newHistPoller("performance_schema")
	ctx := context.Background()
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	var got [][]stream.SeriesHist
	var resets []bool
	for i := range polls {
		polls[i].t = t
		series, reset, err := p.poll(ctx, polls[i].query, now.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatalf("poll %d: %v", i, err)
		}
		got, resets = append(got, series), append(resets, reset)
	}
	if len(got[0]) != 0 || resets[0] {
		t.Errorf("baseline poll: %d series, reset %v; want none", len(got[0]), resets[0])
	}
	if !resets[2] || len(got[2]) != 0 || resets[1] || resets[3] {
		t.Errorf("resets %v, series after TRUNCATE %d: want only poll 2 reset, without series", resets, len(got[2]))
	}

	// Poll 1: the global delta, edges as the server's.
	byName := map[string]stream.SeriesHist{}
	for _, s := range got[1] {
		byName[s.Key.Event] = s
	}
	g := byName["statements (histogram)"].Hist
	if g == nil {
		t.Fatalf("poll 1 series %v: no global histogram", names(got[1]))
	}
	if len(g.Bounds) != 450 || g.Bounds[0] != 10 || g.Bounds[41] != 66.069344 || g.Bounds[42] != 69.183097 ||
		!math.IsInf(g.Bounds[449], 1) || g.Bounds[448] != float64(mysql8Timers()[449])/1e6 || !g.TopOpen {
		t.Errorf("edges: %d, first %v, bucket 42 [%v, %v), last two %v %v, open top %v",
			len(g.Bounds), g.Bounds[0], g.Bounds[41], g.Bounds[42], g.Bounds[448], g.Bounds[449], g.TopOpen)
	}
	if g.ZeroCount != 3 || g.Counts[41] != 7 || g.Counts[99] != 2 || g.Count() != 12 || g.Counts[448] != 0 {
		t.Errorf("global delta: zero %v, bucket 42 %v, bucket 100 %v, total %v", g.ZeroCount, g.Counts[41], g.Counts[99], g.Count())
	}
	// Digests: sel in two schemas merged (5 + 4), upd +3 in bucket 0; the
	// digest without text or schema has no counts and no series.
	if s := byName[selName].Hist; s == nil || s.Count() != 9 || s.Counts[41] != 7 || s.Counts[99] != 2 {
		t.Errorf("%s: %v", selName, s)
	}
	if u := byName[updName].Hist; u == nil || u.Count() != 3 || u.ZeroCount != 3 {
		t.Errorf("%s: %v", updName, u)
	}
	if len(got[1]) != 3 || got[1][1].Key.Event != selName || got[1][2].Key.Event != updName {
		t.Errorf("poll 1 series %v: want global, then digests by count", names(got[1]))
	}
	// Poll 3: deltas against the post-TRUNCATE baseline, the open top.
	for _, s := range got[3] {
		if s.Hist.Count() != 2 || s.Hist.Counts[42] != 1 || s.Hist.Counts[448] != 1 {
			t.Errorf("poll 3 %s: %v events, bucket 43 %v, top %v", s.Key.Event, s.Hist.Count(), s.Hist.Counts[42], s.Hist.Counts[448])
		}
		if err := s.Hist.Validate(); err != nil {
			t.Errorf("poll 3 %s: %v", s.Key.Event, err)
		}
	}
	if len(got[3]) != 2 {
		t.Errorf("poll 3 series %v", names(got[3]))
	}
}

// TestHistogramTopDigests: with more digests than the cap, the busiest
// ones in the interval (not since server start) are kept. SYNTHETIC.
func TestHistogramTopDigests(t *testing.T) {
	var base, next [][]any
	for d := range 30 {
		text := fmt.Sprintf("SELECT %d", d)
		// Since start, digest d had 1000−d statements; in the interval d+1.
		base = append(base, digestRows("app", fmt.Sprint(d), text, map[int]uint64{50: uint64(1000 - d)})...)
		next = append(next, digestRows("app", fmt.Sprint(d), text, map[int]uint64{50: uint64(1000 - d + d + 1)})...)
	}
	p := newHistPoller("performance_schema")
	for i, rows := range [][][]any{base, next} {
		f := fixtureServer{t: t, global: globalRows(nil), digests: rows}
		series, _, err := p.poll(context.Background(), f.query, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue
		}
		if len(series) != maxHistogramDigests {
			t.Fatalf("%d series, want %d: %v", len(series), maxHistogramDigests, names(series))
		}
		for j, s := range series {
			d := 29 - j
			if want := fmt.Sprintf("statement: SELECT %d (histogram)", d); s.Key.Event != want || s.Hist.Count() != float64(d+1) {
				t.Errorf("series %d: %s with %v, want %s with %d", j, s.Key.Event, s.Hist.Count(), want, d+1)
			}
		}
	}
}

// TestHistogramLayoutErrors: rows that are not a histogram are an error
// (counted by the sampler as a failed poll), never a panic. SYNTHETIC.
func TestHistogramLayoutErrors(t *testing.T) {
	for name, rows := range map[string][]bucketRow{
		"empty":      nil,
		"gap":        {{0, 0, 10, 0}, {1, 11, 20, 0}},
		"not from 0": {{0, 5, 10, 0}, {1, 10, 20, 0}},
		"numbering":  {{0, 0, 10, 0}, {2, 10, 20, 0}},
		"backwards":  {{0, 0, 10, 0}, {1, 10, 10, 0}},
	} {
		if _, err := layoutFromRows(rows); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	l, err := layoutFromRows([]bucketRow{{0, 0, 10, 0}, {1, 10, 20, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.add(l.newHist(), bucketRow{number: 1, low: 11}); err == nil || !strings.Contains(err.Error(), "layout") {
		t.Errorf("digest row off the layout: %v", err)
	}
	if err := l.add(l.newHist(), bucketRow{number: 7}); err == nil {
		t.Errorf("bucket number out of range: no error")
	}
}

// TestLiveMySQL8Histograms would run the poller against a real MySQL 8.
func TestLiveMySQL8Histograms(t *testing.T) {
	testenv.SkipAlways(t, "needs a MySQL 8.0.19+ server (events_statements_histogram_global); none can be installed here: "+
		"TestHistogramPollerSynthetic replays synthetic rows through the same poller, and TestLiveMariaDB runs its SQL on copies of the tables")
}

func names(series []stream.SeriesHist) []string {
	var out []string
	for _, s := range series {
		out = append(out, s.Key.Event)
	}
	return out
}
