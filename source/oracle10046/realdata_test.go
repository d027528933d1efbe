package oracle10046

import (
	"bytes"
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Every real trace parses without error or malformed report, on wall-clock
// time, and its per-event wait counts and ela sums are exactly what a grep
// of the raw file gives.
func TestEveryTraceMatchesGrepCounts(t *testing.T) {
	for _, rel := range allTraces(t) {
		t.Run(rel[strings.LastIndex(rel, "/")+1:], func(t *testing.T) {
			data := readShared(t, rel)
			res := run(t, rel, data, source.Options{Location: zurich(t)})
			if res.Err != nil {
				t.Fatalf("Run: %v", res.Err)
			}
			if n := res.Diag.Count(rel); n != 0 {
				t.Errorf("%d malformed reports on a real trace:\n%s", n, res.Log)
			}
			if w := res.Diag.Warnings(); len(w) != 0 {
				t.Errorf("warnings on a real trace: %q", w)
			}
			want := grepWaits(string(data))
			got := totals(res.Intervals)
			if len(got) != len(want) {
				t.Errorf("%d events, grep finds %d: got %v want %v", len(got), len(want), got, want)
			}
			lines := 0.0
			for ev, w := range want {
				if got[ev] != w {
					t.Errorf("%q: got %+v, grep %+v", ev, got[ev], w)
				}
				lines += w.count
			}
			if all := float64(bytes.Count(data, []byte("\nWAIT #"))); lines != all {
				t.Errorf("grep counts %g waits of named events, the file has %g WAIT lines", lines, all)
			}
			for _, iv := range res.Intervals {
				if iv.Relative || iv.Gap {
					t.Errorf("interval at %s: relative=%v gap=%v, want wall-clock observed time", iv.Start, iv.Relative, iv.Gap)
				}
			}
		})
	}
}

// Traces without WAIT lines, and empty input, give nothing and no error.
func TestTracesWithoutWaitsAndEmptyInput(t *testing.T) {
	for _, rel := range []string{dirPriitp2 + "malformed_stat.trc", dirPriitp2 + "parse_error.trc", dirPriitp2 + "stray_close.trc"} {
		res := run(t, rel, readShared(t, rel), source.Options{})
		if res.Err != nil || len(res.Intervals) != 0 || res.Diag.Count(rel) != 0 {
			t.Errorf("%s: err=%v intervals=%d malformed=%d (%s), want none", rel, res.Err, len(res.Intervals), res.Diag.Count(rel), res.Log)
		}
	}
	for _, in := range []string{"", "\n\n", "   \n"} {
		res := run(t, "empty", []byte(in), source.Options{})
		if res.Err != nil || len(res.Intervals) != 0 || res.Diag.Count("empty") != 0 {
			t.Errorf("%q: err=%v intervals=%d", in, res.Err, len(res.Intervals))
		}
	}
}

// Intervals start on the wall clock: offset-less stamps (11.1's, 19.x's
// without a time zone) are read in --tz, 12.2's and 23c's carry their
// offset, and --tz applies to offset-less ISO stamps too. The 11.1 rows are
// the only real traces with its "2008-02-29 07:43:09.123" stamps (shared
// test data only: they skip on a clone).
func TestWallClockStarts(t *testing.T) {
	cases := []struct {
		rel   string
		loc   *time.Location
		first string
	}{
		{fileDBM11106, zurich(t), "2008-02-29T07:43:09+01:00"},
		{fileDBM11106, time.FixedZone("CET", 3600), "2008-02-29T07:43:09+01:00"},
		{fileDBM11106, time.UTC, "2008-02-29T07:43:09Z"},
		{fileFree, time.FixedZone("X", -7*3600), "2023-04-17T20:30:27Z"},
		{fileFree01, nil, "2023-04-17T20:30:27Z"},
		{file9850, time.UTC, "2019-07-09T09:57:06-07:00"},
		{dirPriitp2 + "no_timezone.trc", time.FixedZone("X", -5*3600), "2023-05-19T05:28:00-05:00"},
		{dirPriitp2 + "no_timezone.trc", time.FixedZone("Y", 5*3600+1800), "2023-05-19T05:28:00+05:30"},
		{dirPriitp2 + "no_timezone.trc", time.FixedZone("Z", 3600), "2023-05-19T05:28:00+01:00"},
	}
	for _, c := range cases {
		zone := "no --tz"
		if c.loc != nil {
			zone = c.loc.String()
		}
		t.Run(path.Base(c.rel)+" in "+zone, func(t *testing.T) {
			res := run(t, c.rel, readShared(t, c.rel), source.Options{Location: c.loc})
			if res.Err != nil || len(res.Intervals) == 0 {
				t.Fatalf("err=%v, %d intervals", res.Err, len(res.Intervals))
			}
			if got := res.Intervals[0].Start.Format(time.RFC3339Nano); got != c.first {
				t.Errorf("first interval starts %s, want %s", got, c.first)
			}
			for _, iv := range res.Intervals {
				if iv.Start.UnixNano()%int64(3*time.Second) != 0 {
					t.Errorf("interval start %s is not on a 3 s boundary", iv.Start)
				}
			}
		})
	}
}

// A continuous trace gives contiguous intervals: each starts where the
// previous ended, and a quiet stretch is a single interval without series.
// The 19.x trace runs three statements: at tim 5793959272981 (the first
// wait, 106 µs after the stamp 05:28:00.350106+02:00 is tied to, at the
// PARSING line's tim 5793959272875), 5.37 s later, and 5122.3 s later
// (tim 5799081608376, i.e. 06:53:22.69) until its last wait at tim
// 5799082682378 (06:53:23.76): waits in the seconds from 05:28:00, 05:28:05,
// 06:53:22 and 06:53:23, and two quiet stretches between them.
func TestQuietStretchIsOneInterval(t *testing.T) {
	res := run(t, fileTwoStmts, readShared(t, fileTwoStmts), source.Options{Location: zurich(t), Interval: time.Second})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	ivs := res.Intervals
	if quiet := checkQuietStretches(t, ivs, time.Second); quiet != 2 {
		t.Errorf("%d quiet intervals, want the 2 between the three statements:\n%s", quiet, describe(ivs))
	}
	if len(ivs) != 6 {
		t.Errorf("%d intervals, want 4 with waits and 2 quiet:\n%s", len(ivs), describe(ivs))
	}
	checkSpan(t, ivs, "2023-05-19T05:28:00+02:00", "2023-05-19T06:53:24+02:00")
}

// checkQuietStretches checks that the intervals are contiguous, that those
// with waits last width and that each quiet stretch is one interval of
// several widths; it returns the number of quiet intervals.
func checkQuietStretches(t *testing.T, ivs []stream.Interval, width time.Duration) (quiet int) {
	t.Helper()
	for i, iv := range ivs {
		if i > 0 && !iv.Start.Equal(ivs[i-1].End()) {
			t.Errorf("interval %d starts %s, previous ended %s", i, iv.Start, ivs[i-1].End())
		}
		if len(iv.Series) == 0 {
			quiet++
			if i > 0 && len(ivs[i-1].Series) == 0 {
				t.Errorf("two quiet intervals in a row at %s", iv.Start)
			}
			if iv.Duration <= width {
				t.Errorf("quiet interval at %s lasts %s, want several widths in one interval", iv.Start, iv.Duration)
			}
		} else if iv.Duration != width {
			t.Errorf("interval with events at %s lasts %s, want %s", iv.Start, iv.Duration, width)
		}
	}
	return quiet
}

// checkSpan checks where the first interval starts and the last ends.
func checkSpan(t *testing.T, ivs []stream.Interval, first, last string) {
	t.Helper()
	if len(ivs) == 0 {
		t.Fatal("no intervals")
	}
	if got := ivs[0].Start.Format(time.RFC3339); got != first {
		t.Errorf("first start %s, want %s", got, first)
	}
	if got := ivs[len(ivs)-1].End().Format(time.RFC3339); got != last {
		t.Errorf("last end %s, want %s", got, last)
	}
}

// The shared-server file interleaves three sessions; every wait counts,
// and SESSION ID switches do not disturb the clock: the intervals are
// contiguous, with the idle stretches between the sessions' calls as
// quiet intervals.
func TestSharedServerCountsEverySession(t *testing.T) {
	data := readShared(t, fileS000)
	res := run(t, fileS000, data, source.Options{Location: zurich(t)})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	got := totals(res.Intervals)
	if n := got["SQL*Net message to client"].count + got["SQL*Net message from client"].count; n != 45 {
		t.Errorf("%g waits, want the 45 WAIT lines of sessions 150.65, 147.121 and 149.16", n)
	}
	for _, iv := range res.Intervals {
		if iv.Series != nil && iv.Series[0].Key.Instance != "DBM10203" {
			t.Errorf("instance %q, want DBM10203", iv.Series[0].Key.Instance)
		}
	}
	bySecond := run(t, fileS000, data, source.Options{Location: zurich(t), Interval: time.Second})
	if bySecond.Err != nil {
		t.Fatal(bySecond.Err)
	}
	if quiet := checkQuietStretches(t, bySecond.Intervals, time.Second); quiet < 5 {
		t.Errorf("%d quiet intervals, want the idle stretches between the sessions' calls:\n%s", quiet, describe(bySecond.Intervals))
	}
	checkSpan(t, bySecond.Intervals, "2007-07-11T11:05:33+02:00", "2007-07-11T11:06:40+02:00")
}

// The trcsess merge of two processes gives the same per-event counts and
// sums, and the same windows with the same contents, as its two sources
// read separately.
func TestTrcsessMergeEqualsItsSources(t *testing.T) {
	for _, width := range []time.Duration{time.Second, 3 * time.Second} {
		opts := source.Options{Interval: width}
		merged := run(t, fileTrcsess, readShared(t, fileTrcsess), opts)
		a := run(t, file9850, readShared(t, file9850), opts)
		b := run(t, file9854, readShared(t, file9854), opts)
		for _, r := range []result{merged, a, b} {
			if r.Err != nil || len(r.Diag.Warnings()) != 0 {
				t.Fatalf("err=%v warnings=%q", r.Err, r.Diag.Warnings())
			}
		}
		both := append(append([]stream.Interval{}, a.Intervals...), b.Intervals...)
		if got, want := totals(merged.Intervals), totals(both); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: merged totals %v, sources %v", width, got, want)
		}
		got, want := byWindow(merged.Intervals), byWindow(both)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: windows differ\nmerged:\n%s\nsources:\n%s", width, describe(merged.Intervals), describe(both))
		}
		if len(got) < 3 {
			t.Errorf("%s: %d windows, want the 6 s the sessions ran", width, len(got))
		}
		// The processes' waits arrive up to 0.5 s out of order, yet the
		// merge reads as one continuous trace: each window once, in order.
		if !contiguous(merged.Intervals) || len(merged.Intervals) != len(got) {
			t.Errorf("%s: merged intervals are not one contiguous sequence:\n%s", width, describe(merged.Intervals))
		}
	}
}

// Without its header the trace is read the same; without any timestamp it
// is read on relative time; with its first timestamps cut, the waits before
// the next timestamp are held and placed with it.
func TestHeaderlessAndUnanchoredTraces(t *testing.T) {
	data := readShared(t, file9850)
	loc := zurich(t)
	full := run(t, "full", data, source.Options{Location: loc})

	headerless := data[bytes.Index(data, []byte("\n*** "))+1:]
	res := run(t, "headerless", headerless, source.Options{Location: loc})
	if fmt.Sprint(byWindow(res.Intervals)) != fmt.Sprint(byWindow(full.Intervals)) {
		t.Errorf("header-less read differs:\n%s\nfull:\n%s", describe(res.Intervals), describe(full.Intervals))
	}
	if res.Intervals[0].Series[0].Key.Instance != "" {
		t.Errorf("header-less series on instance %q, want none", res.Intervals[0].Series[0].Key.Instance)
	}

	// Each later timestamp ties the tim clock to the wall clock as the
	// first ones did (they agree within a millisecond), so held waits land
	// where the full read puts them.
	firstStamps := dropLines(data, func(i int, line string) bool { return i < 30 && strings.HasPrefix(line, "*** ") })
	res = run(t, "late-stamp", firstStamps, source.Options{Location: loc})
	if fmt.Sprint(byWindow(res.Intervals)) != fmt.Sprint(byWindow(full.Intervals)) {
		t.Errorf("held waits misplaced:\n%s\nfull:\n%s", describe(res.Intervals), describe(full.Intervals))
	}

	noStamps := dropLines(data, func(_ int, line string) bool { return strings.HasPrefix(line, "*** ") })
	res = run(t, "nostamps", noStamps, source.Options{Location: loc})
	if res.Err != nil || len(res.Intervals) == 0 {
		t.Fatalf("err=%v, %d intervals", res.Err, len(res.Intervals))
	}
	if !res.Intervals[0].Start.Equal(stream.RelativeStart) {
		t.Errorf("relative read starts at %s, want %s", res.Intervals[0].Start, stream.RelativeStart)
	}
	for _, iv := range res.Intervals {
		if !iv.Relative {
			t.Errorf("interval at %s is not relative", iv.Start)
		}
	}
	if fmt.Sprint(totals(res.Intervals)) != fmt.Sprint(totals(full.Intervals)) {
		t.Errorf("relative totals %v, want %v", totals(res.Intervals), totals(full.Intervals))
	}
	if w := res.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "no timestamp lines") {
		t.Errorf("warnings %q, want one about missing timestamps", w)
	}
}

// dropLines returns data without the lines drop selects (i counts from 0).
func dropLines(data []byte, drop func(i int, line string) bool) []byte {
	var out []byte
	for i, line := range strings.SplitAfter(string(data), "\n") {
		if !drop(i, strings.TrimRight(line, "\n")) {
			out = append(out, line...)
		}
	}
	return out
}

// Two traces concatenated (time goes backwards between them) keep every
// wait, warn once with the line where time went back, and give each part's
// own windows.
func TestTimeGoingBackwards(t *testing.T) {
	loc := zurich(t)
	// 19.x of 2023 (tim 5.8e12, 85 minutes long), then 12.2 of 2019 (tim
	// 6.6e11): the wall clock and the tim clock both go back.
	newer, older := readShared(t, fileTwoStmts), readShared(t, file9850)
	both := append(append([]byte{}, newer...), older...)
	res := run(t, "cat", both, source.Options{Location: loc})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	firstWait := bytes.Count(newer, []byte("\n")) + bytes.Count(older[:bytes.Index(older, []byte("\nWAIT #"))+1], []byte("\n")) + 1
	want := fmt.Sprintf("cat: time goes backwards at line %d (concatenated or merged trace?)", firstWait)
	if w := res.Diag.Warnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want [%q]", w, want)
	}
	a := run(t, "a", newer, source.Options{Location: loc})
	b := run(t, "b", older, source.Options{Location: loc})
	parts := append(append([]stream.Interval{}, a.Intervals...), b.Intervals...)
	if fmt.Sprint(byWindow(res.Intervals)) != fmt.Sprint(byWindow(parts)) {
		t.Errorf("concatenation:\n%s\nparts:\n%s", describe(res.Intervals), describe(parts))
	}

	// The same trace twice: all waits kept, each window counted twice.
	twice := run(t, "twice", append(append([]byte{}, newer...), newer...), source.Options{Location: loc})
	if len(twice.Diag.Warnings()) != 1 {
		t.Errorf("warnings %q, want one", twice.Diag.Warnings())
	}
	for k, evs := range byWindow(twice.Intervals) {
		for ev, e := range evs {
			if one := byWindow(a.Intervals)[k][ev]; e.count != 2*one.count || e.sum != 2*one.sum {
				t.Errorf("%v %s: %+v, want twice %+v", k, ev, e, one)
			}
		}
	}
}

// A trace continued in a new file (23c TRACE CONTINUED FROM FILE) reads as
// one continuous trace when the files are concatenated.
func TestContinuedTraceIsContinuous(t *testing.T) {
	first, second := readShared(t, fileFree), readShared(t, fileFree01)
	res := run(t, "cat", append(append([]byte{}, first...), second...), source.Options{Interval: time.Second})
	if res.Err != nil || len(res.Diag.Warnings()) != 0 {
		t.Fatalf("err=%v warnings=%q", res.Err, res.Diag.Warnings())
	}
	got := totals(res.Intervals)
	want := grepWaits(string(first) + string(second))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("totals %v, want %v", got, want)
	}
	if !contiguous(res.Intervals) {
		t.Errorf("not contiguous:\n%s", describe(res.Intervals))
	}
}

// contiguous reports whether each interval starts where the previous ended.
func contiguous(ivs []stream.Interval) bool {
	for i := 1; i < len(ivs); i++ {
		if !ivs[i].Start.Equal(ivs[i-1].End()) {
			return false
		}
	}
	return true
}

// --event keeps only the named events; the observed time is unchanged.
func TestEventFilter(t *testing.T) {
	data := readShared(t, file9850)
	keep := []string{"db file sequential read", "gc current block 2-way"}
	all := run(t, "all", data, source.Options{})
	res := run(t, "some", data, source.Options{Events: keep})
	got := totals(res.Intervals)
	if len(got) != 2 {
		t.Errorf("events %v, want only %q", got, keep)
	}
	for _, ev := range keep {
		if got[ev] != totals(all.Intervals)[ev] {
			t.Errorf("%s: %+v, want %+v", ev, got[ev], totals(all.Intervals)[ev])
		}
	}
	if a, b := observed(all.Intervals), observed(res.Intervals); a != b {
		t.Errorf("filtered read covers %s, unfiltered %s", b, a)
	}
}

func observed(ivs []stream.Interval) time.Duration {
	var d time.Duration
	for _, iv := range ivs {
		d += iv.Duration
	}
	return d
}

// The interval changes how waits are binned, never the totals or buckets.
func TestIntervalDoesNotChangeTotals(t *testing.T) {
	data := readShared(t, file9850)
	one := run(t, "1s", data, source.Options{Interval: time.Second})
	three := run(t, "3s", data, source.Options{Interval: 3 * time.Second})
	def := run(t, "default", data, source.Options{})
	if len(one.Intervals) <= len(three.Intervals) {
		t.Errorf("1 s gives %d intervals, 3 s %d", len(one.Intervals), len(three.Intervals))
	}
	if fmt.Sprint(byWindow(def.Intervals)) != fmt.Sprint(byWindow(three.Intervals)) {
		t.Errorf("the default interval is not 3 s")
	}
	a, b := merged(one.Intervals), merged(three.Intervals)
	for ev, h := range a {
		if h.Sum != b[ev].Sum || fmt.Sprint(h.Buckets()) != fmt.Sprint(b[ev].Buckets()) {
			t.Errorf("%s: 1 s and 3 s histograms differ", ev)
		}
	}
	for _, iv := range one.Intervals {
		if iv.Duration%time.Second != 0 || iv.Start.UnixNano()%int64(time.Second) != 0 {
			t.Errorf("interval %s +%s not on 1 s boundaries", iv.Start, iv.Duration)
		}
	}
}

// ela= 0 lands in the zero bucket [0, 1) µs, the lowest row. The only real
// traces with ela= 0 are the Apress 10.2 ones (shared test data only); on a
// clone the case is checked on a repository trace edited to have one
// (synthetic).
func TestZeroEla(t *testing.T) {
	check := func(t *testing.T, h *hist.Histogram, zero, count, sum float64) {
		t.Helper()
		if h == nil || h.ZeroCount != zero || h.Count() != count || h.Sum != sum {
			t.Fatalf("histogram %+v; want zero bucket %g, count %g, sum %g", h, zero, count, sum)
		}
		if r := h.Rows(); r.ZeroCount != zero || r.ZeroPow != 0 || r.First != 0 {
			t.Errorf("rows: zero %g (pow %d), first row %d; want the zero row below [1,2)", r.ZeroCount, r.ZeroPow, r.First)
		}
	}
	t.Run("edited 12.2 trace (synthetic)", func(t *testing.T) {
		// The trace's two SQL*Net message to client waits have ela= 1 and
		// ela= 2; the second becomes ela= 0.
		data := string(readShared(t, file9850))
		i := strings.Index(data, "nam='SQL*Net message to client' ela= 2 ")
		if i < 0 {
			t.Fatal("the trace no longer has its ela= 2 wait")
		}
		edited := data[:i] + strings.Replace(data[i:], "ela= 2 ", "ela= 0 ", 1)
		res := run(t, "edited", []byte(edited), source.Options{})
		check(t, merged(res.Intervals)["SQL*Net message to client"], 1, 2, 1)
	})
	t.Run("real 10.2 trace", func(t *testing.T) {
		res := run(t, fileDBM10203, readShared(t, fileDBM10203), source.Options{})
		check(t, merged(res.Intervals)["SQL*Net message to client"], 1, 4, 4) // ela 1, 0, 2, 1
	})
}

// 23c writes ela=N without a space.
func TestNoSpaceEla(t *testing.T) {
	free := run(t, fileFree, readShared(t, fileFree), source.Options{})
	if got := totals(free.Intervals)["SQL*Net message to client"]; got.count != 4 || got.sum != 9+12+9+11 {
		t.Errorf("23c ela=N: %+v, want 4 waits summing 41 µs", got)
	}
}

// Very long lines (huge SQL text or bind values) do not stop the parse; a
// WAIT line longer than the buffer is reported, not fatal.
func TestLongLines(t *testing.T) {
	data := readShared(t, file9850)
	tim := firstTim(t, data)
	hugeSQL := fmt.Sprintf("PARSING IN CURSOR #9 len=3145728 dep=0 uid=0 oct=3 lid=0 tim=%d hv=1 ad='0'\n", tim) +
		"select " + strings.Repeat("x, ", 1<<20) + "1 from dual\nEND OF STMT\n"
	hugeBind := " Bind#0\n  value=\"" + strings.Repeat("y", 2<<20) + "\"\n"
	hugeWait := "WAIT #1: nam='db file sequential read' ela= 5 " + strings.Repeat("p=1 ", 300000) + fmt.Sprintf("tim=%d\n", tim+1)
	cut := bytes.Index(data, []byte("\n=====================\n")) + 1
	edited := string(data[:cut]) + hugeSQL + hugeBind + hugeWait + string(data[cut:])
	res := run(t, "long", []byte(edited), source.Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if fmt.Sprint(totals(res.Intervals)) != fmt.Sprint(grepWaits(string(data))) {
		t.Errorf("totals %v, want %v", totals(res.Intervals), grepWaits(string(data)))
	}
	line := strings.Count(edited[:strings.Index(edited, hugeWait)], "\n") + 1
	if p := res.Diag.Problems(); len(p) != 1 || p[0].Count != 1 || p[0].First[0].Line != line {
		t.Errorf("problems %+v, want the long WAIT line %d", p, line)
	}
}

// firstTim returns the tim of the trace's first WAIT line, for lines
// inserted into it.
func firstTim(t *testing.T, data []byte) int64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^WAIT #.* tim=(\d+)\r?$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("no WAIT line with a tim")
	}
	tim, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return tim
}

// SQL text (after PARSING IN CURSOR up to END OF STMT, and after PARSE
// ERROR) is never read as trace lines, even when it looks like them.
func TestSQLTextIsNeverRead(t *testing.T) {
	data := readShared(t, file9850)
	tim := firstTim(t, data)
	fake := fmt.Sprintf("WAIT #1: nam='fake event' ela= 5 p1=0 p2=0 p3=0 obj#=-1 tim=%d\n", tim+1) +
		"*** 2001-01-01 00:00:00.000\n" +
		"PARSING IN CURSOR #7 len=10 dep=0 uid=0 oct=3 lid=0 tim=1 hv=1 ad='0'\n"
	parsing := fmt.Sprintf("PARSING IN CURSOR #9 len=300 dep=0 uid=0 oct=3 lid=0 tim=%d hv=1 ad='0'\n", tim) +
		"select '\n" + fake + "' from dual\nEND OF STMT\n"
	parseError := fmt.Sprintf("PARSE ERROR #9:len=%d dep=0 uid=0 oct=3 lid=0 tim=%d err=942\n", len(fake), tim) + fake
	cut := bytes.Index(data, []byte("\n=====================\n")) + 1
	edited := string(data[:cut]) + parsing + parseError + string(data[cut:])
	res := run(t, "sql", []byte(edited), source.Options{Location: zurich(t)})
	want := run(t, "orig", data, source.Options{Location: zurich(t)})
	if fmt.Sprint(byWindow(res.Intervals)) != fmt.Sprint(byWindow(want.Intervals)) {
		t.Errorf("SQL text was read as trace lines:\n%s", describe(res.Intervals))
	}
	if res.Diag.Count("sql") != 0 {
		t.Errorf("malformed reports: %s", res.Log)
	}
}

// Damaged WAIT lines are skipped and reported with their line numbers; the
// rest of the file is kept.
func TestMalformedWaitLines(t *testing.T) {
	data := string(readShared(t, file9850))
	lines := strings.SplitAfter(data, "\n")
	damage := map[string]func(string) string{
		"WAIT line without nam='...'":    func(l string) string { return strings.Replace(l, "nam='", "name='", 1) },
		"WAIT line without ela=":         func(l string) string { return strings.Replace(l, "' ela=", "' elapsed=", 1) },
		"WAIT line with a bad ela value": func(l string) string { return strings.Replace(l, "ela= ", "ela= x", 1) },
		"WAIT line without tim=":         func(l string) string { return l[:strings.Index(l, " tim=")] + "\n" },
		"WAIT line with a bad tim value": func(l string) string { return strings.Replace(l, " tim=", " tim=-", 1) },
		"WAIT line with an empty event name": func(l string) string {
			return "WAIT #0: nam='' ela=" + l[strings.Index(l, "' ela=")+6:]
		},
	}
	want := map[int]string{}
	lost := map[string]float64{}
	// One kind of damage every step waits, spread over the file.
	step := waits9850 / (len(damage) + 1)
	w := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, "WAIT #") {
			continue
		}
		w++
		if w%step != 0 || len(want) == len(damage) {
			continue
		}
		for reason, f := range damage {
			if !strings.Contains(fmt.Sprint(want), reason) {
				lines[i] = f(l)
				want[i+1] = reason
				lost[waitLineRe.FindStringSubmatch(l)[1]]++
				break
			}
		}
	}
	if len(want) != len(damage) {
		t.Fatalf("damaged %d lines, want one of each of the %d kinds", len(want), len(damage))
	}
	res := run(t, "damaged", []byte(strings.Join(lines, "")), source.Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	got := map[int]string{}
	for _, p := range res.Diag.Problems() {
		for _, pr := range p.First {
			got[pr.Line] = pr.Reason
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reports %v, want %v", got, want)
	}
	tot := totals(res.Intervals)
	for ev, e := range grepWaits(data) {
		if tot[ev].count != e.count-lost[ev] {
			t.Errorf("%s: %g waits, want %g", ev, tot[ev].count, e.count-lost[ev])
		}
	}
	if !strings.Contains(res.Log.String(), "damaged:") {
		t.Errorf("reports do not name the file: %s", res.Log)
	}
}

// CRLF line ends (traces copied through Windows) read the same.
func TestCRLF(t *testing.T) {
	data := readShared(t, file9850)
	crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	a := run(t, "lf", data, source.Options{Location: time.UTC})
	b := run(t, "crlf", crlf, source.Options{Location: time.UTC})
	if fmt.Sprint(byWindow(a.Intervals)) != fmt.Sprint(byWindow(b.Intervals)) || b.Diag.Count("crlf") != 0 {
		t.Errorf("CRLF read differs:\n%s\n%s", describe(b.Intervals), b.Log)
	}
}

func TestSumsAreExact(t *testing.T) {
	res := run(t, file9850, readShared(t, file9850), source.Options{})
	for _, iv := range res.Intervals {
		for _, s := range iv.Series {
			if !s.Hist.SumExact || s.Hist.Unit.String() != "us" || math.Trunc(s.Hist.Sum) != s.Hist.Sum {
				t.Fatalf("%s: sum %g exact=%v unit=%s, want an exact integer µs sum", s.Key, s.Hist.Sum, s.Hist.SumExact, s.Hist.Unit)
			}
		}
	}
}
