package events

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
)

// The inputs in this file are SYNTHETIC, written in the documented forms
// (HeatMap pairs, iosnoop -s columns, ora_wait_trace.py lines) to reach the
// cases the real samples do not have.

// TestEpochPairs: header-less pairs whose times are Unix seconds are on the
// wall clock; --unit gives the latency unit.
func TestEpochPairs(t *testing.T) {
	in := "1700000000.5 2.5\n1700000001.25 3\n1700000001.75 0.125\n"
	res := runString(t, Format(), in, source.Options{Unit: hist.Millisecond, Location: time.UTC})
	checkTimeline(t, res, []string{"22:13:20.000+1s:1", "22:13:21.000+1s:2"})
	iv := res.Intervals[0]
	if iv.Relative || !iv.Start.Equal(time.Unix(1700000000, 0)) || iv.Start.Location() != time.UTC {
		t.Errorf("first interval %s relative %v, want 2023-11-14 22:13:20 UTC wall clock", iv.Start, iv.Relative)
	}
	h := res.Intervals[1].Series[0].Hist
	if h.Unit != hist.Millisecond || h.Sum != 3.125 {
		t.Errorf("second window unit %s sum %g, want ms 3.125", h.Unit, h.Sum)
	}
	// Without --unit the latency is in µs.
	res = runString(t, Format(), in, source.Options{})
	if u := res.Intervals[0].Series[0].Hist.Unit; u != hist.Microsecond {
		t.Errorf("default latency unit %s, want µs", u)
	}
}

// TestUnitOverride: --unit wins over the header's unit, with a warning.
func TestUnitOverride(t *testing.T) {
	res := runString(t, Format(), "TIMEus DELTAus\n10 5\n", source.Options{Unit: hist.Nanosecond})
	if u := res.Intervals[0].Series[0].Hist.Unit; u != hist.Nanosecond {
		t.Errorf("unit %s, want ns", u)
	}
	if w := res.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "--unit ns overrides the us the header at line 1 names") {
		t.Errorf("warnings %q", w)
	}
}

// TestStartColumn: iosnoop -s prints only STARTs: an I/O is placed at its
// start plus its latency, so one that starts before a window edge and
// completes after it counts in the later window.
func TestStartColumn(t *testing.T) {
	in := "Tracing block I/O. Ctrl-C to end.\n" +
		"STARTs         COMM             PID    TYPE DEV      BLOCK        BYTES     LATms\n" +
		"5982800.999061 supervise        1809   W    202,1    17039600     4096       0.62\n" +
		"5982800.999500 supervise        1809   W    202,1    17039608     4096       1.32\n" +
		"^C\nEnding tracing...\n"
	res := runString(t, Format(), in, source.Options{})
	checkTimeline(t, res, []string{"00:00:00.000+1s:1", "00:00:01.000+1s:1"})
}

// TestCommWithSpaces: a COMM with a space shifts the fields; the time is
// found from the left and the latency from the right.
func TestCommWithSpaces(t *testing.T) {
	in := "TIME(s)     COMM           PID    DISK    T SECTOR     BYTES   LAT(ms)\n" +
		"0.000004    Web Content    1950   xvda1   W 13092560   4096       0.74\n" +
		"0.500000    a b c d        1950   xvda1   W 13092560   4096       1.26\n"
	res := runString(t, Format(), in, source.Options{})
	if c, s := res.total(""); c != 2 || s != 2e6 {
		t.Errorf("%g events, sum %g ns; want 2 and 2 ms", c, s)
	}
}

// TestMalformedRows: rows that start like numbers but fail are reported
// with their line; the good rows stay.
func TestMalformedRows(t *testing.T) {
	in := "TIME(ms) LAT(us)\n" +
		"1 10\n" +
		"2 ten\n" +
		"99999999999999999999999 5\n" +
		"3 -4\n" +
		"4 1e400\n" +
		"[...]\n" +
		"5 20\n"
	res := runString(t, Format(), in, source.Options{})
	want := []string{
		`3: latency "ten" is not a non-negative number`,
		`4: time "99999999999999999999999" is not a non-negative number of reasonable size`,
		`5: latency "-4" is not a non-negative number`,
		`6: latency "1e400" is not a non-negative number`,
	}
	if got := res.Malformed(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c, s := res.total(""); c != 2 || s != 30e3 {
		t.Errorf("%g events sum %g ns, want 2 and 30 µs", c, s)
	}
}

// TestBinning: events up to one interval out of order stay in their window;
// quiet windows between events become one quiet interval; a jump of more
// than a month starts a new run laid after the previous one.
func TestBinning(t *testing.T) {
	in := "10.2 1\n11.5 1\n10.9 1\n14.1 1\n" + "9000000.0 1\n"
	res := runString(t, Format(), in, source.Options{})
	checkTimeline(t, res, []string{"00:00:00.000+1s:2", "00:00:01.000+1s:1", "00:00:02.000+2s:0",
		"00:00:04.000+1s:1", "00:00:05.000+1s:1"})
	res = runString(t, Format(), in, source.Options{Interval: 2 * time.Second})
	checkTimeline(t, res, []string{"00:00:00.000+2s:3", "00:00:02.000+2s:0", "00:00:04.000+2s:1", "00:00:06.000+2s:1"})
}

// TestEventFilter: the events format has one series, "latency".
func TestEventFilter(t *testing.T) {
	if res := runString(t, Format(), "1 2\n3 4\n", source.Options{Events: []string{"other"}}); len(res.Intervals) != 0 {
		t.Errorf("%d intervals with --event other", len(res.Intervals))
	}
	if res := runString(t, Format(), "1 2\n3 4\n", source.Options{Events: []string{EventName}}); len(res.Intervals) != 3 {
		t.Errorf("%d intervals with --event %s, want 3", len(res.Intervals), EventName)
	}
}

func TestEmpty(t *testing.T) {
	for _, in := range []string{"", "\n", "TIMEus DELTAus\n", "just prose\n"} {
		if res := runString(t, Format(), in, source.Options{}); len(res.Intervals) != 0 || len(res.Malformed()) != 0 {
			t.Errorf("%q: %d intervals, problems %q", in, len(res.Intervals), res.Malformed())
		}
	}
}

// oraWaitLines follows the documented ora_wait_trace.py form
// "HH:MM:SS pid=N event=NAME wait_time=US" around midnight, with the
// tool's banner and Ctrl-C.
const oraWaitLines = `Start tracing oracle wait events... Hit Ctrl-C to end.
23:59:58 pid=4242 event=db file sequential read wait_time=512
23:59:59 pid=4242 event=db file sequential read wait_time=1024
23:59:59 pid=4243 event=log file sync wait_time=2100
00:00:00 pid=4242 event=db file sequential read wait_time=300
00:00:01 pid=4244 event=direct path read wait_time=77
00:00:61 pid=4244 event=direct path read wait_time=77
00:00:02 pid=4244 event=direct path read wait_time=many
00:00:02 pid=4244 wait_time=5
^C
`

func TestOraWaitLines(t *testing.T) {
	if got := DetectWait([]byte(oraWaitLines)); got != input.Yes {
		t.Fatalf("DetectWait = %v", got)
	}
	if got := Detect([]byte(oraWaitLines)); got == input.Yes {
		t.Fatalf("Detect (events) claims wait lines")
	}
	day := time.Date(2024, 3, 14, 0, 0, 0, 0, time.UTC)
	res := runString(t, WaitFormat(), oraWaitLines, source.Options{Date: day, Location: time.UTC})
	want := []string{
		`7: time of day "00:00:61" is out of range`,
		`8: wait_time "many" is not a non-negative number`,
		"9: want event=NAME wait_time=US after the time",
	}
	if got := res.Malformed(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("problems %q, want %q", got, want)
	}
	checkTimeline(t, res, []string{"23:59:58.000+1s:1", "23:59:59.000+1s:2", "00:00:00.000+1s:1", "00:00:01.000+1s:1"})
	if got := res.Intervals[2].Start; !got.Equal(time.Date(2024, 3, 15, 0, 0, 0, 0, time.UTC)) || res.Intervals[2].Relative {
		t.Errorf("the wait after midnight starts %s, want 2024-03-15 00:00:00 wall clock", got)
	}
	if c, s := res.total("db file sequential read"); c != 3 || s != (512+1024+300)*1e3 {
		t.Errorf("db file sequential read: %g waits, %g ns", c, s)
	}
	keys := map[string]bool{}
	for _, iv := range res.Intervals {
		for _, s := range iv.Series {
			keys[s.Key.String()] = true
			if s.Hist.Unit != hist.Microsecond {
				t.Errorf("%s in %s, want µs", s.Key, s.Hist.Unit)
			}
		}
	}
	if len(keys) != 3 || !keys["log file sync"] || !keys["direct path read"] {
		t.Errorf("series %v, want one per event and no pid", keys)
	}
}

// TestOraWaitDay: without --date the day is the file's modification date,
// in the --tz zone.
func TestOraWaitDay(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	mod := time.Date(2015, 3, 14, 20, 0, 0, 0, loc)
	res := result{sourcetest.Run(t, WaitFormat(), source.Input{Name: "w.txt",
		Reader: strings.NewReader("19:40:07 pid=1 event=log file sync wait_time=10\n"), ModTime: mod}, source.Options{Location: loc})}
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if len(res.Intervals) != 1 || !res.Intervals[0].Start.Equal(time.Date(2015, 3, 14, 19, 40, 7, 0, loc)) {
		t.Errorf("intervals %+v, want one at 2015-03-14 19:40:07 CET", res.timeline())
	}
}

// TestDetectOthers: real files of other formats are not claimed.
func TestDetectOthers(t *testing.T) {
	var paths []string
	for _, pattern := range []string{"pylatencymap/*", "trc10046/*/*"} {
		for _, rel := range testenv.DataFiles(t, pattern) {
			paths = append(paths, testenv.DataFile(t, rel))
		}
	}
	if len(paths) < 10 {
		t.Fatalf("only %d real files", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data = data[:min(len(data), 64<<10)]
		if Detect(data) == input.Yes || DetectWait(data) == input.Yes {
			t.Errorf("%s claimed (events %v, wait lines %v)", p, Detect(data), DetectWait(data))
		}
	}
	// A SQL*Plus spool of two number columns is not HeatMap pairs.
	spool := "WAIT_TIME_MILLI WAIT_COUNT\n--------------- ----------\n              1    4129312\n              2    4875183\n"
	if got := Detect([]byte(spool)); got == input.Yes {
		t.Errorf("Detect(SQL*Plus spool) = Yes")
	}
	if got := Detect([]byte("TIMEus DELTAus\n93398")); got != input.NeedMore {
		t.Errorf("Detect(header and a cut row) = %v, want NeedMore", got)
	}
	if got := Detect([]byte(strings.Repeat("prose line\n", 400))); got != input.NeedMore {
		t.Errorf("Detect(4 KiB of prose) = %v, want NeedMore (events may follow a banner)", got)
	}
	if got := Detect([]byte(strings.Repeat("prose line\n", input.DetectLimit/11+1))); got != input.No {
		t.Errorf("Detect(64 KiB of prose) = %v, want No", got)
	}
}
