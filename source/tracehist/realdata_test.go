package tracehist

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// The Debian-shipped example files mix prose with several captured runs;
// read whole, every table is found, the prose is chatter (never malformed)
// and the events add up to the count column read independently.
func TestExampleFilesWhole(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		want         float64 // events, checked against the raw text too
		prints       int
	}{
		{"bcc_biolatency_example.txt", "bcc", 6515, 8},
		{"bcc_ext4dist_example.txt", "bcc", 8973, 6},
		{"bcc_funclatency_example.txt", "bcc", 2345412, 9},
		{"bpftrace_biolatency_example.txt", "bpftrace", 883, 1},
		{"bpftrace_xfsdist_example.txt", "bpftrace", 4096, 1},
		{"bpftrace_runqlat_example.txt", "bpftrace", 2112, 4},
		{"perftools_iolatency_example.txt", "iolatency", 67198, 27},
	} {
		t.Run(tc.file, func(t *testing.T) {
			text := readTestdata(t, tc.file)
			res := runString(t, tc.format, text, source.Options{})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if m := res.malformed(); len(m) > 0 {
				t.Errorf("prose reported as malformed: %q", m)
			}
			if len(res.Intervals) != tc.prints {
				t.Errorf("%d intervals, want %d prints", len(res.Intervals), tc.prints)
			}
			re := map[string]*regexp.Regexp{"bcc": arrowRowRE, "iolatency": arrowRowRE, "bpftrace": bracketRowRE}[tc.format]
			if raw := sumColumn(re, text); raw != tc.want {
				t.Errorf("independent count of the rows: %g, want %g", raw, tc.want)
			}
			if got := res.total(); got != tc.want {
				t.Errorf("total %g events, want %g", got, tc.want)
			}
			// No time lines before the first print: relative time, 1 s apart.
			for i, iv := range res.Intervals {
				if !iv.Relative || iv.Duration != time.Second || !iv.Start.Equal(stream.RelativeStart.Add(time.Duration(i)*time.Second)) {
					t.Errorf("interval %d: %s +%s relative=%v", i, iv.Start, iv.Duration, iv.Relative)
				}
			}
			if w := res.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "no time lines in the output: prints are placed 1s apart in relative time") {
				t.Errorf("warnings %q", w)
			}
		})
	}
}

// biolatency -mT 1 5: five 1-second prints with time lines; the day comes
// from --date; the first window's length from the second time line.
func TestBCCBiolatencyTimestamps(t *testing.T) {
	run5 := section(t, readTestdata(t, "bcc_biolatency_example.txt"), "# ./biolatency -mT 1 5")
	day := time.Date(2016, 2, 9, 0, 0, 0, 0, time.UTC)
	res := runString(t, "bcc", run5, source.Options{Date: day, Location: time.UTC})
	if res.Err != nil || len(res.malformed()) > 0 || len(res.Diag.Warnings()) > 0 {
		t.Fatalf("err %v, malformed %q, warnings %q", res.Err, res.malformed(), res.Diag.Warnings())
	}
	wantCounts := []float64{103, 392, 381, 794, 596}
	if len(res.Intervals) != len(wantCounts) {
		t.Fatalf("%d intervals, want 5", len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		wantStart := time.Date(2016, 2, 9, 6, 20, 15+i, 0, time.UTC)
		if iv.Relative || !iv.Start.Equal(wantStart) || iv.Duration != time.Second {
			t.Errorf("interval %d: %s +%s relative=%v, want %s +1s", i, iv.Start, iv.Duration, iv.Relative, wantStart)
		}
		if len(iv.Series) != 1 || iv.Series[0].Key != (stream.Key{Event: "bcc"}) || iv.Series[0].Hist.Unit != hist.Millisecond {
			t.Fatalf("interval %d: series %+v", i, iv.Series)
		}
		if got := eventCount(iv); got != wantCounts[i] {
			t.Errorf("interval %d: %g events, want %g", i, got, wantCounts[i])
		}
	}
	// 06:20:16: bcc's "0 -> 1" row is [0, 2) ms (slot 1 holds 0 and 1),
	// "2 -> 3" is [2, 4): lower-bound power-of-two buckets.
	h := res.Intervals[0].Series[0].Hist
	want := "[0,2)=36 [2,4)=1 [4,8)=3 [8,16)=17 [16,32)=33 [32,64)=7 [64,128)=6"
	if got := bucketsOf(h); got != want {
		t.Errorf("buckets %s, want %s", got, want)
	}
	// Midpoints: 1 for [0,2), 1.5·N for [N, 2N).
	if wantSum := 36*1 + 1.5*(2*1+4*3+8*17+16*33+32*7+64*6); h.Sum != wantSum || h.SumExact {
		t.Errorf("sum %g ms (exact %v), want the midpoint estimate %g", h.Sum, h.SumExact, wantSum)
	}
}

// Without --date the day of time-only lines is the file's modification
// date.
func TestDayFromModTime(t *testing.T) {
	run5 := section(t, readTestdata(t, "bcc_biolatency_example.txt"), "# ./biolatency -mT 1 5")
	mod := time.Date(2021, 7, 1, 23, 0, 0, 0, time.UTC)
	src, err := BCCFormat().Open(source.Input{Name: "bio.txt", Reader: strings.NewReader(run5), Diag: input.NewDiagnostics(nil, 5), ModTime: mod},
		source.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	var first stream.Interval
	n := 0
	err = src.Run(t.Context(), func(iv stream.Interval) error {
		if n == 0 {
			first = iv
		}
		n++
		return nil
	})
	if err != nil || n != 5 || !first.End().Equal(time.Date(2021, 7, 1, 6, 20, 16, 0, time.UTC)) {
		t.Errorf("err %v, %d intervals, first ends %s", err, n, first.End())
	}
}

// biolatency -D and -F: one series per "disk = 'x'" / "flags = x" section.
func TestBCCPerKeySections(t *testing.T) {
	text := readTestdata(t, "bcc_biolatency_example.txt")
	res := runString(t, "bcc", section(t, text, "# ./biolatency -D"), source.Options{})
	if res.Err != nil || len(res.Intervals) != 1 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	var keys []string
	for _, s := range res.Intervals[0].Series {
		keys = append(keys, s.Key.Event)
		if s.Hist.Unit != hist.Microsecond || s.Key.Instance != "" {
			t.Errorf("%s: unit %s instance %q", s.Key, s.Hist.Unit, s.Key.Instance)
		}
	}
	if got := strings.Join(keys, ","); got != "xvdb,xvdc,xvda1" {
		t.Errorf("series %s", got)
	}
	xvdc := res.series(stream.Key{Event: "xvdc"})[0]
	if got, want := bucketsOf(xvdc), "[128,256)=1 [256,512)=38 [512,1024)=42 [1024,2048)=66 [2048,4096)=40 [4096,8192)=14"; got != want {
		t.Errorf("xvdc buckets %s, want %s", got, want)
	}

	res = runString(t, "bcc", section(t, text, "./biolatency.py -Fm"), source.Options{Events: []string{"Write", "Flush"}})
	if res.Err != nil || len(res.Intervals) != 1 || len(res.Intervals[0].Series) != 2 {
		t.Fatalf("err %v, intervals %+v", res.Err, res.Intervals)
	}
	if w := res.series(stream.Key{Event: "Write"}); len(w) != 1 || w[0].Count() != 103+106+130+79+5+1 {
		t.Errorf("Write series %v", w)
	}
	if f := res.series(stream.Key{Event: "Flush"}); len(f) != 1 || f[0].Count() != 2 {
		t.Errorf("Flush series %v", f)
	}
}

// ext4dist -m 1 5: "10:19:00:" time lines (with a colon), three sections
// per print.
func TestBCCExt4dist(t *testing.T) {
	run := section(t, readTestdata(t, "bcc_ext4dist_example.txt"), "# ./ext4dist -m 1 5")
	res := runString(t, "bcc", run, source.Options{Date: time.Date(2016, 2, 12, 0, 0, 0, 0, time.UTC), Location: time.UTC})
	if res.Err != nil || len(res.Intervals) != 5 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		if want := time.Date(2016, 2, 12, 10, 19, i, 0, time.UTC); !iv.End().Equal(want) {
			t.Errorf("interval %d ends %s, want %s", i, iv.End(), want)
		}
	}
	reads := res.series(stream.Key{Event: "read"})
	wantReads := []float64{623, 634, 732, 625, 816}
	for i, h := range reads {
		if h.Count() != wantReads[i] || h.Unit != hist.Millisecond {
			t.Errorf("read %d: %g events in %s, want %g ms", i, h.Count(), h.Unit, wantReads[i])
		}
	}
	if got := bucketsOf(res.series(stream.Key{Event: "write"})[2]); got != "[0,2)=19 [2,4)=1" {
		t.Errorf("third write print %s", got)
	}
	if opens := res.series(stream.Key{Event: "open"}); len(opens) != 5 || opens[4].Count() != 427 {
		t.Errorf("open series %d prints", len(opens))
	}
}

// funclatency -mTi 5: 5-second windows from the time lines; the last one
// (after ^C) is 2 s. Counts equal the tool's own "count:" lines.
func TestBCCFunclatencyInterval(t *testing.T) {
	run := section(t, readTestdata(t, "bcc_funclatency_example.txt"), "# ./funclatency -mTi 5 vfs_read")
	res := runString(t, "bcc", run, source.Options{Date: time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC), Location: time.UTC})
	if res.Err != nil || len(res.malformed()) > 0 || len(res.Intervals) != 4 {
		t.Fatalf("err %v, malformed %q, %d intervals", res.Err, res.malformed(), len(res.Intervals))
	}
	wantDur := []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second, 2 * time.Second}
	wantCount := []float64{1521, 1282, 1303, 251} // the "avg = ..., count: N" lines
	for i, iv := range res.Intervals {
		if iv.Duration != wantDur[i] || eventCount(iv) != wantCount[i] {
			t.Errorf("interval %d: %s with %g events, want %s with %g", i, iv.Duration, eventCount(iv), wantDur[i], wantCount[i])
		}
	}
	if s := res.Intervals[0].Start; !s.Equal(time.Date(2016, 1, 1, 20, 10, 3, 0, time.UTC)) {
		t.Errorf("first window starts %s, want 20:10:03 (one period before 20:10:08)", s)
	}
	// nsecs tables: the unit comes from the header word.
	res = runString(t, "bcc", section(t, readTestdata(t, "bcc_funclatency_example.txt"), "# ./funclatency do_sys_open"), source.Options{})
	if h := res.Intervals[0].Series[0].Hist; h.Unit != hist.Nanosecond || h.Count() != 476 {
		t.Errorf("do_sys_open: %g events in %s, want 476 in ns", h.Count(), h.Unit)
	}
}

// bpftrace biolatency.bt: K suffixes, lower-bound power-of-two buckets with
// 1.5·N midpoints, the unit from the map name @usecs.
func TestBpftraceBiolatency(t *testing.T) {
	text := readTestdata(t, "bpftrace_biolatency_example.txt")
	res := runString(t, "bpftrace", text, source.Options{})
	if res.Err != nil || len(res.Intervals) != 1 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	s := res.Intervals[0].Series
	if len(s) != 1 || s[0].Key != (stream.Key{Event: "@usecs"}) || s[0].Hist.Unit != hist.Microsecond {
		t.Fatalf("series %+v", s)
	}
	h := s[0].Hist
	want := "[256,512)=2 [512,1024)=10 [1024,2048)=426 [2048,4096)=230 [4096,8192)=9 [8192,16384)=128 [16384,32768)=68 [131072,262144)=10"
	if got := bucketsOf(h); got != want {
		t.Errorf("buckets %s\nwant %s", got, want)
	}
	wantSum := 1.5 * (256*2 + 512*10 + 1024*426 + 2048*230 + 4096*9 + 8192*128 + 16384*68 + 131072*10)
	if h.Sum != wantSum {
		t.Errorf("sum %g, want %g (1.5·N per event)", h.Sum, wantSum)
	}
	if h.Scale != 0 || h.IsCustom() {
		t.Errorf("scale %d custom %v: want the power-of-two grid", h.Scale, h.IsCustom())
	}
}

// xfsdist.bt: a keyed map gives one series per key (the key as instance);
// "[1]" is [1, 2).
func TestBpftraceKeyedMap(t *testing.T) {
	res := runString(t, "bpftrace", readTestdata(t, "bpftrace_xfsdist_example.txt"), source.Options{})
	if res.Err != nil || len(res.Intervals) != 1 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	want := map[string]string{
		"xfs_file_write_iter": "[8,16)=1 [16,32)=2",
		"xfs_file_open":       "[1,2)=1819 [2,4)=272 [8,16)=9 [16,32)=7",
	}
	for inst, buckets := range want {
		hs := res.series(stream.Key{Event: "@us", Instance: inst})
		if len(hs) != 1 || bucketsOf(hs[0]) != buckets || hs[0].Unit != hist.Microsecond {
			t.Errorf("@us[%s]: %v", inst, hs)
			continue
		}
	}
	if r := res.series(stream.Key{Event: "@us", Instance: "xfs_file_read_iter"}); len(r) != 1 || r[0].Count() != 1986 {
		t.Errorf("read_iter %v", r)
	}
}

// runqlat.bt: "[0]" is [0, 1); four runs of the same map are four prints.
func TestBpftraceZeroRow(t *testing.T) {
	res := runString(t, "bpftrace", readTestdata(t, "bpftrace_runqlat_example.txt"), source.Options{})
	hs := res.series(stream.Key{Event: "@usecs"})
	if len(hs) != 4 {
		t.Fatalf("%d prints of @usecs", len(hs))
	}
	if hs[0].ZeroCount != 1 || hs[0].ZeroPow != 0 || !strings.HasPrefix(bucketsOf(hs[0]), "[0,1)=1 [1,2)=11 [2,4)=16 ") {
		t.Errorf("first print %s", bucketsOf(hs[0]))
	}
}

// perf-tools iolatency: ">=(ms) .. <(ms)" rows: "0 -> 1" is [0, 1) ms.
func TestIolatency(t *testing.T) {
	text := readTestdata(t, "perftools_iolatency_example.txt")
	res := runString(t, "iolatency", section(t, text, "# ./iolatency 5 3"), source.Options{Interval: 5 * time.Second})
	if res.Err != nil || len(res.Intervals) != 3 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	h := res.Intervals[0].Series[0].Hist
	want := "[0,1)=2809 [1,2)=32 [2,4)=14 [4,8)=6 [8,16)=7 [16,32)=14 [32,64)=39 [64,128)=1556"
	if got := bucketsOf(h); got != want || h.Unit != hist.Millisecond {
		t.Errorf("buckets %s in %s\nwant %s", got, h.Unit, want)
	}
	if wantSum := 2809*0.5 + 1.5*(32+2*14+4*6+8*7+16*14+32*39+64*1556); h.Sum != wantSum {
		t.Errorf("sum %g, want %g", h.Sum, wantSum)
	}
	for i, iv := range res.Intervals {
		if iv.Duration != 5*time.Second || !iv.Relative {
			t.Errorf("interval %d: %s relative %v, want --interval 5s", i, iv.Duration, iv.Relative)
		}
	}
}

// lastRecordSum adds the count column of a PyLatencyMap file's last record:
// what a cumulative aggregation holds at the end.
func lastRecordSum(text string) float64 {
	recs := strings.Split(text, "<begin record>")
	return sumColumn(valueRowRE, recs[len(recs)-1])
}

// The real DTrace sample read as DTrace output (its record lines are
// chatter): one print per tick-10s line, 10 s apart in relative time,
// cumulative counts whose first print counts from zero.
func TestDTraceRealSampleAsDTrace(t *testing.T) {
	text := readShared(t, "pylatencymap/test_DTrace_data.txt")
	res := runString(t, "dtrace", text, source.Options{})
	if res.Err != nil || len(res.malformed()) > 0 {
		t.Fatalf("err %v, malformed %q", res.Err, res.malformed())
	}
	if len(res.Intervals) != 31 {
		t.Fatalf("%d intervals, want 31 (one per tick)", len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		if iv.Gap || !iv.Relative || iv.Duration != 10*time.Second || !iv.Start.Equal(stream.RelativeStart.Add(time.Duration(i)*10*time.Second)) {
			t.Errorf("interval %d: %s +%s gap %v relative %v", i, iv.Start, iv.Duration, iv.Gap, iv.Relative)
		}
	}
	if want := lastRecordSum(text); res.total() != want || want != 1284306 {
		t.Errorf("total %g, want %g (the last print's counts) = 1284306", res.total(), want)
	}
	first := res.Intervals[0].Series[0]
	if first.Key != (stream.Key{Event: "myhistogram"}) || first.Hist.Unit != hist.Nanosecond {
		t.Errorf("first series %s in %s", first.Key, first.Hist.Unit)
	}
	want := "[16384,32768)=2 [131072,262144)=10 [262144,524288)=12889 [524288,1.048576e+06)=23806 [1.048576e+06,2.097152e+06)=5253 " +
		"[2.097152e+06,4.194304e+06)=380 [4.194304e+06,8.388608e+06)=45 [8.388608e+06,1.6777216e+07)=27 [1.6777216e+07,3.3554432e+07)=4"
	if got := bucketsOf(first.Hist); got != want {
		t.Errorf("first print %s\nwant %s", got, want)
	}
	// Second print minus first: 65536 went 0 → 1, 131072 10 → 21.
	second := res.Intervals[1].Series[0].Hist
	if got := bucketsOf(second); !strings.HasPrefix(got, "[65536,131072)=1 [131072,262144)=11 [262144,524288)=11702 ") {
		t.Errorf("second print's delta %s", got)
	}
	// --counts interval reads every print whole instead.
	res = runString(t, "dtrace", text, source.Options{Counts: source.CountsInterval})
	if got := res.Intervals[1].Series[0].Hist.Count(); got != 2+1+21+24591+48677+10245+650+97+42+5+1 {
		t.Errorf("second print read per interval: %g events", got)
	}
}

// The real SystemTap sample read as SystemTap output: 48 cumulative prints.
func TestSystemTapRealSampleAsSystemTap(t *testing.T) {
	text := readShared(t, "pylatencymap/test_SystemTap_data.txt")
	res := runString(t, "systemtap", text, source.Options{Interval: 3 * time.Second})
	if res.Err != nil || len(res.malformed()) > 0 || len(res.Intervals) != 48 {
		t.Fatalf("err %v, malformed %q, %d intervals", res.Err, res.malformed(), len(res.Intervals))
	}
	if want := lastRecordSum(text); res.total() != want {
		t.Errorf("total %g, want %g", res.total(), want)
	}
	h := res.Intervals[0].Series[0].Hist
	if h.Unit != hist.Microsecond || res.Intervals[0].Series[0].Key.Event != "systemtap" || h.Count() != 1611 {
		t.Errorf("first print: %g events in %s", h.Count(), h.Unit)
	}
	for _, iv := range res.Intervals {
		if iv.Duration != 3*time.Second || iv.Gap {
			t.Fatalf("interval %s +%s gap %v", iv.Start, iv.Duration, iv.Gap)
		}
	}
	if math.Abs(res.Intervals[47].End().Sub(stream.RelativeStart).Seconds()-144) > 1e-9 {
		t.Errorf("last end %s", res.Intervals[47].End())
	}
}
