package mysql

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

func TestSummarySinceTakesEachInstrumentAlone(t *testing.T) {
	prev := summary{"wait/io/file/innodb/innodb_data_file": {100, 1e9}, "wait/io/table/sql/handler": {5000, 2e9}, "wait/io/file/sql/FRM": {3, 1e6}}
	cur := summary{"wait/io/file/innodb/innodb_data_file": {150, 2e9}, "wait/io/table/sql/handler": {200, 1e8}}
	delta, back := cur.since(prev)
	if got := delta["wait/io/file/innodb/innodb_data_file"]; got != (counts{50, 1e9}) {
		t.Errorf("data file delta %v, want {50 1e9}", got)
	}
	if _, ok := delta["wait/io/table/sql/handler"]; ok || !back["wait/io/table/sql/handler"] || !back["wait/io/file/sql/FRM"] {
		t.Errorf("delta %v back %v: table I/O went back and FRM went away, only they are out", delta, back)
	}
}

func TestCountWindowLeavesTableCountsOutAroundDrops(t *testing.T) {
	waits0 := summary{"wait/io/file/innodb/innodb_data_file": {100, 1e9}, "wait/io/table/sql/handler": {10, 1e6}}
	waits1 := summary{"wait/io/file/innodb/innodb_data_file": {110, 2e9}, "wait/io/table/sql/handler": {40, 2e6}}
	stmts0 := summary{"statement/sql/insert": {5, 1e6}}
	stmts1 := summary{"statement/sql/insert": {9, 2e6}, "statement/sql/drop_db": {1, 1e6}}
	for _, tc := range []struct {
		name                   string
		stmts                  summary
		dropping, droppedAfter bool
		want                   bool // table counts usable
	}{
		{"quiet", stmts0, false, false, true},
		{"drop ended", stmts1, false, false, false},
		{"drop running", stmts0, true, false, false},
		{"window after a drop", stmts0, false, true, false},
	} {
		wc := countWindow(waits1, waits0, tc.stmts, stmts0, tc.dropping, tc.droppedAfter)
		if got := wc.usable("wait/io/table/sql/handler"); got != tc.want {
			t.Errorf("%s: table I/O usable %v, want %v", tc.name, got, tc.want)
		}
		if !wc.usable("wait/io/file/innodb/innodb_data_file") {
			t.Errorf("%s: the data file counts were left out", tc.name)
		}
	}
}

// answerOf polls a ring with the keys of events first..last.
func answerOf(r *ring, first, last uint64) bool {
	a := r.begin()
	for e := first; e <= last; e++ {
		r.row(&a, eventKey{1, e}, sql.Null[uint64]{V: e * 1e9, Valid: true}, &r.events)
	}
	return r.end(a)
}

func TestRingOverrunNeedsAFullRingOfNewRows(t *testing.T) {
	r := ring{size: 4}
	if answerOf(&r, 1, 4) {
		t.Errorf("the baseline is no overrun")
	}
	if answerOf(&r, 3, 6) {
		t.Errorf("rows 3 and 4 were in the last answer: no overrun")
	}
	if !answerOf(&r, 9, 12) {
		t.Errorf("a full ring of new rows: overrun (7 and 8 lost)")
	}
	if answerOf(&r, 13, 14) {
		t.Errorf("a ring not full: no overrun")
	}
}

func TestIdleWaitsHaveTheirOwnCut(t *testing.T) {
	var r ring
	a := r.begin()
	r.row(&a, eventKey{1, 1}, sql.Null[uint64]{V: 900e12, Valid: true}, &r.events)
	r.row(&a, eventKey{1, 2}, sql.Null[uint64]{V: 300e12, Valid: true}, &r.idle)
	r.end(a)
	if r.events.cut() != 900e12-slackPS || r.idle.cut() != 300e12-slackPS {
		t.Errorf("cuts %d and %d: each timer keeps its own", r.events.cut(), r.idle.cut())
	}
}

func TestNextDueKeepsTheGrid(t *testing.T) {
	t0 := time.Unix(0, 0)
	due := t0.Add(500 * time.Millisecond)
	if got := nextDue(due, due.Add(40*time.Millisecond), 500*time.Millisecond, false); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("a window closed 40 ms late: next due %v, want 1 s", got.Sub(t0))
	}
	if got := nextDue(due, t0.Add(1700*time.Millisecond), 500*time.Millisecond, false); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("closed at 1.7 s after a stall: next due %v, want 1 s (the grid holds)", got.Sub(t0))
	}
	if got := nextDue(due, t0.Add(1700*time.Millisecond), 500*time.Millisecond, true); !got.Equal(t0.Add(2 * time.Second)) {
		t.Errorf("a gap closed at 1.7 s: next due %v, want 2 s", got.Sub(t0))
	}
}

func TestCaptureComparesRowsWithRowsAndAdvisesTheCause(t *testing.T) {
	c := newCaptureStats()
	c.rings[0] = ringTally{table: "events_waits_history_long", size: 1000, sizeVariable: waitsRingVariable, polls: 100, rows: 900}
	// One scan event fetched 4000 rows; the server counted the rows.
	seen := map[string]seenCount{"wait/io/table/sql/handler": {units: 4000, events: 1}, "wait/io/file/innodb/innodb_data_file": {units: 99, events: 99}}
	wc := countWindow(summary{"wait/io/table/sql/handler": {4000, 1e9}, "wait/io/file/innodb/innodb_data_file": {100, 1e9}}, summary{}, summary{}, summary{}, false, false)
	c.add(seen, nil, wc)
	c.maxBatch = 4000
	var st stream.SamplerStats
	c.fill(&st)
	if st.CaptureRatio == nil || *st.CaptureRatio < 0.99 {
		t.Fatalf("capture %v: 4099 of 4100, rows with rows", st.CaptureRatio)
	}
	all := strings.Join(st.Advice, "\n")
	if !strings.Contains(all, "counted in rows") || strings.Contains(all, "raise") {
		t.Errorf("advice:\n%s", all)
	}
	c.rings[0].overruns, c.rings[0].idle = 3, 400
	st = stream.SamplerStats{}
	c.fill(&st)
	if all := strings.Join(st.Advice, "\n"); !strings.Contains(all, "overran in 3 of 100 polls") || !strings.Contains(all, "idle waits were 44 %") {
		t.Errorf("advice after overruns:\n%s", all)
	}
}

// The edge is what the closing polls found at every end of the
// comparison: the last window compared, each one followed by a window
// whose counts were left out, and each one before a gap.
func TestCaptureEdgeIsTheClosingPollsAtTheComparisonsEnds(t *testing.T) {
	const table, file = "wait/io/table/sql/handler", "wait/io/file/innodb/innodb_data_file"
	c := newCaptureStats()
	window := func(seen, edge int64, dropping bool) {
		t.Helper()
		s := map[string]seenCount{table: {units: seen, events: 1}, file: {units: seen, events: seen}}
		e := map[string]seenCount{table: {units: edge, events: 1}, file: {units: edge, events: edge}}
		c.add(s, e, countWindow(summary{table: {uint64(seen), 1}, file: {uint64(seen), 1}}, summary{}, summary{}, summary{}, dropping, false))
	}
	edges := func() (tableIO, waits int64) {
		ti, _ := c.class(classTableIO)
		w, _ := c.class(classWaits)
		return ti.edge(), w.edge()
	}
	window(100, 7, false)
	window(100, 5, false) // 7 cancels out: counted in this window
	if ti, w := edges(); ti != 5 || w != 5 {
		t.Errorf("after two compared windows: edges %d, %d, want 5 (the last closing poll)", ti, w)
	}
	window(100, 3, true) // table counts left out: their comparison ended at 5
	if ti, w := edges(); ti != 5 || w != 3 {
		t.Errorf("after a window leaving table I/O out: edges %d, %d, want 5, 3", ti, w)
	}
	window(100, 2, false)
	c.gap()
	window(100, 4, false)
	if ti, w := edges(); ti != 5+2+4 || w != 2+4 {
		t.Errorf("after a gap: edges %d, %d, want 11, 6", ti, w)
	}
}
