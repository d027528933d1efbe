package awr

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// Inline SYNTHETIC inputs for the paths the fixtures do not take, each in
// the documented layout of a CSV export.

// TestRestartByCountsGoingDown: without STARTUP_TIME a counter going down is
// the restart; the window is a gap and the snapshot the new baseline.
func TestRestartByCountsGoingDown(t *testing.T) {
	in := "SAMPLE_TIME,INST_ID,EVENT,WAIT_TIME_MILLI,WAIT_COUNT\n" +
		"2024-01-01 00:00:00,1,e,1,10\n2024-01-01 00:00:00,1,e,2,5\n" +
		"2024-01-01 00:01:00,1,e,1,12\n2024-01-01 00:01:00,1,e,2,6\n" +
		"2024-01-01 00:02:00,1,e,1,3\n2024-01-01 00:02:00,1,e,2,9\n" + // 1 ms went down: restart
		"2024-01-01 00:03:00,1,e,1,4\n2024-01-01 00:03:00,1,e,2,9\n"
	for _, m := range modes {
		res := runString(t, in, m, utc)
		equalLists(t, m.String(), windows(res.Intervals), []string{
			"synthetic.csv@1 2024-01-01 00:00:00.000000+1m0s",
			"synthetic.csv@1 2024-01-01 00:01:00.000000+1m0s gap",
			"synthetic.csv@1 2024-01-01 00:02:00.000000+1m0s",
		})
		if len(res.Intervals) != 3 {
			t.FailNow()
		}
		equalLists(t, "first", bucketCounts(series(res.Intervals[0], "e")), []string{"0-1:2", "1-2:1"})
		equalLists(t, "after", bucketCounts(series(res.Intervals[2], "e")), []string{"0-1:1"})
		if !strings.Contains(res.Log.String(), `instance "1" restarted between 2024-01-01 00:01:00 and 2024-01-01 00:02:00 (the counters of "e" went down)`) {
			t.Errorf("warning missing:\n%s", res.Log)
		}
	}
}

// TestCountsInterval: --counts interval takes each snapshot's counts as its
// window's events (deltas computed in SQL), the window from
// BEGIN_INTERVAL_TIME, else from the previous snapshot.
func TestCountsInterval(t *testing.T) {
	in := "END_INTERVAL_TIME,BEGIN_INTERVAL_TIME,INSTANCE_NUMBER,EVENT_NAME,WAIT_TIME_MILLI,WAIT_COUNT\n" +
		"2024-01-01 01:00:00,2024-01-01 00:00:00,1,e,1,10\n" +
		"2024-01-01 02:00:00,2024-01-01 01:00:00,1,e,1,3\n" +
		"2024-01-01 03:00:00,,1,e,1,7\n"
	opts := utc
	opts.Counts = source.CountsInterval
	res := runString(t, in, batch, opts)
	equalLists(t, "windows", windows(res.Intervals), []string{
		"synthetic.csv@1 2024-01-01 00:00:00.000000+1h0m0s",
		"synthetic.csv@1 2024-01-01 01:00:00.000000+1h0m0s",
		"synthetic.csv@1 2024-01-01 02:00:00.000000+1h0m0s",
	})
	for i, n := range []float64{10, 3, 7} {
		if got := series(res.Intervals[i], "e").Count(); got != n {
			t.Errorf("interval %d: %v waits, want %v", i, got, n)
		}
	}
	// without BEGIN_INTERVAL_TIME the first snapshot's window is unknown
	res = runString(t, "SAMPLE_TIME,EVENT,WAIT_TIME_MILLI,WAIT_COUNT\n2024-01-01 01:00:00,e,1,10\n2024-01-01 01:00:10,e,1,4\n", batch, opts)
	equalLists(t, "no begin", windows(res.Intervals), []string{"synthetic.csv 2024-01-01 01:00:00.000000+10s"})
	if !strings.Contains(res.Log.String(), "its window is unknown") {
		t.Errorf("no warning about the first snapshot:\n%s", res.Log)
	}
}

// TestNoTimeColumn: DBA_HIST_EVENT_HISTOGRAM alone has no times; the error
// names the line and the fix.
func TestNoTimeColumn(t *testing.T) {
	in := "SQL> select * from dba_hist_event_histogram;\n\n" +
		`"SNAP_ID","DBID","INSTANCE_NUMBER","EVENT_ID","EVENT_NAME","WAIT_CLASS_ID","WAIT_CLASS","WAIT_TIME_MILLI","WAIT_COUNT"` + "\n" +
		`200,1,1,2652584166,"db file sequential read",1740759767,"User I/O",1,10` + "\n"
	if v, awr := detect([]byte(in)); v != input.Yes || !awr {
		t.Errorf("detect: %v (awr %v), want Yes for the awr format, so that Run explains", v, awr)
	}
	res := runString(t, in, batch, utc)
	if !errors.Is(res.Err, errNoTimeColumn) || !strings.HasPrefix(res.Err.Error(), "synthetic.csv:3: ") {
		t.Errorf("err %v, want synthetic.csv:3: %v", res.Err, errNoTimeColumn)
	}
}

// TestSeveralDatabases: an AWR repository export holds two DBIDs with the
// same instance numbers; in batch every instance is labelled dbid:inst, in
// a stream the first database keeps plain numbers.
func TestSeveralDatabases(t *testing.T) {
	in := "DBID,INSTANCE_NUMBER,END_INTERVAL_TIME,EVENT_NAME,WAIT_TIME_MILLI,WAIT_COUNT\n" +
		"11,1,2024-01-01 01:00:00,e,1,1\n22,1,2024-01-01 01:00:00,e,1,1\n" +
		"11,1,2024-01-01 02:00:00,e,1,2\n22,1,2024-01-01 02:00:00,e,1,4\n"
	res := runString(t, in, batch, utc)
	equalLists(t, "batch", windows(res.Intervals), []string{
		"synthetic.csv@11:1 2024-01-01 01:00:00.000000+1h0m0s",
		"synthetic.csv@22:1 2024-01-01 01:00:00.000000+1h0m0s",
	})
	if got := total(res.Intervals, "22:1", "e"); got != 3 {
		t.Errorf("database 22: %v waits, want 3", got)
	}
	res = runString(t, in, streamed, utc)
	equalLists(t, "stream", windows(sorted(res.Intervals)), []string{
		"synthetic.csv@1 2024-01-01 01:00:00.000000+1h0m0s",
		"synthetic.csv@22:1 2024-01-01 01:00:00.000000+1h0m0s",
	})
}

// TestUnorderedRows: an export ORDER BY event_name, snap_id. A file is
// sorted; a stream reports the rows that come back in time.
func TestUnorderedRows(t *testing.T) {
	in := "END_INTERVAL_TIME,EVENT_NAME,WAIT_TIME_MILLI,WAIT_COUNT\n" +
		"2024-01-01 01:00:00,a,1,1\n2024-01-01 02:00:00,a,1,5\n" +
		"2024-01-01 01:00:00,b,1,1\n2024-01-01 02:00:00,b,1,2\n"
	res := runString(t, in, batch, utc)
	if a, b := total(res.Intervals, "", "a"), total(res.Intervals, "", "b"); a != 4 || b != 1 || len(res.Intervals) != 1 {
		t.Errorf("batch: %d intervals, a %v b %v, want 1, 4, 1", len(res.Intervals), a, b)
	}
	res = runString(t, in, streamed, utc)
	equalLists(t, "stream malformed", res.Malformed(), []string{
		"4: row of 2024-01-01 01:00:00 is older than the snapshot at 2024-01-01 02:00:00 already read: when streaming, " +
			"rows must come in time order (ORDER BY snap_id or sample time, as the queries in sql/ do)",
	})
	// b's 01:00 row was skipped, so b first shows at 02:00 and is counted
	// from zero, as an event whose first waits came in the interval
	if b := total(res.Intervals, "", "b"); b != 2 {
		t.Errorf("stream: b %v", b)
	}
}

// TestOracleDefaultTimestampsSpool: a spool of a user's own query with the
// default NLS_TIMESTAMP_FORMAT (DD-MON-RR HH.MI.SSXFF AM), SQL*Plus chatter
// around it and the SQL echoed, read in --tz.
func TestOracleDefaultTimestampsSpool(t *testing.T) {
	zurich := time.FixedZone("CET", 3600)
	in := `
SQL> select s.end_interval_time, h.event_name, h.wait_time_milli, h.wait_count
  2  from dba_hist_snapshot s join dba_hist_event_histogram h using (dbid, snap_id, instance_number)
  3  where h.event_name = 'log file sync' order by 1, 3;

END_INTERVAL_TIME                                                           EVENT_NAME                                                       WAIT_TIME_MILLI WAIT_COUNT
--------------------------------------------------------------------------- ---------------------------------------------------------------- --------------- ----------
15-MAR-24 11.59.59.123 PM                                                   log file sync                                                                  1         10
15-MAR-24 11.59.59.123 PM                                                   log file sync                                                                  2          3
16-MAR-24 12.14.59.500 AM                                                   log file sync                                                                  1         19
16-MAR-24 12.14.59.500 AM                                                   log file sync                                                                  2          4

Elapsed: 00:00:00.04
SQL> spool off
`
	opts := source.Options{Location: zurich}
	res := runString(t, in, batch, opts)
	equalLists(t, "windows", windows(res.Intervals), []string{"synthetic.csv 2024-03-15 22:59:59.123000+15m0.377s"})
	equalLists(t, "buckets", bucketCounts(series(res.Intervals[0], lfs)), []string{"0-1:9", "1-2:1"})
	equalLists(t, "malformed", res.Malformed(), nil)
}

// TestEmptyAndHeadingOnly: empty input, or a heading without rows, is not an
// error and yields nothing.
func TestEmptyAndHeadingOnly(t *testing.T) {
	for _, in := range []string{"", "\n\n", "SAMPLE_TIME,EVENT,WAIT_TIME_MICRO,WAIT_COUNT\n", "no rows selected\n"} {
		res := runString(t, in, streamed, utc)
		if res.Err != nil || len(res.Intervals) != 0 || len(res.Malformed()) != 0 {
			t.Errorf("%q: err %v, %d intervals, malformed %q", in, res.Err, len(res.Intervals), res.Malformed())
		}
	}
}

// TestIgnoredOptions: --unit and --bound lower do not apply (the column name
// gives the unit, Oracle bounds are upper bounds) and say so.
func TestIgnoredOptions(t *testing.T) {
	in := "SAMPLE_TIME,EVENT,WAIT_TIME_MICRO,WAIT_COUNT\n2024-01-01 00:00:00,e,8,1\n2024-01-01 00:00:01,e,8,2\n"
	res := runString(t, in, batch, source.Options{Location: time.UTC, Unit: hist.Millisecond, Bound: hist.LowerBound})
	log := res.Log.String()
	if !strings.Contains(log, "--unit ms ignored: the column WAIT_TIME_MICRO gives the unit (us)") ||
		!strings.Contains(log, "--bound lower ignored") {
		t.Errorf("warnings:\n%s", log)
	}
	equalLists(t, "buckets", bucketCounts(series(res.Intervals[0], "e")), []string{"0-8:1"})
}

// TestScientificCounts: SQL*Plus prints a count wider than numwidth as
// 1.2346E+10; it is read, with a warning about its rounding.
func TestScientificCounts(t *testing.T) {
	in := "SAMPLE_TIME,EVENT,WAIT_TIME_MILLI,WAIT_COUNT\n2024-01-01 00:00:00,e,1,1.2345E+10\n2024-01-01 00:00:01,e,1,1.2346E+10\n"
	res := runString(t, in, batch, utc)
	if n := total(res.Intervals, "", "e"); n != 1e6 {
		t.Errorf("%v waits", n)
	}
	if !strings.Contains(res.Log.String(), "scientific notation") {
		t.Errorf("no warning:\n%s", res.Log)
	}
}

// TestMissingRowsCarry: a bucket row or a whole event missing from one
// snapshot keeps its count: nothing is lost, nothing looks like a restart.
func TestMissingRowsCarry(t *testing.T) {
	in := "SAMPLE_TIME,EVENT,WAIT_TIME_MILLI,WAIT_COUNT\n" +
		"2024-01-01 00:00:00,a,1,5\n2024-01-01 00:00:00,a,2,5\n2024-01-01 00:00:00,b,1,1\n" +
		"2024-01-01 00:00:10,a,1,6\n" +
		"2024-01-01 00:00:20,a,1,7\n2024-01-01 00:00:20,a,2,8\n2024-01-01 00:00:20,b,1,4\n"
	res := runString(t, in, batch, utc)
	if len(res.Intervals) != 2 {
		t.Fatalf("%d intervals", len(res.Intervals))
	}
	equalLists(t, "a second", bucketCounts(series(res.Intervals[1], "a")), []string{"0-1:1", "1-2:3"})
	equalLists(t, "b second", bucketCounts(series(res.Intervals[1], "b")), []string{"0-1:3"})
}

func TestClassifyBound(t *testing.T) {
	cases := []struct {
		v    float64
		want string // "top", "2^k" or "error"
	}{
		{0.000976563, "2^-10"}, {0.0009765625, "2^-10"}, {0.001953125, "2^-9"}, {0.5, "2^-1"}, {1, "2^0"},
		{4194304, "2^22"}, {4294967296, "2^32"}, {4294967295, "top"}, {2147483647, "top"}, {18014398509481984, "top"},
		{1.8014e16, "top"}, {1 << 40, "top"}, {3, "error"}, {0.3, "error"}, {0, "error"}, {-1, "error"},
		{math.NaN(), "error"}, {math.Inf(1), "error"}, {1e-12, "error"}, {1023, "error"},
	}
	for _, c := range cases {
		b, err := classifyBound(c.v)
		got := "error"
		switch {
		case err != nil:
		case b.top:
			got = "top"
		default:
			got = "2^" + itoa(b.pow)
		}
		if got != c.want {
			t.Errorf("classifyBound(%g) = %s (err %v), want %s", c.v, got, err, c.want)
		}
	}
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + itoa(i%10)
}

func TestParseNumber(t *testing.T) {
	ok := map[string]float64{".000976563": 0.000976563, "0,5": 0.5, " 12 ": 12, "1.8014E+16": 1.8014e16, "4294967295": 4294967295}
	for s, want := range ok {
		if got, err := parseNumber(s); err != nil || got != want {
			t.Errorf("parseNumber(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "abc", "NaN", "Inf", "0x10", "1,000.5", "1,2,3", "1_000", "1e999"} {
		if v, err := parseNumber(s); err == nil {
			t.Errorf("parseNumber(%q) = %v, want an error", s, v)
		}
	}
}

func TestSplitCSV(t *testing.T) {
	cases := []struct {
		line string
		sep  byte
		want []string
		err  error
	}{
		{`1,"a, b","c ""q"""`, ',', []string{"1", "a, b", `c "q"`}, nil},
		{`  12 ; "x " ;;`, ';', []string{"12", "x", "", ""}, nil},
		{`"open,1`, ',', nil, errUnterminatedQuote},
		{`"a"b,1`, ',', nil, errTextAfterQuote},
		{"", ',', []string{""}, nil},
	}
	for _, c := range cases {
		got, err := splitCSV(c.line, c.sep, nil)
		if !errors.Is(err, c.err) || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("splitCSV(%q) = %q, %v; want %q, %v", c.line, got, err, c.want, c.err)
		}
	}
}

func TestChatter(t *testing.T) {
	for _, s := range []string{"24 rows selected.", "1 row selected.", "no rows selected", "SQL> spool off",
		"PL/SQL procedure successfully completed.", "old   3:   and snap_id between &2 and &3", "new  12: x", "Elapsed: 00:00:00.01"} {
		if !isChatter(s) {
			t.Errorf("%q is not chatter", s)
		}
	}
	for _, s := range []string{"1,2,3", "oldish 3: x", "24 rows", `"2024-01-01",1`} {
		if isChatter(s) {
			t.Errorf("%q is chatter", s)
		}
	}
}
