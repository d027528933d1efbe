package postgres

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// SYNTHETIC pg_stat_statements snapshots: the delta, reset and
// deallocation rules cannot be provoked deterministically on a server.
func TestStatementTrackerDeltasResetsAndDeallocation(t *testing.T) {
	k := func(id int64) stmtKey { return stmtKey{userID: 10, dbID: 5, queryID: id, toplevel: true} }
	reset0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	var tr statementTracker
	if d, full := tr.update([]stmtRow{{k(1), 10, 5}, {k(2), 4, 40}}, &reset0); d != nil || full {
		t.Fatalf("baseline gave %v %v", d, full)
	}
	// 1 runs 5 more times (2.5 ms); 2 does not run; 3 is new (3 calls).
	d, full := tr.update([]stmtRow{{k(1), 15, 7.5}, {k(2), 4, 40}, {k(3), 3, 0.3}}, &reset0)
	want := []stmtDelta{{1, 5, 2.5}, {3, 3, 0.3}}
	if full || fmt.Sprint(d) != fmt.Sprint(want) {
		t.Fatalf("got %v %v, want %v", d, full, want)
	}
	// 2 was deallocated and re-created with 1 call; 3 vanished.
	d, _ = tr.update([]stmtRow{{k(1), 15, 7.5}, {k(2), 1, 2}}, &reset0)
	if want := []stmtDelta{{2, 1, 2}}; fmt.Sprint(d) != fmt.Sprint(want) {
		t.Fatalf("after dealloc got %v, want %v", d, want)
	}
	// Full reset (stats_reset moved): an entry that ran more since the
	// reset than before it still counts only its calls since the reset.
	reset1 := reset0.Add(time.Hour)
	d, full = tr.update([]stmtRow{{k(1), 20, 1}, {k(2), 1, 2}}, &reset1)
	if want := []stmtDelta{{1, 20, 1}, {2, 1, 2}}; !full || fmt.Sprint(d) != fmt.Sprint(want) {
		t.Fatalf("after reset got %v %v, want %v", d, full, want)
	}
	// Without pg_stat_statements_info (PostgreSQL 13 and older): a
	// counter going backwards alone marks the entry restarted.
	var old statementTracker
	old.update([]stmtRow{{k(1), 10, 5}}, nil)
	d, full = old.update([]stmtRow{{k(1), 2, 1}}, nil)
	if want := []stmtDelta{{1, 2, 1}}; full || fmt.Sprint(d) != fmt.Sprint(want) {
		t.Fatalf("backwards got %v %v, want %v", d, full, want)
	}
	old.forget()
	if d, _ := old.update([]stmtRow{{k(1), 9, 9}}, nil); d != nil {
		t.Fatalf("after forget got %v, want a new baseline", d)
	}
}

// SYNTHETIC deltas: the top-N cut, "(other statements)" and "all
// statements" totals.
func TestStatementMeansTopNOtherAndAll(t *testing.T) {
	var deltas []stmtDelta
	for i := int64(1); i <= 25; i++ {
		deltas = append(deltas, stmtDelta{queryID: i, calls: i, totalMs: float64(i) * 2})
	}
	deltas = append(deltas, stmtDelta{queryID: 100, calls: 1, totalMs: 1000}) // same text as 25
	name := func(id int64) string {
		if id == 100 {
			id = 25
		}
		return fmt.Sprintf("select %d", id)
	}
	means := statementMeans(deltas, name, 20)
	if len(means) != 22 {
		t.Fatalf("%d series, want 20 + other + all", len(means))
	}
	if m := means[0]; m.Key.Event != "statement mean: select 25" || m.Count != 26 || m.Sum != 1050 || m.Unit != hist.Millisecond {
		t.Errorf("top %+v", m)
	}
	other, all := means[20], means[21]
	// Statements 1..5 are the smallest by time: 15 calls, 30 ms.
	if other.Key.Event != OtherStatementsMean || other.Count != 15 || other.Sum != 30 {
		t.Errorf("other %+v", other)
	}
	var calls, ms float64
	for _, d := range deltas {
		calls += float64(d.calls)
		ms += d.totalMs
	}
	if all.Key.Event != AllStatementsMean || all.Count != calls || all.Sum != ms {
		t.Errorf("all %+v, want %v calls %v ms", all, calls, ms)
	}
	var sumCount float64
	for _, m := range means[:21] {
		sumCount += m.Count
		if err := m.Validate(); err != nil {
			t.Error(err)
		}
	}
	if sumCount != all.Count {
		t.Errorf("per-statement counts %v, all %v", sumCount, all.Count)
	}
	if m := statementMeans(nil, name, 20); len(m) != 1 || m[0].Key.Event != AllStatementsMean || m[0].Count != 0 {
		t.Errorf("quiet window %+v", m)
	}
	if n := statementName(7, "", false); n != "queryid 7" {
		t.Errorf("unknown text named %q", n)
	}
	if n := statementName(7, "SELECT  abalance FROM pgbench_accounts WHERE aid = $1", true); n != "SELECT abalance FROM pgbench_accounts WHERE aid = ?" {
		t.Errorf("named %q", n)
	}
}

// SYNTHETIC pg_stat_database rows.
func TestDatabaseTrackerBlockReadMean(t *testing.T) {
	var tr databaseTracker
	if m := tr.update([]dbRow{{"app", 100, 10}}); m != nil {
		t.Fatalf("baseline %v", m)
	}
	m := tr.update([]dbRow{{"app", 150, 12.5}})
	if len(m) != 1 || m[0].Key != (stream.Key{Event: BlockReadMean, Instance: "app"}) || m[0].Count != 50 || m[0].Sum != 2.5 {
		t.Fatalf("got %+v", m)
	}
	if got := m[0].Mean(); got != 50000 { // 2.5 ms / 50 = 50 µs
		t.Errorf("mean %v ns", got)
	}
	if m := tr.update([]dbRow{{"app", 3, 0.1}}); len(m) != 0 { // pg_stat_reset
		t.Errorf("after reset %+v", m)
	}
	if m := tr.update([]dbRow{{"app", 4, 0.3}}); len(m) != 1 || m[0].Count != 1 {
		t.Errorf("after the new baseline %+v", m)
	}
}

// pgStatIOFixture is a SYNTHETIC pg_stat_io snapshot pair with the
// columns of PostgreSQL 16 and 17 (backend_type, object, context, reads,
// read_time, writes, write_time, fsyncs, fsync_time; NULL where an
// operation does not apply, e.g. fsyncs in the bulkread context or reads
// of the checkpointer), written as the rows the server would return.
// PostgreSQL 15 here has no pg_stat_io.
type ioFix struct {
	bt, obj, ctx string
	reads        int64 // -1: NULL (and its time too)
	readMs       float64
	writes       int64
	writeMs      float64
	fsyncs       int64
	fsyncMs      float64
}

func ioRows(fix []ioFix) []ioRow {
	var out []ioRow
	for _, f := range fix {
		r := ioRow{backendType: f.bt, object: f.obj, context: f.ctx}
		set := func(n int64, ms float64) (*int64, *float64) {
			if n < 0 {
				return nil, nil
			}
			return &n, &ms
		}
		r.reads, r.readMs = set(f.reads, f.readMs)
		r.writes, r.writeMs = set(f.writes, f.writeMs)
		r.fsyncs, r.fsyncMs = set(f.fsyncs, f.fsyncMs)
		out = append(out, r)
	}
	return out
}

var ioBefore = []ioFix{
	{"client backend", "relation", "normal", 1000, 50, 10, 1, -1, 0},
	{"client backend", "relation", "bulkread", 200, 20, 0, 0, -1, 0},
	{"checkpointer", "relation", "normal", -1, 0, 300, 30, 5, 50},
}

var ioAfter = []ioFix{
	{"client backend", "relation", "normal", 1100, 55, 10, 1, -1, 0},
	{"client backend", "relation", "bulkread", 300, 25, 0, 0, -1, 0},
	{"checkpointer", "relation", "normal", -1, 0, 340, 34, 7, 70},
}

func TestIOTrackerGroupsPerBackendTypeAndOperation(t *testing.T) {
	var tr ioTracker
	if m := tr.update(ioRows(ioBefore)); m != nil {
		t.Fatalf("baseline %v", m)
	}
	got := fmt.Sprint(tr.update(ioRows(ioAfter)))
	want := fmt.Sprint([]stream.SeriesMean{
		{Key: stream.Key{Event: IOWriteMean, Instance: "checkpointer"}, Count: 40, Sum: 4, Unit: hist.Millisecond},
		{Key: stream.Key{Event: IOFsyncMean, Instance: "checkpointer"}, Count: 2, Sum: 20, Unit: hist.Millisecond},
		{Key: stream.Key{Event: IOReadMean, Instance: "client backend"}, Count: 200, Sum: 10, Unit: hist.Millisecond},
	})
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// pg_stat_reset_shared('io'): counters back to zero, no value.
	if m := tr.update(ioRows([]ioFix{{"client backend", "relation", "normal", 5, 1, 0, 0, -1, 0}})); len(m) != 0 {
		t.Errorf("after reset %+v", m)
	}
}

func TestUntilNextPoll(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct{ at, want time.Duration }{
		{0, 50 * time.Millisecond},
		{49 * time.Millisecond, time.Millisecond},
		{50 * time.Millisecond, time.Second},
		{700 * time.Millisecond, 350 * time.Millisecond},
	} {
		if got := untilNextPoll(base.Add(c.at), time.Second); got != c.want {
			t.Errorf("at +%s: %s, want %s", c.at, got, c.want)
		}
	}
	if got := statementsSQL(120000); !strings.Contains(got, "total_time") || !strings.Contains(got, ", true,") {
		t.Errorf("PG 12 SQL %s", got)
	}
	if got := statementsSQL(150000); !strings.Contains(got, "total_exec_time") || !strings.Contains(got, "toplevel") {
		t.Errorf("PG 15 SQL %s", got)
	}
}

// TestTailerFollowsAppendsRotationAndTruncation: only lines written after
// the start, partial lines held until complete, a rotated file read to its
// end then the new one from its start, a truncated file from its start.
func TestTailerFollowsAppendsRotationAndTruncation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pg.log")
	write := func(s string, flag int) {
		f, err := os.OpenFile(path, flag|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	write("old 1\nold 2\n", os.O_TRUNC)
	var got []string
	fn := func(n int, text string, tooLong bool) error {
		got = append(got, fmt.Sprintf("%d:%s", n, text))
		return nil
	}
	tl := &tailer{path: path}
	defer tl.close()
	poll := func() {
		if _, err := tl.poll(fn); err != nil {
			t.Fatal(err)
		}
	}
	poll()
	write("new 1\nnew", os.O_APPEND)
	poll()
	write(" 2\r\n", os.O_APPEND)
	poll()
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	write2 := func(p, s string) {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	write2(path+".1", "tail of old\n")
	write2(path, "first of new\n")
	poll()
	write("trunc\n", os.O_TRUNC)
	poll()
	poll()
	want := "[1:new 1 2:new 2 3:tail of old 1:first of new 1:trunc]"
	if fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	missing := &tailer{path: filepath.Join(dir, "absent.log")}
	if _, err := missing.poll(fn); err == nil {
		t.Error("no error for a missing file")
	}
}
