package pylatencymap

import (
	"path"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
	plmsource "github.com/latscope/latscope/source/pylatencymap"
)

// example_latency_data.txt: 72 real gv$event_histogram records (ms, two
// RAC instances, Oracle buckets) → 71 intervals → 72 records again.
func TestExampleLatencyDataRoundTrip(t *testing.T) {
	ivs := sourcetest.ReadShared(t, plmsource.Format(), "pylatencymap/example_latency_data.txt", source.Options{})
	if len(ivs) != 71 {
		t.Fatalf("%d intervals", len(ivs))
	}
	out, warnings := convert(t, ivs)
	if len(warnings) > 0 {
		t.Errorf("warnings for power-of-two ms data of one event: %q", warnings)
	}

	// Independently of latscope's reader: one record per interval plus the
	// baseline, cumulative counts from 0 to the file's 1237243 events.
	recs := parseRecords(t, out)
	if len(recs) != 72 {
		t.Fatalf("%d records, want 72", len(recs))
	}
	first, last := recs[0], recs[71]
	if first.total() != 0 || last.total() != 1237243 {
		t.Errorf("cumulative totals %d … %d, want 0 … 1237243 (the input's last record minus its first)", first.total(), last.total())
	}
	if first.date != "26-AUG-2013 04.26.51.653754 PM +02:00" || first.usec != 1377527211653754 {
		t.Errorf("first timestamp %d, %q", first.usec, first.date)
	}
	if last.date != "26-AUG-2013 04.30.26.120610 PM +02:00" {
		t.Errorf("last date %q (the input's last record)", last.date)
	}
	for i, r := range recs {
		if r.label != "db file sequential read latency data from gv$event_histogram" || r.unit != "millisec" || r.data != "oracle" {
			t.Fatalf("record %d: label %q unit %q datasource %q", i, r.label, r.unit, r.data)
		}
		if i > 0 && r.usec <= recs[i-1].usec {
			t.Fatalf("record %d: timestamp does not advance", i)
		}
		for n, c := range recs[max(i-1, 0)].rows {
			if r.rows[n] < c {
				t.Fatalf("record %d: bucket %d goes back from %d to %d", i, n, c, r.rows[n])
			}
		}
	}
	// Oracle's [0, 1) ms bucket is N = 1. Counts start at the first
	// record: the input's 4096 bucket (8 + 1 waits) never grew, 2048 did
	// (4860 + 4 to 4864 + 4).
	if last.order[0] != 1 || last.order[len(last.order)-1] != 2048 || last.rows[2048] != 4 {
		t.Errorf("buckets %v", last.order)
	}

	got := readBack(t, out)
	compareIntervals(t, ivs, got, "db file sequential read latency data from gv$event_histogram", hist.Millisecond)
}

// calibration_data.txt holds lower-bound (SystemTap) µs buckets: written as
// Oracle upper bounds, [64, 128) µs becomes N = 128.
func TestCalibrationLowerBoundsBecomeUpperBounds(t *testing.T) {
	ivs := sourcetest.ReadShared(t, plmsource.Format(), "pylatencymap/calibration_data.txt", source.Options{})
	out, warnings := convert(t, ivs)
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	recs := parseRecords(t, out)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	// The input's counts grow by 1 per second in each of 64 … 32768.
	for _, n := range []uint64{128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536} {
		if recs[1].rows[n] != 1 || recs[2].rows[n] != 2 {
			t.Errorf("bucket %d: %d then %d, want 1 then 2", n, recs[1].rows[n], recs[2].rows[n])
		}
	}
	if len(recs[2].rows) != 10 || recs[2].unit != "microsec" {
		t.Errorf("last record %+v", recs[2])
	}
	// "Sat Mar 14 00:00:0 2015 CET" keeps its instant, as a numeric offset.
	if recs[0].date != "14-MAR-2015 12.00.00.000000 AM +01:00" {
		t.Errorf("first date %q", recs[0].date)
	}
	compareIntervals(t, ivs, readBack(t, out), "Calibration data", hist.Microsecond)
}

// A real 10046 trace has many events, each an exact scale-6 µs histogram:
// one event is written, downscaled to power-of-two buckets, with one warning
// per kind of loss.
func TestTraceWritesOneEventRebinned(t *testing.T) {
	const trace = "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc" // Oracle 12.2: 13 events
	ivs := sourcetest.ReadShared(t, oracle10046.Format(), trace, source.Options{Interval: time.Second})
	event := ivs[0].Series[0].Key.Event
	for _, iv := range ivs {
		for _, s := range iv.Series {
			if s.Hist.Scale != hist.ExactScale {
				t.Fatalf("trace histogram at scale %d", s.Hist.Scale)
			}
		}
	}
	out, warnings := convert(t, ivs)
	if countWarnings(warnings, "rebinned into power-of-two buckets of whole microsec; PyLatencyMap cannot hold finer buckets") != 1 ||
		countWarnings(warnings, "PyLatencyMap draws one series: only event \""+event+"\" is written") != 1 || len(warnings) != 2 {
		t.Errorf("warnings: %q", warnings)
	}
	compareIntervals(t, ivs, readBack(t, out), event, hist.Microsecond)

	// Independent total: the chosen event's waits in the trace.
	recs := parseRecords(t, out)
	want := 0.0
	for _, iv := range ivs {
		for _, s := range iv.Series {
			if s.Key.Event == event {
				want += s.Hist.Count()
			}
		}
	}
	if got := recs[len(recs)-1].total(); float64(got) != want || want == 0 {
		t.Errorf("%q: %d events written, the source counted %g", event, got, want)
	}

	// With --event the other events never reach the writer: no warning.
	kept := sourcetest.ReadShared(t, oracle10046.Format(), trace, source.Options{Interval: time.Second, Events: []string{"db file sequential read"}})
	out, warnings = convert(t, kept)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "rebinned") {
		t.Errorf("warnings with --event: %q", warnings)
	}
	compareIntervals(t, kept, readBack(t, out), "db file sequential read", hist.Microsecond)
}

// Traces of every Oracle version (10.2 to 23c, with and without a time
// zone): the windows come back to the µs, the counts of the first event met
// exactly. The 10.2 trace may not be redistributed: its case skips without
// the shared test data.
func TestTracesOfEveryVersionRoundTrip(t *testing.T) {
	for _, trace := range []string{
		"trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc",
		"trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc",
		"trc10046/priitp2-trctools_19.x/no_timezone.trc",
		"trc10046/apress-top1e_10.2.0.3_11.1.0.6/dbm10203_ora_24433.trc",
	} {
		t.Run(path.Base(trace), func(t *testing.T) { roundTripTrace(t, trace) })
	}
}

func roundTripTrace(t *testing.T, trace string) {
	ivs := sourcetest.ReadShared(t, oracle10046.Format(), trace, source.Options{Interval: 100 * time.Millisecond})
	if len(ivs) == 0 {
		t.Fatal("no intervals")
	}
	var event string
	for _, iv := range ivs {
		if len(iv.Series) > 0 {
			event = iv.Series[0].Key.Event
			break
		}
	}
	out, _ := convert(t, ivs)
	compareIntervals(t, ivs, readBack(t, out), event, hist.Microsecond)
	t.Logf("%d intervals (relative %v), %d bytes", len(ivs), ivs[0].Relative, len(out))
}
