package awr

import (
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// These tests read the SYNTHETIC fixtures of testdata/ (see
// testdata/PROVENANCE.md): no real AWR export can be made here. Every
// expected number below was worked out by hand from the fixture rows.

const (
	dfsr = "db file sequential read"
	lfs  = "log file sync"
)

var utc = source.Options{Location: time.UTC}

// TestAWR19cRAC reads the SQL*Plus `set markup csv on` output of
// sql/awr_event_histogram.sql on a two-instance 19c RAC: sub-millisecond
// buckets down to .000976563 (2^-10 ms), the 2^54 ms "infinite" bucket,
// instance 1's snapshot 203 missing, instance 2 restarted at 12:20, and four
// bad rows. A regular file is read in batch, a pipe streamed: same result.
func TestAWR19cRAC(t *testing.T) {
	wantWindows := []string{
		"awr_19c_rac.csv@1 2024-03-15 10:00:01.234000+1h0m0.883s",
		"awr_19c_rac.csv@2 2024-03-15 10:00:02.002000+59m59.553s",
		"awr_19c_rac.csv@2 2024-03-15 11:00:01.555000+1h0m0.865s",
		"awr_19c_rac.csv@1 2024-03-15 11:00:02.117000+59m59.784s",
		// snapshot 203 of instance 1 is missing: the delta 202 → 204 covers both hours
		"awr_19c_rac.csv@1 2024-03-15 12:00:01.901000+2h0m0.444s",
		// instance 2 was down (or unobserved) from snapshot 202 to its restart
		"awr_19c_rac.csv@2 2024-03-15 12:00:02.420000+19m57.58s gap",
		// its counts at 13:00:03 were all made since the restart at 12:20:00
		"awr_19c_rac.csv@2 2024-03-15 12:20:00.000000+40m3.003s",
		"awr_19c_rac.csv@2 2024-03-15 13:00:03.003000+59m58.007s",
	}
	// Deltas per interval (in wantWindows order, gap skipped) as
	// "lower-upper:count"; 2^-10 ms is the zero bucket of db file sequential
	// read, .25 ms that of log file sync (their smallest bounds).
	wantDFSR := [][]string{
		{"0-0.0009765625:2", "0.0625-0.125:30", "0.125-0.25:60", "0.25-0.5:100", "0.5-1:600", "1-2:300", "2-4:100", "4-8:5"},
		{"0-0.0009765625:1", "0.0625-0.125:10", "0.125-0.25:30", "0.25-0.5:100", "0.5-1:400", "1-2:200", "2-4:60", "4-8:6"},
		{"0.0625-0.125:1", "0.125-0.25:10", "0.25-0.5:50", "0.5-1:200", "1-2:100", "2-4:40", "4-8:4", "8-16:1"},
		// one wait in the infinite bucket: read as [2^22, 2^23) ms and flagged
		{"0.0625-0.125:20", "0.125-0.25:40", "0.25-0.5:150", "0.5-1:400", "1-2:200", "2-4:50", "4-8:5", "8-16:1", "4.194304e+06-8.388608e+06:1 capped"},
		{"0-0.0009765625:3", "0.0625-0.125:50", "0.125-0.25:100", "0.25-0.5:250", "0.5-1:1000", "1-2:500", "2-4:150", "4-8:20"},
		nil,
		{"0-0.0009765625:1", "0.0625-0.125:4", "0.125-0.25:20", "0.25-0.5:50", "0.5-1:300", "1-2:150", "2-4:30", "4-8:2"},
		{"0-0.0009765625:1", "0.0625-0.125:5", "0.125-0.25:25", "0.25-0.5:60", "0.5-1:350", "1-2:180", "2-4:40", "4-8:3", "8-16:1"},
	}
	wantLFS := [][]string{
		{"0-0.25:10", "0.25-0.5:40", "0.5-1:300", "1-2:100", "2-4:30", "4-8:2"},
		{"0-0.25:5", "0.25-0.5:20", "0.5-1:100", "1-2:50", "2-4:10", "4-8:1"},
		{"0-0.25:1", "0.25-0.5:10", "0.5-1:60", "1-2:20", "2-4:2"},
		// the 2 ms row of snapshot 202 is malformed: it keeps 201's count, so
		// its 300 new waits show in the next interval
		{"0-0.25:1", "0.25-0.5:10", "0.5-1:100", "2-4:10"},
		{"0-0.25:9", "0.25-0.5:50", "0.5-1:400", "1-2:300", "2-4:30", "4-8:3"},
		nil,
		{"0-0.25:2", "0.25-0.5:15", "0.5-1:80", "1-2:30", "2-4:3"},
		{"0-0.25:2", "0.25-0.5:15", "0.5-1:90", "1-2:40", "2-4:6", "4-8:1"},
	}
	wantMalformed := []string{
		"49: 5 fields, but the heading at line 1 has 10 columns",
		`57: duplicate row for bucket 4 of "db file sequential read" in the snapshot at 2024-03-15 11:00:01 (first at line 56); kept the first`,
		`79: WAIT_COUNT "12x4" is not a whole number of waits`,
		"139: wait time bound 3 is not a power of two (Oracle buckets are < 1, < 2, < 4, ...)",
	}
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			res := runFile(t, "awr_19c_rac.csv", m, utc)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			ivs := sorted(res.Intervals)
			equalLists(t, "windows", windows(ivs), wantWindows)
			if len(ivs) != len(wantWindows) {
				t.FailNow()
			}
			for i, iv := range ivs {
				equalLists(t, windowText(iv)+" "+dfsr, bucketCounts(series(iv, dfsr)), wantDFSR[i])
				equalLists(t, windowText(iv)+" "+lfs, bucketCounts(series(iv, lfs)), wantLFS[i])
				for _, s := range iv.Series {
					if inst := strings.TrimPrefix(iv.Source, "awr_19c_rac.csv@"); s.Key.Instance != inst || s.Key.Source != "" {
						t.Errorf("%s: series key %+v, want instance %s", windowText(iv), s.Key, inst)
					}
				}
			}
			slices.Sort(wantMalformed)
			got := res.Malformed()
			slices.Sort(got)
			equalLists(t, "malformed", got, wantMalformed)
			if !strings.Contains(res.Log.String(), `instance "2" restarted at 2024-03-15 12:20:00 (STARTUP_TIME changed`) {
				t.Errorf("no restart warning in:\n%s", res.Log)
			}
		})
	}
}

// TestAWRSums checks estimated sums against the midpoint rule worked out
// independently: N/2 per wait in the lowest bucket [0, N), 0.75·N in
// [N/2, N), 1.5·2^22 ms for the infinite bucket.
func TestAWRSums(t *testing.T) {
	res := runFile(t, "awr_19c_rac.csv", batch, utc)
	ivs := sorted(res.Intervals)
	const z = 0.0009765625
	cases := []struct {
		iv    int
		event string
		rows  upperBoundRows
		top   float64 // waits in the infinite bucket
	}{
		{0, dfsr, upperBoundRows{{z, 2}, {.125, 30}, {.25, 60}, {.5, 100}, {1, 600}, {2, 300}, {4, 100}, {8, 5}}, 0},
		{3, dfsr, upperBoundRows{{.125, 20}, {.25, 40}, {.5, 150}, {1, 400}, {2, 200}, {4, 50}, {8, 5}, {16, 1}}, 1},
		{0, lfs, upperBoundRows{{.25, 10}, {.5, 40}, {1, 300}, {2, 100}, {4, 30}, {8, 2}}, 0},
	}
	for _, c := range cases {
		h := series(ivs[c.iv], c.event)
		zero := z
		if c.event == lfs {
			zero = .25
		}
		want := estimatedSum(c.rows, zero) + c.top*1.5*(1<<22)
		if h.Sum != want || h.SumExact {
			t.Errorf("%s %s: sum %v (exact %v), want estimate %v", windowText(ivs[c.iv]), c.event, h.Sum, h.SumExact, want)
		}
	}
	if got := series(ivs[0], dfsr).Sum; got != 1281.5634765625 {
		t.Errorf("first interval's sum %v, want 1281.5634765625 (by hand)", got)
	}
}

// TestAWRTotalsIndependent compares the events latscope emits per instance
// and event with a computation straight from the CSV (encoding/csv): per
// instance lifetime (one STARTUP_TIME) the last snapshot's counts minus the
// first's, plus, after a restart, the first snapshot's own counts (waits
// since startup). The fixture's first and last snapshot of each lifetime
// hold no bad row.
func TestAWRTotalsIndependent(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "awr_19c_rac.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	type snapKey struct{ inst, event, startup, end string }
	sums := map[snapKey]float64{}
	seen := map[snapKey]map[string]bool{}
	for _, r := range recs[1:] {
		if len(r) != 10 {
			continue
		}
		k := snapKey{r[2], r[7], r[3], r[5]}
		n, err := strconv.ParseFloat(r[9], 64)
		if err != nil || r[8] == "3" || seen[k][r[8]] {
			continue // the bad rows, and a duplicate's second row
		}
		if seen[k] == nil {
			seen[k] = map[string]bool{}
		}
		seen[k][r[8]] = true
		sums[k] += n
	}
	want := map[[2]string]float64{}
	type life struct{ inst, event, startup string }
	ends := map[life][]string{}
	for k := range sums {
		l := life{k.inst, k.event, k.startup}
		ends[l] = append(ends[l], k.end)
	}
	for l, es := range ends {
		slices.Sort(es)
		first, last := sums[snapKey{l.inst, l.event, l.startup, es[0]}], sums[snapKey{l.inst, l.event, l.startup, es[len(es)-1]}]
		want[[2]string{l.inst, l.event}] += last - first
		if l.startup == "2024-03-15 12:20:00.000" {
			want[[2]string{l.inst, l.event}] += first
		}
	}
	if len(want) != 4 {
		t.Fatalf("independent computation found %d series, want 4", len(want))
	}
	res := runFile(t, "awr_19c_rac.csv", batch, utc)
	for k, w := range want {
		if got := total(res.Intervals, k[0], k[1]); got != w {
			t.Errorf("instance %s %s: %v events, independent computation %v", k[0], k[1], got, w)
		}
	}
	// and by hand: 1197+867+2073, 482+121+792, 807+406+557+665, 186+93+130+154
	for _, c := range []struct {
		inst, event string
		n           float64
	}{{"1", dfsr, 4137}, {"1", lfs, 1395}, {"2", dfsr, 2435}, {"2", lfs, 563}} {
		if got := total(res.Intervals, c.inst, c.event); got != c.n {
			t.Errorf("instance %s %s: %v events, want %v", c.inst, c.event, got, c.n)
		}
	}
}

// TestAWREventFilter keeps one event: every window is still there (an
// interval without the event had none of its waits).
func TestAWREventFilter(t *testing.T) {
	for _, m := range modes {
		opts := utc
		opts.Events = []string{lfs}
		res := runFile(t, "awr_19c_rac.csv", m, opts)
		if len(res.Intervals) != 8 {
			t.Fatalf("%s: %d intervals, want 8", m, len(res.Intervals))
		}
		for _, iv := range res.Intervals {
			for _, s := range iv.Series {
				if s.Key.Event != lfs {
					t.Errorf("%s: event %q passed the filter", m, s.Key.Event)
				}
			}
		}
		if a, b := total(res.Intervals, "1", ""), total(res.Intervals, "2", ""); a != 1395 || b != 563 {
			t.Errorf("%s: %v and %v log file sync waits, want 1395 and 563", m, a, b)
		}
		// the bad rows of the filtered event are not even parsed
		if got := res.Diag.Count("awr_19c_rac.csv"); got != 4-1 {
			t.Errorf("%s: %d malformed rows reported, want 3 (the duplicate db file sequential read row is skipped unread)", m, got)
		}
	}
	opts := utc
	opts.Events = []string{"gc cr grant 2-way"}
	res := runFile(t, "awr_19c_rac.csv", batch, opts)
	if total(res.Intervals, "1", "")+total(res.Intervals, "2", "") != 0 {
		t.Error("events passed a filter that matches none")
	}
	if !strings.Contains(res.Log.String(), `no rows match --event; the input has "db file sequential read", "log file sync"`) {
		t.Errorf("no hint about the events present in:\n%s", res.Log)
	}
}

// TestAWRSpool11gPageBreaks reads the fixed-width spool SQL*Plus 11.2 writes
// for sql/awr_event_histogram.sql without "set markup csv on", with the
// default pagesize 14 (a heading again every 11 rows) and feedback on.
func TestAWRSpool11gPageBreaks(t *testing.T) {
	want := []string{
		"awr_11g_pagesize14.lst@1 2012-11-05 08:00:29.671000+15m0.562s",
		"awr_11g_pagesize14.lst@1 2012-11-05 08:15:30.233000+15m0.787s",
		"awr_11g_pagesize14.lst@1 2012-11-05 08:30:31.020000+15m0.826s",
	}
	// 11g has no sub-millisecond buckets: the 1 ms bucket is [0, 1)
	wantBuckets := [][]string{
		{"0-1:40", "1-2:30", "2-4:5", "4-8:1"},
		{"0-1:20", "1-2:20", "2-4:10", "4-8:4", "8-16:1"},
		{"0-1:140", "1-2:70", "2-4:5", "4-8:1", "16-32:1"},
	}
	wantSums := []float64{40*.5 + 30*1.5 + 5*3 + 1*6, 20*.5 + 20*1.5 + 10*3 + 4*6 + 1*12, 140*.5 + 70*1.5 + 5*3 + 1*6 + 1*24}
	for _, m := range modes {
		res := runFile(t, "awr_11g_pagesize14.lst", m, utc)
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		equalLists(t, m.String()+" windows", windows(res.Intervals), want)
		equalLists(t, m.String()+" malformed", res.Malformed(), nil)
		for i, iv := range res.Intervals {
			h := series(iv, "log file parallel write")
			equalLists(t, windowText(iv), bucketCounts(h), wantBuckets[i])
			if h.Sum != wantSums[i] {
				t.Errorf("%s: sum %v, want %v", windowText(iv), h.Sum, wantSums[i])
			}
		}
	}
}

// TestPollMicroCSV reads four polls of sql/gv_event_histogram_micro_poll.sql
// (SQL*Plus 19c, CSV, the heading again before each poll) on two instances:
// SAMPLE_TIME carries +01:00, the 4294967295 µs catch-all bucket gets a
// wait, and instance 2 restarts at 10:00:24 (a DATE without offset, read in
// the sample time's zone).
func TestPollMicroCSV(t *testing.T) {
	want := []string{
		"gv_micro_poll.csv@1 2024-03-15 09:00:00.104211+10.013319s",
		"gv_micro_poll.csv@2 2024-03-15 09:00:00.104211+10.013319s",
		"gv_micro_poll.csv@1 2024-03-15 09:00:10.117530+9.992344s",
		"gv_micro_poll.csv@2 2024-03-15 09:00:10.117530+9.992344s",
		"gv_micro_poll.csv@1 2024-03-15 09:00:20.109874+10.011129s",
		"gv_micro_poll.csv@2 2024-03-15 09:00:20.109874+3.890126s gap",
		"gv_micro_poll.csv@2 2024-03-15 09:00:24.000000+6.121003s",
	}
	wantBuckets := [][]string{
		{"0-256:100", "256-512:400", "512-1024:100", "1024-2048:10"},
		{"0-256:90", "256-512:300", "512-1024:40", "1024-2048:3"},
		{"0-256:80", "256-512:300", "512-1024:150", "1024-2048:30", "2048-4096:5", "4096-8192:1", "4.294967296e+09-8.589934592e+09:1 capped"},
		{"0-256:110", "256-512:400", "512-1024:60", "1024-2048:7", "2048-4096:1"},
		{"0-256:80", "256-512:250", "512-1024:50", "1024-2048:10"},
		nil,
		{"0-256:40", "256-512:150", "512-1024:60", "1024-2048:9"},
	}
	for _, m := range modes {
		res := runFile(t, "gv_micro_poll.csv", m, source.Options{Location: time.UTC})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		ivs := sorted(res.Intervals)
		equalLists(t, m.String()+" windows", windows(ivs), want)
		if len(ivs) != len(want) {
			t.FailNow()
		}
		for i, iv := range ivs {
			h := series(iv, lfs)
			equalLists(t, windowText(iv), bucketCounts(h), wantBuckets[i])
			if h != nil && h.Unit.String() != "us" {
				t.Errorf("%s: unit %s, want us (WAIT_TIME_MICRO)", windowText(iv), h.Unit)
			}
		}
		if h := series(ivs[2], lfs); h.Sum != 80*128+300*384+150*768+30*1536+5*3072+1*6144+1.5*(1<<32) {
			t.Errorf("sum with the capped top bucket: %v", h.Sum)
		}
		equalLists(t, m.String()+" malformed", res.Malformed(), nil)
	}
}

// TestSQLDeveloperGermanExport reads a SQL Developer CSV export under a
// German NLS: semicolons, decimal commas (0,0009765625), lower-case quoted
// names in another order with extra columns, CRLF line ends, default
// DD.MM.RR HH24:MI:SSXFF timestamps.
func TestSQLDeveloperGermanExport(t *testing.T) {
	res := runFile(t, "awr_sqldeveloper_de.csv", batch, utc)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	equalLists(t, "windows", windows(res.Intervals), []string{
		"awr_sqldeveloper_de.csv@1 2024-03-15 10:00:01.234000+1h0m0.883s",
		"awr_sqldeveloper_de.csv@1 2024-03-15 11:00:02.117000+59m59.784s",
	})
	equalLists(t, "first", bucketCounts(series(res.Intervals[0], "direct path read")),
		[]string{"0-0.0009765625:2", "0.25-0.5:30", "0.5-1:20", "1-2:1", "4.194304e+06-8.388608e+06:1 capped"})
	equalLists(t, "second", bucketCounts(series(res.Intervals[1], "direct path read")),
		[]string{"0.25-0.5:40", "0.5-1:10", "1-2:4", "2-4:1"})
	equalLists(t, "malformed", res.Malformed(), nil)
}

// TestPollSpool11g reads three polls of the 11g variant of the poll script
// (GV$EVENT_HISTOGRAM, WAIT_TIME_MILLI, no CSV markup: a fixed-width spool
// whose heading is printed before each poll).
func TestPollSpool11g(t *testing.T) {
	for _, m := range modes {
		res := runFile(t, "gv_milli_poll_11g.lst", m, source.Options{})
		equalLists(t, m.String()+" windows", windows(res.Intervals), []string{
			"gv_milli_poll_11g.lst@1 2013-05-21 14:30:00.012345+3.003532s",
			"gv_milli_poll_11g.lst@1 2013-05-21 14:30:03.015877+3.004124s",
		})
		if len(res.Intervals) != 2 {
			t.FailNow()
		}
		equalLists(t, "first", bucketCounts(series(res.Intervals[0], dfsr)), []string{"0-1:15", "1-2:2"})
		equalLists(t, "second", bucketCounts(series(res.Intervals[1], dfsr)), []string{"0-1:14", "1-2:5", "2-4:1", "4-8:1"})
		if s := series(res.Intervals[1], dfsr).Sum; s != 14*.5+5*1.5+3+6 {
			t.Errorf("sum %v", s)
		}
		equalLists(t, "malformed", res.Malformed(), nil)
	}
}

// TestStreamEmitsEachPollOnItsHeading checks the live behaviour: reading the
// poll CSV from a pipe, a poll's intervals are emitted as soon as the next
// poll's heading arrives, while the pipe is still open.
func TestStreamEmitsEachPollOnItsHeading(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "gv_micro_poll.csv"))
	if err != nil {
		t.Fatal(err)
	}
	headings := 0
	cut := 0
	for _, line := range strings.SplitAfter(string(data), "\n") {
		cut += len(line)
		if strings.HasPrefix(line, `"SAMPLE_TIME"`) {
			if headings++; headings == 3 {
				break
			}
		}
	}
	pr, pw := io.Pipe()
	src, err := Open(source.Input{Name: "pipe", Reader: pr, Diag: input.NewDiagnostics(nil, 5)}, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan stream.Interval, 16)
	done := make(chan error, 1)
	go func() {
		done <- src.Run(context.Background(), func(iv stream.Interval) error { got <- iv; return nil })
	}()
	// polls 1 and 2, then poll 3's heading: poll 2 of both instances is due
	if _, err := pw.Write(data[:cut]); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		select {
		case iv := <-got:
			if n := series(iv, lfs).Count(); n != 610 && n != 433 {
				t.Errorf("interval of poll 2 with %v waits, want 610 or 433", n)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("poll 2 not emitted %d s after poll 3's heading", 10)
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("%d more intervals after poll 3's heading without rows, want 0", len(got))
	}
}
