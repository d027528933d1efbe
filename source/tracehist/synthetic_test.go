package tracehist

// Synthetic fixtures: hand-built outputs for what no real sample here shows
// (DTrace keys and lquantize, SystemTap @hist_linear, bpftrace multi-key
// maps and lhist, counter resets). Each follows the tool's documented
// printout exactly: DTrace printa() of quantize/lquantize/llquantize (%16s
// value column, 40-character '@' bar, count), SystemTap's print of
// @hist_log/@hist_linear (value column, '|', 50-character bar, count, "~"
// for elided zero rows), bpftrace's map print ("@name[key]:" then
// "[lo, hi)  count |bar|").

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// SYNTHETIC: a DTrace script with two keys (a disk, and execname + pid),
// printed by printa() in a tick-10s probe after printf("%Y\n",
// walltimestamp); cumulative like every DTrace aggregation.
const dtraceKeyed = `dtrace: script 'iolat.d' matched 3 probes
CPU     ID                    FUNCTION:NAME
  1  72639                        :tick-10s 
2024 Mar  5 23:59:50

  sda                                               
           value  ------------- Distribution ------------- count    
            4096 |                                         0        
            8192 |@@@@@@@@@@                               10       
           16384 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@           30       
           32768 |                                         0        

  oracle                                              12345
           value  ------------- Distribution ------------- count    
               0 |@@@@@@@@@@@@@@@@@@@@                     2        
               1 |                                         0        
               2 |@@@@@@@@@@@@@@@@@@@@                     2        
               4 |                                         0        

  1  72639                        :tick-10s 
2024 Mar  6 00:00:00

  sda                                               
           value  ------------- Distribution ------------- count    
            4096 |                                         0        
            8192 |@@@@@@@@@@                               15       
           16384 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@           30       
           32768 |@                                        1        
           65536 |                                         0        

  oracle                                              12345
           value  ------------- Distribution ------------- count    
               0 |@@@@@@@@@@@@@@@@@@@@                     2        
               1 |                                         0        
               2 |@@@@@@@@@@@@@@@@@@@@                     2        
               4 |                                         0        

`

func TestDTraceKeys(t *testing.T) {
	res := runString(t, "dtrace", dtraceKeyed, source.Options{Location: time.UTC})
	if res.Err != nil || len(res.malformed()) > 0 || len(res.Diag.Warnings()) > 0 {
		t.Fatalf("err %v, malformed %q, warnings %q", res.Err, res.malformed(), res.Diag.Warnings())
	}
	if len(res.Intervals) != 2 {
		t.Fatalf("%d intervals, want 2", len(res.Intervals))
	}
	// Wall-clock ends from the %Y lines (across midnight); the first
	// window's length from the tick-10s probe name.
	for i, want := range []time.Time{time.Date(2024, 3, 5, 23, 59, 40, 0, time.UTC), time.Date(2024, 3, 5, 23, 59, 50, 0, time.UTC)} {
		if iv := res.Intervals[i]; iv.Relative || !iv.Start.Equal(want) || iv.Duration != 10*time.Second {
			t.Errorf("interval %d: %s +%s relative %v, want %s +10s", i, iv.Start, iv.Duration, iv.Relative, want)
		}
	}
	sda := res.series(stream.Key{Event: "sda"})
	if len(sda) != 2 || sda[0].Unit != hist.Nanosecond {
		t.Fatalf("sda: %v", sda)
	}
	// First print from zero, second the growth: 5 more in 8192, 1 in 32768.
	if got := bucketsOf(sda[0]); got != "[8192,16384)=10 [16384,32768)=30" {
		t.Errorf("sda first %s", got)
	}
	if got := bucketsOf(sda[1]); got != "[8192,16384)=5 [32768,65536)=1" {
		t.Errorf("sda second %s", got)
	}
	if want := 1.5 * (8192*5 + 32768); sda[1].Sum != want {
		t.Errorf("sda second sum %g, want %g", sda[1].Sum, want)
	}
	// "oracle  12345": the key columns joined by one space; value 0 is [0, 1).
	ora := res.series(stream.Key{Event: "oracle 12345"})
	if len(ora) != 1 || bucketsOf(ora[0]) != "[0,1)=2 [2,4)=2" {
		t.Errorf("oracle 12345: %v (no growth in the second print, so no series there)", ora)
	}
	// --unit changes the unit DTrace does not print; --event picks a key.
	res = runString(t, "dtrace", dtraceKeyed, source.Options{Unit: hist.Microsecond, Events: []string{"oracle 12345"}})
	if len(res.Intervals) != 2 || len(res.Intervals[0].Series) != 1 || res.Intervals[0].Series[0].Hist.Unit != hist.Microsecond {
		t.Errorf("--unit us --event: %+v", res.Intervals)
	}
}

// SYNTHETIC: lquantize(x, 0, 100, 10) with its "< 0" and ">= 100" rows and
// an llquantize(x, 10, 0, 2, 10) table, printed once (dtrace -q, END).
const dtraceLinear = `
           value  ------------- Distribution ------------- count    
             < 0 |@@@@                                     3        
               0 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@    30       
              10 |@@@                                      2        
              20 |                                         0        
          >= 100 |@                                        1        

  reads
           value  ------------- Distribution ------------- count    
             < 1 |                                         0        
               1 |@@@@@@@@@@                               4        
               2 |                                         0        
               3 |@@@@@                                    2        
               4 |                                         0        
               5 |                                         0        
               6 |                                         0        
               7 |                                         0        
               8 |                                         0        
               9 |                                         0        
              10 |@@@@@@@@@@@@@@@@@@@@@@@@@                10       
              20 |                                         0        
              30 |                                         0        
              40 |                                         0        
              50 |                                         0        
              60 |                                         0        
              70 |                                         0        
              80 |                                         0        
              90 |                                         0        
          >= 100 |                                         0        

`

func TestDTraceLquantize(t *testing.T) {
	res := runString(t, "dtrace", dtraceLinear, source.Options{Unit: hist.Millisecond})
	if res.Err != nil || len(res.malformed()) > 0 || len(res.Intervals) != 1 {
		t.Fatalf("err %v, malformed %q, %d intervals", res.Err, res.malformed(), len(res.Intervals))
	}
	lin := res.series(stream.Key{Event: "dtrace"})[0]
	// "< 0" counts negative values: dropped with a warning. ">= 100" is an
	// open top, read as [100, 200) and flagged.
	if !lin.IsCustom() || lin.Unit != hist.Millisecond {
		t.Fatalf("lquantize: custom %v unit %s", lin.IsCustom(), lin.Unit)
	}
	if got, want := bucketsOf(lin), "[0,10)=30 [10,20)=2 [100,200)=1"; got != want {
		t.Errorf("lquantize buckets %s, want %s", got, want)
	}
	if !lin.TopOpen || lin.Count() != 33 {
		t.Errorf("open top %v, count %g", lin.TopOpen, lin.Count())
	}
	if want := 30*5.0 + 2*15 + 1*150; lin.Sum != want {
		t.Errorf("sum %g, want %g (midpoints, open top at 1.5·100)", lin.Sum, want)
	}
	if w := res.Diag.Warnings(); len(w) != 2 || !strings.Contains(w[1], "line 2: 3 events in buckets below zero dropped") {
		t.Errorf("warnings %q", w)
	}
	// llquantize: the rows' own edges, one decade of step 1 then of 10.
	ll := res.series(stream.Key{Event: "reads"})[0]
	if got, want := bucketsOf(ll), "[1,2)=4 [3,4)=2 [10,20)=10"; got != want {
		t.Errorf("llquantize buckets %s, want %s", got, want)
	}
	if ll.Bounds[0] != 1 || ll.Bounds[len(ll.Bounds)-2] != 100 || !math.IsInf(ll.Bounds[len(ll.Bounds)-1], 1) {
		t.Errorf("llquantize edges %v", ll.Bounds)
	}
}

// SYNTHETIC: SystemTap @hist_linear(x, 0, 100, 10) and @hist_log with "~"
// lines eliding zero rows, printed every 5 s without time lines.
const stapLinear = `Tracing... Hit Ctrl-C to end.
value |-------------------------------------------------- count
    0 |@@@@@@@@@@                                         10
   10 |@@@@@                                               5
   20 |                                                    0
   30 |                                                    0
      ~
   70 |@@                                                  2
   80 |                                                    0
  >80 |@                                                   1

value |-------------------------------------------------- count
    0 |                                                    0
    1 |@@@@                                                4
    2 |                                                    0
      ~
 1024 |@@@                                                 3
 2048 |                                                    0

`

func TestSystemTapLinearAndElision(t *testing.T) {
	// Two different tables in one print share the event name "systemtap",
	// so they are two prints; read per interval, 5 s apart.
	res := runString(t, "systemtap", stapLinear, source.Options{Counts: source.CountsInterval, Interval: 5 * time.Second})
	if res.Err != nil || len(res.malformed()) > 0 || len(res.Intervals) != 2 {
		t.Fatalf("err %v, malformed %q, %d intervals", res.Err, res.malformed(), len(res.Intervals))
	}
	lin := res.Intervals[0].Series[0].Hist
	// After the "~" the rows keep the step of 10: 70 is [70, 80), not
	// [30, 70); ">80" is the open top after the last regular row.
	if got, want := bucketsOf(lin), "[0,10)=10 [10,20)=5 [70,80)=2 [90,180)=1"; got != want {
		t.Errorf("@hist_linear buckets %s, want %s", got, want)
	}
	if lin.Unit != hist.Microsecond || !lin.IsCustom() {
		t.Errorf("unit %s custom %v", lin.Unit, lin.IsCustom())
	}
	lg := res.Intervals[1].Series[0].Hist
	if got, want := bucketsOf(lg), "[1,2)=4 [1024,2048)=3"; got != want || lg.IsCustom() {
		t.Errorf("@hist_log buckets %s (custom %v), want %s on the grid", got, lg.IsCustom(), want)
	}
	if res.Intervals[1].Duration != 5*time.Second || !res.Intervals[1].Start.Equal(stream.RelativeStart.Add(5*time.Second)) {
		t.Errorf("second print at %s +%s", res.Intervals[1].Start, res.Intervals[1].Duration)
	}
}

// SYNTHETIC: a bpftrace script printing a two-key hist() map and an lhist()
// map with time() every second without clear(): cumulative counts, run
// across midnight.
const bpftraceCumulative = `Attaching 4 probes...
23:59:59
@lat_ns[8, R]: 
[1K, 2K)               3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[2K, 4K)               1 |@@@@@@@@@@@@@@@@@                                   |

@lat_ns[8, W]: 
[1M, 2M)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@size: 
(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[0, 10)                2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[10, 20)               0 |                                                    |
[20, 30)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |

00:00:00
@lat_ns[8, R]: 
[1K, 2K)               5 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[2K, 4K)               1 |@@@@@@@@@@                                          |

@lat_ns[8, W]: 
[1M, 2M)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@size: 
(..., 0)               1 |@@@@@@@@@@@@@                                       |
[0, 10)                2 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[10, 20)               0 |                                                    |
[20, 30)               1 |@@@@@@@@@@@@@                                       |
[100, ...)             4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

00:00:01
@lat_ns[8, R]: 
[1K, 2K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

`

func TestBpftraceCumulativeAndReset(t *testing.T) {
	day := time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)
	res := runString(t, "bpftrace", bpftraceCumulative, source.Options{Counts: source.CountsCumulative, Date: day, Unit: hist.Millisecond, Location: time.UTC})
	if res.Err != nil || len(res.malformed()) > 0 {
		t.Fatalf("err %v, malformed %q", res.Err, res.malformed())
	}
	if len(res.Intervals) != 3 {
		t.Fatalf("%d intervals, want 3", len(res.Intervals))
	}
	ends := []time.Time{time.Date(2024, 3, 5, 23, 59, 59, 0, time.UTC), time.Date(2024, 3, 6, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 6, 0, 0, 1, 0, time.UTC)}
	for i, iv := range res.Intervals {
		if !iv.End().Equal(ends[i]) || iv.Duration != time.Second {
			t.Errorf("interval %d ends %s after %s, want %s after 1s", i, iv.End(), iv.Duration, ends[i])
		}
	}
	// Print 1 from zero: map keys are instances, @lat_ns is in ns (the
	// name wins over --unit), @size takes --unit.
	r := stream.Key{Event: "@lat_ns", Instance: "8, R"}
	if hs := res.series(r); len(hs) != 2 || hs[0].Unit != hist.Nanosecond || bucketsOf(hs[0]) != "[1024,2048)=3 [2048,4096)=1" || bucketsOf(hs[1]) != "[1024,2048)=2" {
		t.Errorf("@lat_ns[8, R]: %v", hs)
	}
	if hs := res.series(stream.Key{Event: "@lat_ns", Instance: "8, W"}); len(hs) != 1 || bucketsOf(hs[0]) != "[1.048576e+06,2.097152e+06)=2" {
		t.Errorf("@lat_ns[8, W]: %v (unchanged in print 2: no series)", hs)
	}
	size := res.series(stream.Key{Event: "@size"})
	if len(size) != 2 || size[0].Unit != hist.Millisecond || !size[0].IsCustom() {
		t.Fatalf("@size: %v", size)
	}
	if got := bucketsOf(size[0]); got != "[0,10)=2 [20,30)=1" {
		t.Errorf("@size first %s", got)
	}
	// Print 2 adds the "[100, ...)" row: 4 events in the open top, on a
	// layout that holds both prints' edges.
	if got := bucketsOf(size[1]); got != "[100,200)=4" || !size[1].TopOpen {
		t.Errorf("@size second %s", got)
	}
	// Print 3: @lat_ns[8, R] went down from 6 to 1: a restart, drawn as a gap.
	if iv := res.Intervals[2]; !iv.Gap || len(iv.Series) != 0 {
		t.Errorf("third interval gap %v series %d", iv.Gap, len(iv.Series))
	}
	w := strings.Join(res.Diag.Warnings(), "\n")
	for _, want := range []string{"synthetic.txt: line 31: counts went down", "1 events in buckets below zero dropped"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", w, want)
		}
	}

	// Per interval (bpftrace's default): every print whole, no gap.
	res = runString(t, "bpftrace", bpftraceCumulative, source.Options{Date: day, Unit: hist.Millisecond, Location: time.UTC})
	if len(res.Intervals) != 3 || res.Intervals[2].Gap || eventCount(res.Intervals[1]) != 6+2+3+4 || eventCount(res.Intervals[2]) != 1 {
		t.Errorf("per interval: %d intervals", len(res.Intervals))
	}
}

// Bad rows inside a table are reported with file:line and, per interval,
// the rest of the table is kept; in cumulative mode the damaged table waits
// for the next print. A table header without rows is nothing.
func TestMalformedRows(t *testing.T) {
	in := "     usecs               : count     distribution\n" +
		"         0 -> 1          : 3        |****                 |\n" +
		"         2 -> 3          : x        |                     |\n" +
		"         4 -> 7          : 2        |***                  \n" +
		"         9 -> 8          : 2        |***                  |\n" +
		"         8 -> 15         : 5        |*****                |\n" +
		"\n" +
		"     usecs               : count     distribution\n"
	res := runString(t, "bcc", in, source.Options{})
	want := []string{
		`synthetic.txt:3: row count "x" is not a non-negative integer`,
		`synthetic.txt:4: row bar is not closed by '|'`,
		`synthetic.txt:5: row range "9 -> 8" is not "a -> b"`,
	}
	if got := res.malformed(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("malformed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Intervals) != 2 || bucketsOf(res.Intervals[0].Series[0].Hist) != "[0,2)=3 [8,16)=5" || len(res.Intervals[1].Series) != 0 {
		t.Errorf("intervals %+v", res.Intervals)
	}

	dt := "           value  ------------- Distribution ------------- count    \n" +
		"            1024 |@@@@                                     4        \n" +
		"            2048 |@@@@  oops\n" +
		"            4096 |                                         0        \n" +
		"\n" +
		"           value  ------------- Distribution ------------- count    \n" +
		"            1024 |@@@@                                     4        \n" +
		"            2048 |@@@@                                     6        \n" +
		"            4096 |                                         0        \n"
	res = runString(t, "dtrace", dt, source.Options{})
	if got := res.malformed(); len(got) != 1 || got[0] != `synthetic.txt:3: row count "oops" is not a non-negative integer` {
		t.Errorf("malformed %q", got)
	}
	// The damaged first print is skipped; the second counts from zero.
	if len(res.Intervals) != 2 || len(res.Intervals[0].Series) != 0 || eventCount(res.Intervals[1]) != 10 {
		t.Errorf("intervals %+v", res.Intervals)
	}
}

// A time line that does not advance (two prints in one second) is placed
// one period later with a warning, never overlapping.
func TestTimeNotAdvancing(t *testing.T) {
	table := "     msecs               : count     distribution\n         0 -> 1          : 1        |*|\n\n"
	in := "10:00:00\n" + table + "10:00:01\n" + table + "10:00:01\n" + table + "10:00:03\n" + table
	res := runString(t, "bcc", in, source.Options{Date: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), Location: time.UTC})
	if len(res.Intervals) != 4 {
		t.Fatalf("%d intervals", len(res.Intervals))
	}
	wantEnd := []int{0, 1, 2, 3}
	for i, iv := range res.Intervals {
		if want := time.Date(2024, 1, 2, 10, 0, wantEnd[i], 0, time.UTC); !iv.End().Equal(want) {
			t.Errorf("interval %d ends %s, want %s", i, iv.End(), want)
		}
	}
	if w := res.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "line 9: time 10:00:01 does not advance") {
		t.Errorf("warnings %q", w)
	}
}

// An empty print (a time line and no table: no events in that second) is
// an observed idle window, not a gap.
func TestEmptyPrint(t *testing.T) {
	table := "@usecs:\n[4, 8)    2 |@@|\n\n"
	in := "10:00:00\n" + table + "10:00:01\n10:00:02\n" + table
	res := runString(t, "bpftrace", in, source.Options{Date: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), Location: time.UTC})
	if len(res.Intervals) != 3 || len(res.Intervals[1].Series) != 0 || res.Intervals[1].Gap || eventCount(res.Intervals[2]) != 2 {
		t.Errorf("intervals %+v", res.Intervals)
	}
}

// A map whose name says no unit takes --unit, else µs with a warning.
func TestBpftraceUnit(t *testing.T) {
	in := "@x:\n[4, 8)    2 |@@|\n\n"
	res := runString(t, "bpftrace", in, source.Options{})
	if h := res.Intervals[0].Series[0].Hist; h.Unit != hist.Microsecond {
		t.Errorf("unit %s", h.Unit)
	}
	if w := strings.Join(res.Diag.Warnings(), "\n"); !strings.Contains(w, "map @x names no unit") {
		t.Errorf("warnings %q", w)
	}
	res = runString(t, "bpftrace", in, source.Options{Unit: hist.Second})
	if h := res.Intervals[0].Series[0].Hist; h.Unit != hist.Second || strings.Contains(strings.Join(res.Diag.Warnings(), ""), "names no unit") {
		t.Errorf("unit %s, warnings %q", h.Unit, res.Diag.Warnings())
	}
}

// A bcc table of sizes is not a latency: skipped with a warning.
func TestBCCNonLatencyTable(t *testing.T) {
	in := "     kbytes          : count     distribution\n         0 -> 1      : 3        |****|\n\n"
	res := runString(t, "bcc", in, source.Options{})
	if len(res.Intervals) != 1 || len(res.Intervals[0].Series) != 0 {
		t.Errorf("intervals %+v", res.Intervals)
	}
	if w := strings.Join(res.Diag.Warnings(), "\n"); !strings.Contains(w, `"kbytes" is not a latency`) {
		t.Errorf("warnings %q", w)
	}
}

// Empty input is not an error and emits nothing.
func TestEmptyInput(t *testing.T) {
	for _, f := range Formats() {
		res := runString(t, f.Name, "", source.Options{})
		if res.Err != nil || len(res.Intervals) != 0 {
			t.Errorf("%s: err %v, %d intervals", f.Name, res.Err, len(res.Intervals))
		}
	}
}

// SYNTHETIC: bcc's print_linear_hist rows name one value each: [v, v+1).
func TestBCCLinearRows(t *testing.T) {
	in := "     msecs         : count     distribution\n" +
		"        3          : 2        |****                                    |\n" +
		"        4          : 0        |                                        |\n" +
		"        5          : 1        |**                                      |\n\n"
	res := runString(t, "bcc", in, source.Options{})
	h := res.Intervals[0].Series[0].Hist
	if got := bucketsOf(h); got != "[3,4)=2 [5,6)=1" || !h.IsCustom() || h.Sum != 2*3.5+5.5 {
		t.Errorf("buckets %s custom %v sum %g", got, h.IsCustom(), h.Sum)
	}
}

// DTrace tick-N probe names: DTrace's units, a bare number is a rate in Hz.
func TestTickPeriod(t *testing.T) {
	for rate, want := range map[string]time.Duration{
		"10s": 10 * time.Second, "1sec": time.Second, "500ms": 500 * time.Millisecond, "5": 200 * time.Millisecond,
		"100hz": 10 * time.Millisecond, "2min": 2 * time.Minute, "1d": 24 * time.Hour, "x": 0, "10parsecs": 0, "0s": 0,
	} {
		if got := tickPeriod(rate); got != want {
			t.Errorf("tick-%s: %s, want %s", rate, got, want)
		}
	}
}
