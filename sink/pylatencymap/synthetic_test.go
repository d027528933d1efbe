package pylatencymap

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/source"
	plmsource "github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// Synthetic intervals: what real files rarely hold (gaps, holes, overlapping
// sources, odd layouts). Counts are small and chosen by hand.

var t0 = time.Date(2024, 3, 31, 0, 59, 57, 250000000, time.FixedZone("CET", 3600))

func ms(pairs ...float64) *hist.Histogram {
	h := hist.NewBuckets(hist.Millisecond)
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := h.AddBound(hist.UpperBound, pairs[i], pairs[i+1]); err != nil {
			panic(err)
		}
	}
	return h
}

func win(start time.Duration, length time.Duration, series ...stream.SeriesHist) stream.Interval {
	return stream.Interval{Source: "s", Start: t0.Add(start), Duration: length, Series: series}
}

func ser(event string, h *hist.Histogram) stream.SeriesHist {
	return stream.SeriesHist{Key: stream.Key{Event: event}, Hist: h}
}

func TestGapsAndHolesKeepTheWindows(t *testing.T) {
	gap := win(3*time.Second, 3*time.Second)
	gap.Gap = true
	ivs := []stream.Interval{
		win(0, 3*time.Second, ser("e", ms(1, 5, 8, 2))),
		gap,
		// [6 s, 10 s) is a hole: no interval covers it.
		win(10*time.Second, 3*time.Second, ser("e", ms(8, 1))),
		win(13*time.Second, 3*time.Second, ser("e", ms(2, 4))),
	}
	out, warnings := convert(t, ivs)
	if countWarnings(warnings, "gaps (windows the source could not observe) are written as windows without events") != 1 || len(warnings) != 1 {
		t.Errorf("warnings %q", warnings)
	}
	recs := parseRecords(t, out)
	wantTimes := []time.Duration{0, 3, 6, 10, 13, 16}
	if len(recs) != len(wantTimes) {
		t.Fatalf("%d records", len(recs))
	}
	for i, d := range wantTimes {
		if want := t0.Add(d * time.Second).UnixMicro(); recs[i].usec != want {
			t.Errorf("record %d at %d µs, want %d", i, recs[i].usec, want)
		}
	}
	got := readBack(t, out)
	// The gap and the hole come back as windows without events.
	hole := win(6*time.Second, 4*time.Second)
	want := []stream.Interval{ivs[0], win(3*time.Second, 3*time.Second), hole, ivs[2], ivs[3]}
	compareIntervals(t, want, got, "e", hist.Millisecond)
}

// A gap before anything was counted, and relative time: the records say
// no date, and time restarts at 0 at the first record.
func TestRelativeTime(t *testing.T) {
	at := func(d time.Duration, series ...stream.SeriesHist) stream.Interval {
		return stream.Interval{Source: "r", Start: stream.RelativeStart.Add(d), Duration: 500 * time.Millisecond, Relative: true, Series: series}
	}
	ivs := []stream.Interval{at(1500*time.Millisecond, ser("e", ms(4, 3))), at(2 * time.Second), at(2500*time.Millisecond, ser("e", ms(1, 1)))}
	out, warnings := convert(t, ivs)
	if len(warnings) > 0 {
		t.Errorf("warnings %q", warnings)
	}
	recs := parseRecords(t, out)
	if recs[0].date != "" || recs[0].usec != 1500000 {
		t.Errorf("first record %d µs, date %q", recs[0].usec, recs[0].date)
	}
	got := readBack(t, out)
	shifted := make([]stream.Interval, len(ivs))
	for i, iv := range ivs {
		shifted[i] = iv
		shifted[i].Start = iv.Start.Add(-1500 * time.Millisecond)
	}
	compareIntervals(t, shifted, got, "e", hist.Millisecond)
}

// Several sources: identical windows are summed (two instances of one
// event, as gv$ records sum RAC instances: one warning); a window that
// starts before the previous one ended is counted in the previous one (one
// warning); totals are kept.
func TestSeveralSourcesInOneStream(t *testing.T) {
	a := func(d time.Duration, h *hist.Histogram) stream.Interval {
		iv := win(d, 3*time.Second, stream.SeriesHist{Key: stream.Key{Event: "e", Instance: "1"}, Hist: h})
		iv.Source = "a"
		return iv
	}
	b := func(d time.Duration, h *hist.Histogram) stream.Interval {
		iv := win(d, 3*time.Second, stream.SeriesHist{Key: stream.Key{Event: "e", Instance: "2"}, Hist: h})
		iv.Source = "b"
		return iv
	}
	same := []stream.Interval{a(0, ms(2, 1)), b(0, ms(2, 10)), a(3*time.Second, ms(4, 1)), b(3*time.Second, ms(4, 10))}
	out, warnings := convert(t, same)
	if countWarnings(warnings, "the instances and sources of \"e\" are summed") != 1 || len(warnings) != 1 {
		t.Errorf("warnings %q", warnings)
	}
	got := readBack(t, out)
	if len(got) != 2 || got[0].Series[0].Hist.Count() != 11 || got[1].Series[0].Hist.Count() != 11 {
		t.Fatalf("read back %+v", got)
	}

	shifted := []stream.Interval{a(0, ms(2, 1)), b(time.Second, ms(2, 10)), a(3*time.Second, ms(4, 1)), b(4*time.Second, ms(4, 10)), b(7*time.Second, ms(8, 100))}
	out, warnings = convert(t, shifted)
	if countWarnings(warnings, "windows that overlap (several sources?)") != 1 {
		t.Errorf("warnings %q", warnings)
	}
	got = readBack(t, out)
	var counts []float64
	for _, iv := range got {
		n := 0.0
		for _, s := range iv.Series {
			n += s.Hist.Count()
		}
		counts = append(counts, n)
	}
	// [0, 3) gets b's [1, 4); [3, 6) gets b's [4, 7); [6, 7) is a hole;
	// [7, 10) is b's last window.
	if want := []float64{11, 11, 0, 100}; !equal(counts, want) {
		t.Errorf("read back counts %v, want %v", counts, want)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Layouts PyLatencyMap cannot hold are rebinned with one warning; every
// event is still counted.
func TestLayoutsAreRebinnedOnce(t *testing.T) {
	netapp, _ := hist.NewCustom(hist.Microsecond, []float64{20, 40, 60, 80, 100, 200, math.Inf(1)})
	_ = netapp.AddCustom(-1, 3)
	_ = netapp.AddCustom(0, 7)
	_ = netapp.AddCustom(5, 2) // >200us, open top
	wide := &hist.Histogram{Unit: hist.Microsecond, ZeroPow: 3, ZeroCount: 8, Offset: 3, Counts: []float64{4}, Sum: 80}
	sub := hist.NewExact(hist.Microsecond, -4)
	_ = sub.Record(0.1) // below 1 µs: folded into [0, 1)
	_ = sub.Record(0.7)
	_ = sub.Record(300)
	seconds := hist.NewBuckets(hist.Second)
	_ = seconds.AddBound(hist.LowerBound, 1, 6) // [1, 2) s
	nanos := hist.NewBuckets(hist.Nanosecond)
	_ = nanos.AddBound(hist.LowerBound, 2048, 5) // [2048, 4096) ns straddles 2 and 4 µs
	ivs := []stream.Interval{
		win(0, time.Second, ser("e", netapp)),
		win(time.Second, time.Second, ser("e", wide)),
		win(2*time.Second, time.Second, ser("e", sub)),
		win(3*time.Second, time.Second, ser("e", seconds)),
		win(4*time.Second, time.Second, ser("e", nanos)),
	}
	out, warnings := convert(t, ivs)
	if countWarnings(warnings, "histograms rebinned into power-of-two buckets of whole microsec") != 1 || len(warnings) != 1 {
		t.Errorf("warnings %q", warnings)
	}
	// Split buckets give fractional counts; the records hold each bucket's
	// running total rounded, so a record's total is within 0.5 per bucket
	// of the exact one and the error does not grow over time.
	recs := parseRecords(t, out)
	perRecord := []float64{0, 12, 12, 3, 6, 5}
	total := 0.0
	for i, r := range recs {
		total += perRecord[i]
		if d := math.Abs(float64(r.total()) - total); d > 0.5*float64(len(r.rows)) {
			t.Errorf("record %d: %d events, want %g ± %g", i, r.total(), total, 0.5*float64(len(r.rows)))
		}
	}

	// The 6 events of [1, 2) s all lie in [2^19, 2^21) µs; the 2 of >200us,
	// read as [200, 400) µs, and the 300 µs wait lie in N = 256 and 512;
	// [0, 1) µs holds the two sub-µs waits and 1/8 of [0, 8) µs's 8 events.
	last := recs[len(recs)-1]
	if last.rows[1<<20]+last.rows[1<<21] != 6 || last.rows[256]+last.rows[512] != 3 || last.rows[1] != 3 {
		t.Errorf("last record %v", last.rows)
	}
	readBack(t, out)
}

// Before the first event the label is unknown: the records wait for it, so
// that the label never changes (a change would read as a new series).
func TestRecordsWaitForTheFirstEvent(t *testing.T) {
	ivs := []stream.Interval{win(0, time.Second), win(time.Second, time.Second), win(2*time.Second, time.Second, ser("late", ms(16, 2)))}
	out, _ := convert(t, ivs)
	recs := parseRecords(t, out)
	if len(recs) != 4 || recs[0].label != "late" || recs[3].total() != 2 {
		t.Fatalf("records %+v", recs)
	}
	compareIntervals(t, ivs, readBack(t, out), "late", hist.Millisecond)

	// No event at all: the windows are still written, with no label.
	out, _ = convert(t, ivs[:2])
	recs = parseRecords(t, out)
	if len(recs) != 3 || recs[2].label != "" || recs[2].unit != "millisec" {
		t.Fatalf("records %+v", recs)
	}
	if got := readBack(t, out); len(got) != 2 || len(got[0].Series)+len(got[1].Series) != 0 {
		t.Fatalf("read back %+v", got)
	}
	// Nothing at all: nothing written.
	if out, _ := convert(t, nil); len(out) != 0 {
		t.Errorf("wrote %q", out)
	}
}

func TestLabelsPyLatencyMapCannotRead(t *testing.T) {
	event := "enq: TX - row lock, contention\nsecond line"
	out, warnings := convert(t, []stream.Interval{win(0, time.Second, ser(event, ms(2, 1)))})
	if countWarnings(warnings, "cannot read commas or line breaks in a label") != 1 {
		t.Errorf("warnings %q", warnings)
	}
	got := readBack(t, out)
	if got[0].Series[0].Key.Event != "enq: TX - row lock; contention second line" {
		t.Errorf("label read back as %q", got[0].Series[0].Key.Event)
	}
}

func TestRelativeAndDatedWindowsDoNotMix(t *testing.T) {
	rel := stream.Interval{Source: "r", Start: stream.RelativeStart, Duration: time.Second, Relative: true, Series: []stream.SeriesHist{ser("e", ms(2, 1))}}
	out, warnings := convert(t, []stream.Interval{win(0, time.Second, ser("e", ms(2, 1))), rel})
	if countWarnings(warnings, "dropped the windows of r") != 1 || len(parseRecords(t, out)) != 2 {
		t.Errorf("warnings %q\n%s", warnings, out)
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

func TestWriteErrorsAreReportedAndSticky(t *testing.T) {
	w := NewWriter(&failingWriter{after: 1}, sink.Options{Name: "x.txt"})
	for i := range 3 {
		err := w.Write(win(time.Duration(i)*time.Second, time.Second, ser("e", ms(2, 1))))
		if i == 2 && (err == nil || !strings.Contains(err.Error(), "x.txt: disk full")) {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed write succeeded")
	}
}

// oddIntervals are intervals no source should emit but a writer must
// survive: nil and invalid histograms, zero and negative durations, the zero
// time, the far future, +Inf edges, huge counts.
func oddIntervals(t testing.TB) []stream.Interval {
	open, _ := hist.NewCustom(hist.Millisecond, []float64{0, math.Inf(1)})
	_ = open.AddCustom(0, 4)
	huge := hist.NewBuckets(hist.Nanosecond)
	_ = huge.AddBound(hist.LowerBound, math.Ldexp(1, 70), 3) // past 2^63 ns: folded into the top bucket
	_ = huge.AddBound(hist.LowerBound, 0, 1e15)
	frac := hist.Rebin(ms(8, 3), hist.Millisecond, 2)
	return []stream.Interval{
		win(0, 0, ser("e", ms(2, 1))),
		win(0, time.Nanosecond, ser("e", &hist.Histogram{Unit: 7}), ser("e", nil)),
		win(time.Second, -time.Second, ser("e", open)),
		win(2*time.Second, time.Second, ser("e", huge), ser("other", ms(2, 1))),
		win(3*time.Second, time.Second, ser("e", frac)),
		{Source: "z", Start: time.Time{}, Duration: time.Second},
		win(9000*time.Hour, time.Hour, ser("e", ms(1, 1))),
		{Source: "far", Start: time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC), Duration: time.Hour, Series: []stream.SeriesHist{ser("e", ms(2, 2))}},
	}
}

func TestOddIntervalsNeverBreakTheRecords(t *testing.T) {
	out, warnings := convert(t, oddIntervals(t))
	recs := parseRecords(t, out)
	for i := 1; i < len(recs); i++ {
		if recs[i].usec <= recs[i-1].usec {
			t.Errorf("record %d: time %d after %d", i, recs[i].usec, recs[i-1].usec)
		}
	}
	if countWarnings(warnings, "skipped an invalid histogram") != 1 {
		t.Errorf("warnings %q", warnings)
	}
	// Every record must stay readable by latscope's reader.
	if _, diag := runFormat(t, plmsource.Format(), "odd.txt", out, source.Options{}); len(diag.Problems()) > 0 {
		t.Errorf("reader: %+v", diag.Problems()[0].First)
	}
}
