package pylatencymap

// The inputs in this file are SYNTHETIC: built here to hit cases the real
// sample files do not contain (wraps, resets, truncation, bad lines...).

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

const (
	oracleLabel  = "label, db file sequential read from gv$event_histogram"
	neutralLabel = "label, Disk reads"
	ms           = "latencyunit, millisec"
	oracleDS     = "datasource, oracle"
)

func TestLabelKeepsCommasAndCase(t *testing.T) {
	in := rec("1000000", "Label,  Reads, Writes and MORE (Big DB)  ", ms, oracleDS, "4, 10") +
		rec("2000000", "LABEL, Reads, Writes and MORE (Big DB)", ms, oracleDS, "4, 15")
	res := runString(t, in, source.Options{})
	if res.Err != nil || len(res.Intervals) != 1 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	want := stream.Key{Event: "Reads, Writes and MORE (Big DB)"}
	if got := res.Intervals[0].Series[0].Key; got != want {
		t.Errorf("key %+v, want %+v", got, want)
	}
}

// Headers, keys and datasource values in any case; CRLF line endings.
func TestCaseInsensitiveKeysAndCRLF(t *testing.T) {
	in := rec("1000000", "LABEL, X", "LatencyUnit, MicroSec", "DataSource, SystemTap", "8, 1") +
		rec("3000000", "LABEL, X", "LatencyUnit, MicroSec", "DataSource, SystemTap", "8, 3")
	in = strings.ReplaceAll(in, "\n", "\r\n")
	res := runString(t, in, source.Options{})
	if res.Err != nil || len(res.Intervals) != 1 || len(res.Malformed()) > 0 {
		t.Fatalf("err %v, %d intervals, malformed %q", res.Err, len(res.Intervals), res.Malformed())
	}
	iv := res.Intervals[0]
	h := iv.Series[0].Hist
	b := h.Buckets()
	if iv.Duration != 2*time.Second || h.Unit != hist.Microsecond || len(b) != 1 || b[0].Lower != 8 || b[0].Count != 2 {
		t.Errorf("got %s, unit %s, buckets %+v; want 2s, us, [8,16) x2 (lower bound)", iv.Duration, h.Unit, b)
	}
}

func TestMidnightWrap(t *testing.T) {
	const before, after = "86398000000", "1000000" // 23:59:58 and 00:00:01 in µs since midnight
	t.Run("with dates", func(t *testing.T) {
		in := rec(before+", 26-AUG-13 11.59.58.000000 PM +02:00", oracleLabel, ms, "4, 10") +
			rec(after+", 27-AUG-13 12.00.01.000000 AM +02:00", oracleLabel, ms, "4, 12")
		res := runString(t, in, source.Options{})
		if res.Err != nil || len(res.Intervals) != 1 {
			t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
		}
		iv := res.Intervals[0]
		want := time.Date(2013, 8, 26, 21, 59, 58, 0, time.UTC)
		if iv.Duration != 3*time.Second || !iv.Start.Equal(want) || iv.Relative || iv.Gap {
			t.Errorf("interval %s for %s (relative %v gap %v), want %s for 3s", iv.Start, iv.Duration, iv.Relative, iv.Gap, want)
		}
		if eventCount(iv) != 2 {
			t.Errorf("%g events, want 2", eventCount(iv))
		}
	})
	t.Run("without dates", func(t *testing.T) {
		in := rec(before, oracleLabel, ms, "4, 10") + rec(after, oracleLabel, ms, "4, 12")
		res := runString(t, in, source.Options{})
		if res.Err != nil || len(res.Intervals) != 1 {
			t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
		}
		iv := res.Intervals[0]
		if iv.Duration != 3*time.Second || !iv.Relative || !iv.Start.Equal(stream.RelativeStart) {
			t.Errorf("interval %s for %s relative %v, want relative start for 3s", iv.Start, iv.Duration, iv.Relative)
		}
	})
	t.Run("not a since-midnight clock", func(t *testing.T) {
		// µs since 2010 (AWR) going backwards is no wrap: no usable
		// length, so a warning and a new baseline.
		in := rec("116000000000000", oracleLabel, ms, "4, 10") +
			rec("115000000000000", oracleLabel, ms, "4, 12") +
			rec("115000003000000", oracleLabel, ms, "4, 13")
		res := runString(t, in, source.Options{})
		if res.Err != nil || len(res.Intervals) != 1 {
			t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
		}
		if iv := res.Intervals[0]; iv.Duration != 3*time.Second || eventCount(iv) != 1 {
			t.Errorf("interval of %s with %g events, want 3s with 1", iv.Duration, eventCount(iv))
		}
		if w := res.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "line 7: cannot tell how long") {
			t.Errorf("warnings %q", w)
		}
	})
}

// An instance restart resets the cumulative counters: a Gap, then the next
// delta from the new baseline, never negative counts.
func TestCounterReset(t *testing.T) {
	in := rec("1000000", oracleLabel, ms, oracleDS, "1, 100", "2, 50") +
		rec("2000000", oracleLabel, ms, oracleDS, "1, 110", "2, 55") +
		rec("3000000", oracleLabel, ms, oracleDS, "1, 3", "2, 1") + // restarted
		rec("4000000", oracleLabel, ms, oracleDS, "1, 7", "2, 2")
	res := runString(t, in, source.Options{})
	if res.Err != nil || len(res.Intervals) != 3 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	wantGap := []bool{false, true, false}
	wantEvents := []float64{15, 0, 5}
	for i, iv := range res.Intervals {
		if iv.Gap != wantGap[i] || eventCount(iv) != wantEvents[i] || iv.Duration != time.Second {
			t.Errorf("interval %d: gap %v, %g events, %s; want gap %v, %g events, 1s",
				i, iv.Gap, eventCount(iv), iv.Duration, wantGap[i], wantEvents[i])
		}
	}
}

func TestTruncatedRecords(t *testing.T) {
	good := rec("1000000", oracleLabel, ms, "1, 1") + rec("2000000", oracleLabel, ms, "1, 2")
	t.Run("at end of input", func(t *testing.T) {
		in := good + "<begin record>\ntimestamp, microsec, 3000000\n" + oracleLabel + "\n1, 2"
		res := runString(t, in, source.Options{})
		if res.Err != nil || len(res.Intervals) != 1 {
			t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
		}
		got := res.Malformed()
		if len(got) != 1 || !strings.HasPrefix(got[0], "13: record is not closed by <end record>") {
			t.Errorf("malformed %q, want the record at line 13 reported", got)
		}
	})
	t.Run("begin inside a record", func(t *testing.T) {
		in := good + "<begin record>\ntimestamp, microsec, 3000000\n1, 5\n" +
			rec("4000000", oracleLabel, ms, "1, 6")
		res := runString(t, in, source.Options{})
		if res.Err != nil || len(res.Intervals) != 2 {
			t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
		}
		if iv := res.Intervals[1]; iv.Duration != 2*time.Second || eventCount(iv) != 4 {
			t.Errorf("second interval %s with %g events, want 2s with 4 (the dropped record is skipped)", iv.Duration, eventCount(iv))
		}
		got := res.Malformed()
		if len(got) != 1 || !strings.HasPrefix(got[0], "13: record has no <end record> before the next <begin record>") {
			t.Errorf("malformed %q", got)
		}
	})
}

func TestMalformedLines(t *testing.T) {
	in := "header chatter, not in a record\n" + // line 1: ignored, not malformed
		rec("1000000", oracleLabel, ms, oracleDS, "1, 10", "2, 20") + // lines 2-9
		rec("2000000", oracleLabel, ms, oracleDS,
			"1, 15",                   // line 15
			"3, 7",                    // line 16: not a power of two (skipped, harmless)
			"2, x",                    // line 17: bad count: bucket 2 goes missing
			"latencyunit, fortnights", // line 18: unknown unit
		) + // lines 10-19: bucket 2 went back to 0, so the whole record is skipped
		rec("3000000", oracleLabel, ms, oracleDS, "1, 20", "2, 30", "hello") + // lines 20-28: "hello" could hide a bucket, but no counter went back: kept
		rec("4000000", oracleLabel, ms, oracleDS, "1, 21", "2, 30", "1.5, 2", "8, -3") // lines 29-38: kept likewise
	res := runString(t, in, source.Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := []string{
		`16: bucket value 3 is not a power of two`,
		`17: count "x" is not a non-negative integer`,
		`18: unknown latency unit "fortnights" (want ns, us, ms or s)`,
		`27: not a "<power-of-2 value>, <count>" data line`,
		`36: bucket value 1.5 is not a power of two`,
		`37: count "-3" is not a non-negative integer`,
	}
	if got := res.Malformed(); !slices.Equal(got, want) {
		t.Errorf("malformed:\n got %q\nwant %q", got, want)
	}
	if got := res.Diag.Count("synthetic.txt"); got != len(want) {
		t.Errorf("count %d, want %d", got, len(want))
	}
	if w := res.Diag.Warnings(); !slices.ContainsFunc(w, func(s string) bool {
		return strings.Contains(s, "record at line 10 skipped: its malformed lines may hide bucket counts")
	}) {
		t.Errorf("skipped record not warned about: %q", w)
	}
	// Record 2 skipped: one 2 s interval from record 1 to record 3 holds
	// all their events; records 3 and 4 keep their good lines.
	if len(res.Intervals) != 2 {
		t.Fatalf("%d intervals, want 2", len(res.Intervals))
	}
	if iv := res.Intervals[0]; iv.Duration != 2*time.Second || eventCount(iv) != 20 {
		t.Errorf("first interval %s with %g events, want 2s with 20", iv.Duration, eventCount(iv))
	}
	if iv := res.Intervals[1]; iv.Duration != time.Second || eventCount(iv) != 1 {
		t.Errorf("second interval %s with %g events, want 1s with 1", iv.Duration, eventCount(iv))
	}
}

func TestBoundResolution(t *testing.T) {
	twoRecords := func(label string, extra ...string) string {
		return rec("1000000", append([]string{label, ms, "4, 1"}, extra...)...) +
			rec("2000000", append([]string{label, ms, "4, 3"}, extra...)...)
	}
	for _, tc := range []struct {
		name      string
		in        string
		bound     hist.BoundKind
		wantLower float64 // lower edge of the bucket named 4
		wantWarn  string
	}{
		{"oracle label", twoRecords(oracleLabel), hist.BoundUnknown, 2, ""},
		{"awr label", twoRecords("label, AWR DBA_HIST_EVENT_HISTOGRAM"), hist.BoundUnknown, 2, ""},
		{"neutral label warns", twoRecords(neutralLabel), hist.BoundUnknown, 2, warnNoBound},
		{"neutral label with --bound lower", twoRecords(neutralLabel), hist.LowerBound, 4, ""},
		{"datasource bpf", twoRecords(neutralLabel, "datasource, bpf"), hist.BoundUnknown, 4, ""},
		{"datasource dtrace beats an oracle label", twoRecords(oracleLabel, "datasource, dtrace"), hist.BoundUnknown, 4, ""},
		{"--bound upper overrides datasource", twoRecords(neutralLabel, "datasource, systemtap"), hist.UpperBound, 2,
			`--bound upper overrides the records' "datasource, systemtap" (lower-bound buckets)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runString(t, tc.in, source.Options{Bound: tc.bound})
			if res.Err != nil || len(res.Intervals) != 1 {
				t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
			}
			b := res.Intervals[0].Series[0].Hist.Buckets()
			if len(b) != 1 || b[0].Lower != tc.wantLower || b[0].Count != 2 {
				t.Errorf("buckets %+v, want 2 events from %g", b, tc.wantLower)
			}
			var want []string
			if tc.wantWarn != "" {
				want = []string{"synthetic.txt: " + tc.wantWarn}
			}
			if got := res.Diag.Warnings(); !slices.Equal(got, want) {
				t.Errorf("warnings %q, want %q", got, want)
			}
		})
	}
}

func TestEmptyInputs(t *testing.T) {
	for _, in := range []string{"", "\n\n", "31 rows selected.\n\nPL/SQL procedure successfully completed.\n"} {
		res := runString(t, in, source.Options{})
		if res.Err != nil || len(res.Intervals) != 0 || len(res.Malformed()) != 0 || len(res.Diag.Warnings()) != 0 {
			t.Errorf("%q: err %v, %d intervals, malformed %q, warnings %q", in, res.Err, len(res.Intervals), res.Malformed(), res.Diag.Warnings())
		}
	}
}

// Nanosecond DTrace-style data (connector output), lower bound, zero slot.
func TestNanosecAndZeroSlot(t *testing.T) {
	in := rec("5000000, 2013 Aug 27 10:54:53", "label, pread latency", "latencyunit, nanosec", "datasource, dtrace",
		"0, 1", "16384, 2", "262144, 100") +
		rec("15000000, 2013 Aug 27 10:55:03", "label, pread latency", "latencyunit, nanosec", "datasource, dtrace",
			"0, 4", "16384, 2", "262144, 150")
	loc := time.FixedZone("test", -5*3600)
	res := runString(t, in, source.Options{Location: loc})
	if res.Err != nil || len(res.Intervals) != 1 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	iv := res.Intervals[0]
	h := iv.Series[0].Hist
	if h.Unit != hist.Nanosecond || h.ZeroCount != 3 || h.Count() != 53 {
		t.Errorf("unit %s zero %g count %g, want ns, 3, 53", h.Unit, h.ZeroCount, h.Count())
	}
	if want := time.Date(2013, 8, 27, 10, 54, 53, 0, loc); !iv.Start.Equal(want) || iv.Duration != 10*time.Second {
		t.Errorf("interval %s for %s, want %s (zone-less date read in --tz) for 10s", iv.Start, iv.Duration, want)
	}
}

// A change of unit (or label, or bounds) between records starts a new
// baseline: the window between them is a Gap.
func TestUnitChangeStartsBaseline(t *testing.T) {
	in := rec("1000000", oracleLabel, ms, "1, 10") +
		rec("2000000", oracleLabel, ms, "1, 12") +
		rec("3000000", oracleLabel, "latencyunit, microsec", "1024, 12") +
		rec("4000000", oracleLabel, "latencyunit, microsec", "1024, 20")
	res := runString(t, in, source.Options{})
	if res.Err != nil || len(res.Intervals) != 3 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	if !res.Intervals[1].Gap || res.Intervals[0].Gap || res.Intervals[2].Gap {
		t.Errorf("gaps %v %v %v, want only the middle one", res.Intervals[0].Gap, res.Intervals[1].Gap, res.Intervals[2].Gap)
	}
	if h := res.Intervals[2].Series[0].Hist; h.Unit != hist.Microsecond || h.Count() != 8 {
		t.Errorf("last interval: unit %s count %g, want us 8", h.Unit, h.Count())
	}
	w := res.Diag.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "line 13 changes the unit from ms to us; starting a new baseline") {
		t.Errorf("warnings %q", w)
	}
}

// Headers a record omits are taken from the previous record.
func TestHeadersInherited(t *testing.T) {
	in := rec("1000000", oracleLabel, ms, "1, 10") + rec("2000000", "1, 12")
	res := runString(t, in, source.Options{})
	if res.Err != nil || len(res.Intervals) != 1 || len(res.Diag.Warnings()) != 0 {
		t.Fatalf("err %v, %d intervals, warnings %q", res.Err, len(res.Intervals), res.Diag.Warnings())
	}
	if s := res.Intervals[0].Series[0]; s.Key.Event != "db file sequential read from gv$event_histogram" || s.Hist.Unit != hist.Millisecond {
		t.Errorf("series %+v unit %s", s.Key, s.Hist.Unit)
	}
}

// The µs field gives lengths; the clock re-anchors to the text date when the
// extrapolation drifts by more than 2 s.
func TestReanchorToDates(t *testing.T) {
	in := rec("1000000, Sat Mar 14 19:40:07 2015 CEST", neutralLabel, ms, oracleDS, "1, 1") +
		rec("4000000, Sat Mar 14 19:40:10 2015 CEST", neutralLabel, ms, oracleDS, "1, 2") +
		rec("7000000, Sat Mar 14 19:50:00 2015 CEST", neutralLabel, ms, oracleDS, "1, 3")
	res := runString(t, in, source.Options{})
	if res.Err != nil || len(res.Intervals) != 2 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	cest := time.FixedZone("CEST", 2*3600)
	if iv := res.Intervals[0]; !iv.Start.Equal(time.Date(2015, 3, 14, 19, 40, 7, 0, cest)) || iv.Duration != 3*time.Second {
		t.Errorf("first interval %s for %s", iv.Start, iv.Duration)
	}
	if iv := res.Intervals[1]; !iv.End().Equal(time.Date(2015, 3, 14, 19, 50, 0, 0, cest)) || iv.Duration != 3*time.Second {
		t.Errorf("second interval ends %s after %s, want at the record's date after 3s", iv.End(), iv.Duration)
	}
}

// Without a timestamp that advances, the text dates give the length; with
// neither, a warning and a new baseline.
func TestTimeFromDatesOnly(t *testing.T) {
	in := rec("0, Sat Mar 14 19:40:07 2015 UTC", neutralLabel, ms, oracleDS, "1, 1") +
		rec("0, Sat Mar 14 19:40:12 2015 UTC", neutralLabel, ms, oracleDS, "1, 2") +
		rec("0, Sat Mar 14 19:40:12 2015 UTC", neutralLabel, ms, oracleDS, "1, 3") +
		rec("0, Sat Mar 14 19:40:17 2015 UTC", neutralLabel, ms, oracleDS, "1, 5")
	res := runString(t, in, source.Options{})
	if res.Err != nil || len(res.Intervals) != 2 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	if iv := res.Intervals[0]; iv.Duration != 5*time.Second || eventCount(iv) != 1 {
		t.Errorf("first interval %s with %g events", iv.Duration, eventCount(iv))
	}
	// Record 3 is the new baseline: record 4 adds 2 events in 5 s.
	if iv := res.Intervals[1]; iv.Duration != 5*time.Second || eventCount(iv) != 2 {
		t.Errorf("second interval %s with %g events", iv.Duration, eventCount(iv))
	}
	if w := res.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "line 15: cannot tell how long") {
		t.Errorf("warnings %q", w)
	}
}

func TestEventFilter(t *testing.T) {
	in := rec("1000000", oracleLabel, ms, "1, 10") + rec("2000000", oracleLabel, ms, "1, 12")
	res := runString(t, in, source.Options{Events: []string{"log file sync"}})
	if res.Err != nil || len(res.Intervals) != 0 || len(res.Diag.Warnings()) != 1 {
		t.Errorf("err %v, %d intervals, warnings %q", res.Err, len(res.Intervals), res.Diag.Warnings())
	}
	res = runString(t, in, source.Options{Events: []string{"db file sequential read from gv$event_histogram"}})
	if res.Err != nil || len(res.Intervals) != 1 {
		t.Errorf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
}

// Raw DTrace rows in a record: the key line before the header is dropped,
// negative buckets are dropped with a warning, an lquantize row and a bad
// count are malformed, and a comma-less line that no header follows is
// malformed too. Raw rows mean lower bounds, also after Oracle records.
func TestRawRecordRows(t *testing.T) {
	raw := func(ts string, c8192, c16384 int) string {
		return "<begin record>\ntimestamp, microsec, " + ts + "\nlabel, raw\n  sda   \n" +
			"           value  ------------- Distribution ------------- count    \n" +
			"              -1 |@                                        1        \n" +
			"               0 |                                         0        \n" +
			fmt.Sprintf("            8192 |@@@                                      %d        \n", c8192) +
			fmt.Sprintf("           16384 |@@@                                      %d        \n", c16384) +
			"           32768 |                                         0        \n\n<end record>\n"
	}
	in := rec("1000000", oracleLabel, ms, "1, 10") + rec("2000000", oracleLabel, ms, "1, 12") +
		raw("3000000", 4, 1) + raw("4000000", 6, 4) +
		"<begin record>\ntimestamp, microsec, 5000000\nlabel, raw\nstray words\n" +
		"          >= 100 |@                                        1        \n" +
		"            8192 |@@@                                      x        \n<end record>\n"
	res := runString(t, in, source.Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	// Oracle delta, then the change to the raw label (a new baseline with
	// a gap), then the raw delta: 2 in [8192, 16384) ns, 3 in [16384, 32768).
	if len(res.Intervals) != 3 || !res.Intervals[1].Gap {
		t.Fatalf("%d intervals: %+v", len(res.Intervals), res.Intervals)
	}
	h := res.Intervals[2].Series[0].Hist
	if h.Unit != hist.Millisecond || h.Count() != 5 || h.Sum != 1.5*(8192*2+16384*3) {
		t.Errorf("raw delta: %g events, sum %g %s", h.Count(), h.Sum, h.Unit)
	}
	wantBad := []string{
		"40: not a \"<power-of-2 value>, <count>\" data line",
		"41: row \">= 100\" is an lquantize bound, not a power-of-two bucket",
		"42: row count \"x\" is not a non-negative integer",
	}
	if got := res.Malformed(); !slices.Equal(got, wantBad) {
		t.Errorf("malformed\n%q\nwant\n%q", got, wantBad)
	}
	if w := strings.Join(res.Diag.Warnings(), "\n"); !strings.Contains(w, "1 events in negative buckets dropped") {
		t.Errorf("warnings %q", w)
	}
}

func TestLongLine(t *testing.T) {
	in := rec("1000000", oracleLabel, ms, "1, 10") +
		rec("2000000", oracleLabel, ms, "1, 12", strings.Repeat("9", maxLineLen+10)) +
		rec("3000000", oracleLabel, ms, "1, 13")
	res := runString(t, in, source.Options{})
	if res.Err != nil || len(res.Intervals) != 2 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	if got := res.Malformed(); len(got) != 1 || got[0] != "12: line longer than 65536 bytes" {
		t.Errorf("malformed %q", got)
	}
}

func TestParseDate(t *testing.T) {
	utc := time.UTC
	local := time.FixedZone("local", 5*3600+1800)
	for _, tc := range []struct {
		text string
		want time.Time
		zone string // unknown zone reported
	}{
		{"26-AUG-13 04.26.51.653754 PM +02:00", time.Date(2013, 8, 26, 14, 26, 51, 653754000, utc), ""},
		{"26-aug-13 04.26.51.653754 am -0500", time.Date(2013, 8, 26, 9, 26, 51, 653754000, utc), ""},
		{"Sat Mar 14 19:40:07 2015 CET", time.Date(2015, 3, 14, 18, 40, 7, 0, utc), ""},
		{"Sat Mar 14 00:00:0 2015 CET", time.Date(2015, 3, 13, 23, 0, 0, 0, utc), ""},
		{"Sat Mar  4 00:00:01 2015 PDT", time.Date(2015, 3, 4, 7, 0, 1, 0, utc), ""},
		{"2013 Aug 27 10:54:53", time.Date(2013, 8, 27, 5, 24, 53, 0, utc), ""},
		{"2013-08-27 10:54:53.5", time.Date(2013, 8, 27, 5, 24, 53, 500000000, utc), ""},
		{"Sat Mar 14 19:40:07 2015 IST", time.Date(2015, 3, 14, 14, 10, 7, 0, utc), "IST"},
	} {
		got, zone, ok := parseDateIn(tc.text, local)
		if !ok || !got.Equal(tc.want) || zone != tc.zone {
			t.Errorf("%q: %s %q %v, want %s %q", tc.text, got.UTC(), zone, ok, tc.want, tc.zone)
		}
	}
	for _, bad := range []string{"", "yesterday", "31-FOO-13 04.26.51 PM", "2013 Aug 27"} {
		if _, _, ok := parseDateIn(bad, local); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A date behind the µs clock (zone-less dates when DST ends) does not move
// the clock back: intervals stay contiguous, with one warning.
func TestDateBehindClockKeepsIntervalsContiguous(t *testing.T) {
	in := rec("1000000, 2015-10-25 02:59:58", neutralLabel, ms, oracleDS, "1, 1") +
		rec("4000000, 2015-10-25 02:00:01", neutralLabel, ms, oracleDS, "1, 2") +
		rec("7000000, 2015-10-25 02:00:04", neutralLabel, ms, oracleDS, "1, 3")
	res := runString(t, in, source.Options{Location: time.UTC})
	if res.Err != nil || len(res.Intervals) != 2 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	a, b := res.Intervals[0], res.Intervals[1]
	if !a.Start.Equal(time.Date(2015, 10, 25, 2, 59, 58, 0, time.UTC)) || !b.Start.Equal(a.End()) || b.Duration != 3*time.Second {
		t.Errorf("intervals %s+%s, %s+%s; want contiguous 3 s from 02:59:58", a.Start, a.Duration, b.Start, b.Duration)
	}
	if w := res.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "is behind the time its microsecond timestamp gives") {
		t.Errorf("warnings %q", w)
	}
}

// Records without label, date or datasource: a "(no label)" series in
// relative time, upper bound with the warning. A timestamp jumping by more
// than a year is corrupt: new baseline.
func TestBareRecords(t *testing.T) {
	in := rec("1000000", ms, "2, 1") + rec("2000000", ms, "2, 4") +
		rec("900000000000000", ms, "2, 5") + rec("900000002000000", ms, "2, 9")
	res := runString(t, in, source.Options{})
	if res.Err != nil || len(res.Intervals) != 2 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	for i, want := range []struct {
		start time.Duration
		dur   time.Duration
		n     float64
	}{{0, time.Second, 3}, {time.Second, 2 * time.Second, 4}} {
		iv := res.Intervals[i]
		if !iv.Relative || iv.Start.Sub(stream.RelativeStart) != want.start || iv.Duration != want.dur || eventCount(iv) != want.n {
			t.Errorf("interval %d: relative %v at +%s for %s with %g events; want +%s for %s with %g",
				i, iv.Relative, iv.Start.Sub(stream.RelativeStart), iv.Duration, eventCount(iv), want.start, want.dur, want.n)
		}
		if k := iv.Series[0].Key; k.Event != "(no label)" {
			t.Errorf("key %+v", k)
		}
	}
	w := res.Diag.Warnings()
	if len(w) != 2 || !strings.HasSuffix(w[0], warnNoBound) || !strings.Contains(w[1], "line 11: cannot tell how long") {
		t.Errorf("warnings %q", w)
	}
}
