package fio

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
)

// The shipped real outputs (testdata/PROVENANCE.md) read without fio: the
// log holds every I/O of the JSON (think time longer than the log period).
func TestShippedRandRead(t *testing.T) {
	data, err := os.ReadFile(testdata("randread.json"))
	if err != nil {
		t.Fatal(err)
	}
	ref := readReport(t, data)
	res := runFile(t, JSONFormat(), testdata("randread.json"), source.Options{})
	if res.Err != nil || len(res.Malformed()) > 0 || len(res.Diag.Warnings()) > 0 {
		t.Fatalf("err %v, malformed %q, warnings %q", res.Err, res.Malformed(), res.Diag.Warnings())
	}
	h := res.total("randread read clat")
	rd := ref.Jobs[0].Read
	if h.Count() != 12 || rd.Clat.N != 12 || rd.TotalIOs != 12 {
		t.Fatalf("count %.0f, fio N %d total_ios %d, want 12", h.Count(), rd.Clat.N, rd.TotalIOs)
	}
	checkPercentiles(t, "json", h, rd.Clat.Percentile, 1)
	checkBinsInBuckets(t, h, rd.Clat.Bins)
	// 1795313760 is 2026-11-22 02:16 UTC, the machine's clock that day.
	iv := res.Intervals[0]
	if iv.End().UnixMilli() != ref.TimestampMs || iv.Duration != 367*time.Millisecond {
		t.Errorf("window %s + %s, want ending at %d ms after 367 ms", iv.Start, iv.Duration, ref.TimestampMs)
	}

	lines := readHistLog(t, testdata("randread_clat_hist.1.log"))
	lres := runFile(t, HistLogFormat(), testdata("randread_clat_hist.1.log"), source.Options{})
	if lres.Err != nil || len(lres.Malformed()) > 0 {
		t.Fatalf("err %v, malformed %q", lres.Err, lres.Malformed())
	}
	if len(lres.Intervals) != 10 || len(lines) != 10 {
		t.Fatalf("%d intervals from %d lines, want 10", len(lres.Intervals), len(lines))
	}
	lh := lres.total("read clat")
	if lh.Count() != 12 {
		t.Errorf("log holds %.0f I/Os, want the JSON's 12", lh.Count())
	}
	checkBinsInBuckets(t, lh, rd.Clat.Bins)
	checkAnchor(t, lres, testdata("randread_clat_hist.1.log"), lines)
	if w := lres.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "modification time") {
		t.Errorf("warnings %q, want one about the modification-time anchor", w)
	}
}

// Coarseness 6 (29 bins a line) with reads and writes: one series per
// direction, windows per direction, totals equal to the JSON's.
func TestShippedCoarse6ReadWrite(t *testing.T) {
	data, err := os.ReadFile(testdata("randrw-coarse6.json"))
	if err != nil {
		t.Fatal(err)
	}
	ref := readReport(t, data)
	path := testdata("randrw-coarse6_clat_hist.1.log")
	lines := readHistLog(t, path)
	res := runFile(t, HistLogFormat(), path, source.Options{})
	if res.Err != nil || len(res.Malformed()) > 0 {
		t.Fatalf("err %v, malformed %q", res.Err, res.Malformed())
	}
	if got := res.events(); len(got) != 2 || got[0] != "read clat" || got[1] != "write clat" {
		t.Errorf("series %q", got)
	}
	for ev, want := range map[string]int64{"read clat": ref.Jobs[0].Read.Clat.N, "write clat": ref.Jobs[0].Write.Clat.N} {
		if h := res.total(ev); h.Count() != float64(want) || len(h.Bounds) != 29 {
			t.Errorf("%s: %.0f I/Os on %d edges, want %d on 29", ev, h.Count(), len(h.Bounds), want)
		}
	}
	if len(res.Intervals) != len(lines) {
		t.Errorf("%d intervals from %d lines (no two lines share a window)", len(res.Intervals), len(lines))
	}
	checkAnchor(t, res, path, lines)

	// Relative times from standard input (no modification time).
	data, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel := run(t, HistLogFormat(), "-", bytes.NewReader(data), time.Time{}, source.Options{})
	first := rel.Intervals[0]
	if !first.Relative || !first.Start.Equal(rel.Intervals[0].Start) || first.Duration != 60*time.Millisecond {
		t.Errorf("first window %s + %s relative %v, want relative 0 + 60 ms", first.Start, first.Duration, first.Relative)
	}
	if len(rel.Diag.Warnings()) != 0 {
		t.Errorf("warnings %q for relative times", rel.Diag.Warnings())
	}
}

// fio client/server: jobs under client_stats, the hostname as instance, no
// timestamp_ms (the window ends at "timestamp", whole seconds).
func TestShippedClientServer(t *testing.T) {
	data, err := os.ReadFile(testdata("client.json"))
	if err != nil {
		t.Fatal(err)
	}
	ref := readReport(t, data)
	res := run(t, JSONFormat(), "client.json", bytes.NewReader(data), time.Time{}, source.Options{})
	if res.Err != nil || len(res.Intervals) != 1 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	s := res.Intervals[0].Series[0]
	cj := ref.ClientStats[0]
	if s.Key.Event != "cj read clat" || s.Key.Instance != "127.0.0.1" || s.Hist.Count() != float64(cj.Read.Clat.N) {
		t.Errorf("series %+v with %.0f I/Os, want cj read clat @127.0.0.1 with %d", s.Key, s.Hist.Count(), cj.Read.Clat.N)
	}
	if end := res.Intervals[0].End(); end.Unix() != 1795313924 || end.Nanosecond() != 0 {
		t.Errorf("window ends %s, want the timestamp 1795313924", end)
	}
	checkPercentiles(t, "client", s.Hist, cj.Read.Clat.Percentile, 1)
}

// Detection: each fio format claims its own files and no other format's.
func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		file      string
		json, log input.Verdict
	}{
		{"randread.json", input.Yes, input.No},
		{"client.json", input.Yes, input.No},
		{"randread_clat_hist.1.log", input.No, input.Yes},
		{"randrw-coarse6_clat_hist.1.log", input.No, input.Yes},
	} {
		data, err := os.ReadFile(testdata(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if v := DetectJSON(data); v != tc.json {
			t.Errorf("%s: DetectJSON = %v, want %v", tc.file, v, tc.json)
		}
		if v := DetectHistLog(data); v != tc.log {
			t.Errorf("%s: DetectHistLog = %v, want %v", tc.file, v, tc.log)
		}
		// A short prefix is undecided, never wrong.
		for _, n := range []int{1, 5, 20} {
			if v := DetectJSON(data[:n]); v == input.Yes && tc.json != input.Yes || v == input.No && tc.json == input.Yes {
				t.Errorf("%s[:%d]: DetectJSON = %v", tc.file, n, v)
			}
			if v := DetectHistLog(data[:n]); v == input.Yes || v == input.No && tc.log == input.Yes {
				t.Errorf("%s[:%d]: DetectHistLog = %v", tc.file, n, v)
			}
		}
	}
	// Other formats' real files: No at once.
	for _, rel := range []string{"pylatencymap/example_latency_data.txt", "pylatencymap/test_DTrace_data.txt",
		"pylatencymap/test_SystemTap_data.txt", "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc"} {
		data, err := os.ReadFile(testenv.DataFile(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		data = data[:min(len(data), 64<<10)]
		if v := DetectJSON(data); v != input.No {
			t.Errorf("%s: DetectJSON = %v", rel, v)
		}
		if v := DetectHistLog(data); v != input.No {
			t.Errorf("%s: DetectHistLog = %v", rel, v)
		}
	}
	// Synthetic near misses: other JSON, a fio latency log (5 columns), an
	// HdrHistogram log.
	for _, in := range []string{"{\n  \"name\": 1\n}\n", "[1, 2]\n", "100, 52000, 0, 4096, 0\n",
		"#[Histogram log format version 1.3]\n", "Tag=a,0.1,1.0,2.0,HISTFAAA\n"} {
		if v := DetectJSON([]byte(in)); v != input.No {
			t.Errorf("%q: DetectJSON = %v", in, v)
		}
		if v := DetectHistLog([]byte(in)); v != input.No {
			t.Errorf("%q: DetectHistLog = %v", in, v)
		}
	}
}

// Damaged inputs, built from the real files: bad lines are skipped and
// counted with their line numbers, everything good is kept.
func TestDamagedHistLog(t *testing.T) {
	data, err := os.ReadFile(testdata("randrw-coarse6_clat_hist.1.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	lines[2] = strings.Replace(lines[2], ", 0,", ", x,", 1)       // not a number
	lines[5] = lines[5] + ", 7"                                   // 30 bins
	lines[7] = strings.Replace(lines[7], "302, 1,", "150, 1,", 1) // time going back
	res := run(t, HistLogFormat(), "damaged.log", strings.NewReader(strings.Join(lines, "\n")), time.Time{}, source.Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	got := res.Malformed()
	if len(got) != 3 || !strings.HasPrefix(got[0], "3: ") || !strings.HasPrefix(got[1], "6: ") || !strings.HasPrefix(got[2], "8: ") {
		t.Errorf("malformed %q, want lines 3, 6 and 8", got)
	}
	if len(res.Intervals) != len(lines)-3 {
		t.Errorf("%d intervals, want %d", len(res.Intervals), len(lines)-3)
	}
}

// A JSON cut short inside the second of two documents keeps the first and
// reports where the second broke; cut inside the only one is an error.
func TestTruncatedJSON(t *testing.T) {
	data, err := os.ReadFile(testdata("randread.json"))
	if err != nil {
		t.Fatal(err)
	}
	two := append(append([]byte("fio-3.33\n"), data...), data[:len(data)/2]...)
	res := run(t, JSONFormat(), "two.json", bytes.NewReader(two), time.Time{}, source.Options{})
	if res.Err != nil || len(res.Intervals) != 1 {
		t.Fatalf("err %v, %d intervals; want the first document", res.Err, len(res.Intervals))
	}
	if got := res.Malformed(); len(got) != 1 || !strings.Contains(got[0], "invalid fio JSON") {
		t.Errorf("malformed %q", got)
	}
	one := run(t, JSONFormat(), "cut.json", bytes.NewReader(data[:len(data)/2]), time.Time{}, source.Options{})
	if one.Err == nil || !strings.HasPrefix(one.Err.Error(), "cut.json:") {
		t.Errorf("err %v, want cut.json:LINE: ...", one.Err)
	}
	empty := run(t, JSONFormat(), "empty", strings.NewReader(""), time.Time{}, source.Options{})
	if empty.Err != nil || len(empty.Intervals) != 0 {
		t.Errorf("empty input: err %v, %d intervals", empty.Err, len(empty.Intervals))
	}
}

// Synthetic (no fio run can produce it): a job entry of the wrong type and
// a bins key that is not a value fio prints are skipped and reported; the
// rest of the real document is kept. --event keeps one series.
func TestJSONBadEntries(t *testing.T) {
	data, err := os.ReadFile(testdata("randread.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), `"jobs" : [`, `"jobs" : [ 17,`, 1)
	s = strings.Replace(s, `"bins" : {`, `"bins" : { "130" : 5,`, 1)
	res := run(t, JSONFormat(), "bad.json", strings.NewReader(s), time.Time{}, source.Options{})
	if res.Err != nil || res.total("randread read clat").Count() != 12 {
		t.Fatalf("err %v; want the real job's 12 I/Os", res.Err)
	}
	got := res.Malformed()
	if len(got) != 2 || !strings.Contains(got[0], "job entry skipped") || !strings.Contains(got[1], "130 ns is not the value of a fio bin") {
		t.Errorf("malformed %q", got)
	}
	none := run(t, JSONFormat(), "x.json", strings.NewReader(string(data)), time.Time{}, source.Options{Events: []string{"other"}})
	if none.Err != nil || len(none.Intervals) != 0 {
		t.Errorf("--event other: err %v, %d intervals", none.Err, len(none.Intervals))
	}
}

// --counts cumulative (synthetic: a log summed by a script): each line is
// the total so far, deltas are taken, and a count going back is a gap.
func TestHistLogCumulative(t *testing.T) {
	line := func(ms int, c0, c5 int) string {
		cols := make([]string, 32)
		cols[0], cols[1], cols[2] = strconv.Itoa(ms), "0", "4096"
		for i := 3; i < 32; i++ {
			cols[i] = "0"
		}
		cols[3], cols[8] = strconv.Itoa(c0), strconv.Itoa(c5)
		return strings.Join(cols, ", ") + "\n"
	}
	in := line(100, 1, 2) + line(200, 3, 2) + line(300, 0, 9) + line(400, 1, 10)
	res := run(t, HistLogFormat(), "cum.log", strings.NewReader(in), time.Time{}, source.Options{Counts: source.CountsCumulative})
	if res.Err != nil || len(res.Intervals) != 4 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	want := []float64{3, 2, -1, 2} // -1: gap
	for i, iv := range res.Intervals {
		if want[i] < 0 {
			if !iv.Gap {
				t.Errorf("interval %d: not a gap after counts went back", i)
			}
			continue
		}
		if got := eventCount(iv); got != want[i] || iv.Gap {
			t.Errorf("interval %d: %.0f I/Os gap %v, want %.0f", i, got, iv.Gap, want[i])
		}
	}
}

// TestHistLogSameMillisecond: fio's log thread, late under load, wrote two
// windows of one direction in one millisecond (seen in a real run at load
// 7): both are kept, the second 1 ms later, with a warning.
func TestHistLogSameMillisecond(t *testing.T) {
	line := func(ms, c0 int) string {
		cols := make([]string, 32)
		cols[0], cols[1], cols[2] = strconv.Itoa(ms), "0", "4096"
		for i := 3; i < 32; i++ {
			cols[i] = "0"
		}
		cols[3] = strconv.Itoa(c0)
		return strings.Join(cols, ", ") + "\n"
	}
	in := line(302, 1) + line(604, 2) + line(604, 4) + line(906, 8)
	res := run(t, HistLogFormat(), "late.log", strings.NewReader(in), time.Time{}, source.Options{})
	if res.Err != nil || len(res.Malformed()) != 0 || len(res.Intervals) != 4 {
		t.Fatalf("err %v, malformed %q, %d intervals", res.Err, res.Malformed(), len(res.Intervals))
	}
	total := 0.0
	for _, iv := range res.Intervals {
		total += eventCount(iv)
	}
	if total != 15 {
		t.Errorf("%g I/Os, want all 15", total)
	}
}
