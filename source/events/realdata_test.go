package events

import (
	"bufio"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// The three files in testdata/ are real example outputs shipped by Debian
// (see testdata/PROVENANCE.md): prose around several runs of each tool, with
// different column layouts per run.

// independent scans a file with a regexp matching the tool's rows and
// returns how many there are and the sum of the latency group (in ms).
func independent(t *testing.T, path, row string) (n int, sumMs float64) {
	t.Helper()
	re := regexp.MustCompile(row)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[len(m)-1], 64)
		if err != nil {
			t.Fatal(err)
		}
		n++
		sumMs += v
	}
	return n, sumMs
}

// checkTotals compares latscope's totals with the independent scan.
func checkTotals(t *testing.T, res result, n int, sumMs float64) {
	t.Helper()
	count, sumNs := res.total("")
	if count != float64(n) {
		t.Errorf("%g events, the rows say %d", count, n)
	}
	if math.Abs(sumNs-sumMs*1e6) > 1e-6*sumMs*1e6 {
		t.Errorf("sum %.3f ms, the rows say %.3f ms", sumNs/1e6, sumMs)
	}
}

func checkTimeline(t *testing.T, res result, want []string) {
	t.Helper()
	if got := res.timeline(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("timeline\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestIosnoopExample reads perf-tools' iosnoop example: the plain runs have
// no time column and are skipped with a warning; the two -ts runs are read
// by their ENDs column (completion time, monotonic seconds: relative time).
func TestIosnoopExample(t *testing.T) {
	path := "testdata/iosnoop_example.txt"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := Detect(data); got != input.Yes {
		t.Fatalf("Detect = %v, want Yes", got)
	}
	res := runFile(t, Format(), path, source.Options{})
	if p := res.Malformed(); len(p) > 0 {
		t.Errorf("problems %q", p)
	}
	w := res.Diag.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "table at line 8 (COMM PID TYPE DEV BLOCK BYTES LATms) has no time column") {
		t.Errorf("warnings %q", w)
	}
	// 5982800.30 s is window 0; the last run starts 54759 s (15h12m39s)
	// later, has 2 rows, an elision, and 9 rows ending in second 54796.
	checkTimeline(t, res, []string{"00:00:00.000+1s:10", "00:00:01.000+15h12m38s:0", "15:12:39.000+1s:2",
		"15:12:40.000+36s:0", "15:13:16.000+1s:9"})
	for _, iv := range res.Intervals {
		if !iv.Relative {
			t.Fatalf("interval at %s is on the wall clock; monotonic seconds are relative", iv.Start)
		}
	}
	n, sum := independent(t, path, `^(\d+\.\d+) (\d+\.\d+) +\S+ +\d+ +\S+ +\S+ +\d+ +\d+ +(\d+\.\d+)$`)
	if n != 21 {
		t.Fatalf("the independent scan found %d -ts rows, want 21", n)
	}
	checkTotals(t, res, n, sum)
	// The slowest I/O (20.05 ms) is the top of the last window, in ms.
	last := res.Intervals[len(res.Intervals)-1].Series[0].Hist
	if last.Unit != hist.Millisecond || math.Abs(last.Quantile(1)-20.05) > 20.05*0.011 {
		t.Errorf("last window: unit %s, max %g ms, want ms and 20.05 within a bucket", last.Unit, last.Quantile(1))
	}
}

// TestBiosnoopBcc reads bcc's biosnoop example: TIME(s) since the tool
// started, LAT(ms) last; the -Q run (with a QUE(ms) column) starts again at
// 0 and is laid after the first run.
func TestBiosnoopBcc(t *testing.T) {
	path := "testdata/biosnoop_example_bcc.txt"
	res := runFile(t, Format(), path, source.Options{})
	// iostat's CPU line in the prose starts with a number under the
	// biosnoop header but has too few fields.
	want := []string{"37: row has 6 fields, its header at line 8 has 8 (a row has at least as many)"}
	if got := res.Malformed(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("problems %q, want %q", got, want)
	}
	if w := res.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "time goes backwards at line 56") {
		t.Errorf("warnings %q", w)
	}
	checkTimeline(t, res, []string{"00:00:00.000+1s:4", "00:00:01.000+1s:4", "00:00:02.000+1s:7",
		"00:00:03.000+1s:2", "00:00:04.000+4s:0", "00:00:08.000+1s:4"})
	n, sum := independent(t, path, `^(\d+\.\d+) +\S+ +\d+ +\S+ +[RW] +\d+ +\d+ +(?:\d+\.\d+ +)?(\d+\.\d+)$`)
	if n != 21 {
		t.Fatalf("the independent scan found %d rows, want 21", n)
	}
	checkTotals(t, res, n, sum)
}

// TestBiosnoopBpftrace reads bpftrace's biosnoop.bt example: TIME(ms)
// since the program started, whole-ms LAT(ms).
func TestBiosnoopBpftrace(t *testing.T) {
	path := "testdata/biosnoop_example_bpftrace.txt"
	res := runFile(t, Format(), path, source.Options{})
	if p := res.Malformed(); len(p) > 0 || len(res.Diag.Warnings()) > 0 {
		t.Errorf("problems %q, warnings %q", p, res.Diag.Warnings())
	}
	checkTimeline(t, res, []string{"00:00:00.000+1s:18", "00:00:01.000+1s:0", "00:00:02.000+1s:2"})
	n, sum := independent(t, path, `^(\d+) +\S+ +\S+ +\d+ +(\d+)$`)
	if n != 20 {
		t.Fatalf("the independent scan found %d rows, want 20", n)
	}
	checkTotals(t, res, n, sum)
	// Three of the 20 I/Os took "0" ms: the zero bucket.
	var zeros float64
	for _, iv := range res.Intervals {
		for _, s := range iv.Series {
			zeros += s.Hist.ZeroCount
		}
	}
	if zeros != 3 {
		t.Errorf("%g zero-latency events, want 3", zeros)
	}
}

// TestHeatMapExample reads the lines of Brendan Gregg's HeatMap
// example-trace.txt quoted in the domain notes (iosnoop -Dt, µs).
func TestHeatMapExample(t *testing.T) {
	in := "TIMEus DELTAus\n9339835017 15133\n9339835827 712\n"
	if got := Detect([]byte(in)); got != input.Yes {
		t.Fatalf("Detect = %v", got)
	}
	res := runString(t, Format(), in, source.Options{})
	checkTimeline(t, res, []string{"00:00:00.000+1s:2"})
	h := res.Intervals[0].Series[0].Hist
	if h.Unit != hist.Microsecond || h.Sum != 15133+712 || res.Intervals[0].Series[0].Key.Event != EventName {
		t.Errorf("unit %s sum %g key %s, want µs, 15845, %q", h.Unit, h.Sum, res.Intervals[0].Series[0].Key, EventName)
	}
}
