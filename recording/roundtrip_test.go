package recording

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

func roundTrip(t *testing.T, ivs []stream.Interval) []byte {
	t.Helper()
	data := encode(t, ivs)
	got, err := decodeAll(data)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if err := diffIntervals(ivs, got); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRoundTripExampleLatencyData(t *testing.T) {
	for _, perInstance := range []bool{false, true} {
		ivs := exampleIntervals(t, perInstance)
		data := roundTrip(t, ivs)
		// The timestamps carry +02:00: replay must print them the same.
		if got := ivs[0].Start.Format(time.RFC3339); got != "2013-08-26T16:26:51+02:00" {
			t.Errorf("first start %s", got)
		}
		t.Logf("per instance %v: %d intervals, %d bytes, %.1f bytes/interval",
			perInstance, len(ivs), len(data), float64(len(data))/float64(len(ivs)))
	}
}

func TestRecordingIsMuchSmallerThanItsText(t *testing.T) {
	ivs := exampleIntervals(t, false)
	data := encode(t, ivs)
	// 36,893 bytes of text for 72 records (71 intervals): about 520 bytes
	// each. 13 non-empty buckets per interval should take well under 100.
	perInterval := float64(len(data)) / float64(len(ivs))
	if perInterval > 80 {
		t.Errorf("%.1f bytes per interval, want ≤ 80", perInterval)
	}
}

func TestRoundTripTraceWaits(t *testing.T) {
	cases := []struct {
		file   string
		window time.Duration
	}{
		{realTrace, 100 * time.Millisecond},
		{"trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc", 10 * time.Millisecond},
		{"trc10046/priitp2-trctools_19.x/lobs.trc", 5 * time.Millisecond},
		{"trc10046/jkstill-trace-combine_12.2.0.1/main_trcsess_output.trc", time.Second},
	}
	for _, c := range cases {
		ivs := traceIntervals(t, c.file, c.window)
		waits := 0.0
		for _, iv := range ivs {
			for _, s := range iv.Series {
				waits += s.Hist.Count()
			}
		}
		data := roundTrip(t, ivs)
		t.Logf("%s: %d intervals, %g waits, %d bytes", c.file, len(ivs), waits, len(data))
	}
}

func TestRoundTripEdgeCases(t *testing.T) {
	roundTrip(t, edgeCaseIntervals(t))
}

// edgeCaseIntervals covers what real sources rarely emit: gaps, relative
// time, fractional and 2^53+ counts, negative bucket indexes, empty
// histograms and intervals, unicode keys, zone changes, time extremes.
func edgeCaseIntervals(t testing.TB) []stream.Interval {
	paris := time.FixedZone("CEST", 2*3600)
	local := time.FixedZone("", -(9*3600 + 30*60))
	t0 := time.Date(2024, 3, 31, 0, 59, 58, 123456789, paris)

	exact := hist.NewExact(hist.Microsecond, -3) // zero bucket [0, 1/8) µs
	for _, v := range []float64{0.01, 0.2, 0.5, 0.9, 3, 250, 1e6} {
		_ = exact.Record(v)
	}
	if exact.Offset >= 0 {
		t.Fatalf("want negative bucket indexes, offset %d", exact.Offset)
	}
	fractional := hist.Rebin(exampleBuckets(), hist.Microsecond, 2)
	huge := hist.NewBuckets(hist.Nanosecond)
	_ = huge.AddBound(hist.LowerBound, 0, 1<<53)
	_ = huge.AddBound(hist.LowerBound, 1<<20, 1<<53)
	_ = huge.AddBound(hist.LowerBound, 1<<30, 1<<62)
	open := hist.NewBuckets(hist.Millisecond)
	_ = open.AddBound(hist.UpperBound, 4, 10)
	_ = open.AddOpenTop(4, 2)
	padded := &hist.Histogram{Unit: hist.Second, Scale: 3, ZeroPow: -10, Offset: -80,
		Counts: []float64{0, 0, 7, 0, 0, 0, 0, 0, 0, 1, 0, 0}, Sum: 1.5, ZeroCount: 4}
	negZero := &hist.Histogram{Unit: hist.Microsecond, ZeroCount: math.Copysign(0, -1), Counts: []float64{1}, Sum: math.Copysign(0, -1)}
	emptyWithOffset := &hist.Histogram{Unit: hist.Microsecond, Offset: 42}
	sameKeyOtherGrid := hist.NewExact(hist.Nanosecond, 5)
	_ = sameKeyOtherGrid.Record(100)

	k := stream.Key{Event: "db file sequential read", Instance: "1"}
	unicode := stream.Key{Event: "écriture ‘log’ 日志 🚀", Instance: "инстанс", Source: "/tmp/trace,with\ncomma.trc"}
	ivs := []stream.Interval{
		{Source: "a.trc", Start: t0, Duration: 3 * time.Second,
			Series: []stream.SeriesHist{{Key: k, Hist: exact}, {Key: unicode, Hist: fractional}}},
		// Contiguous: start delta 0, same duration, zone kept.
		{Source: "a.trc", Start: t0.Add(3 * time.Second), Duration: 3 * time.Second,
			Series: []stream.SeriesHist{{Key: k, Hist: huge}}},
		// Zero-series interval: observed, nothing happened.
		{Source: "a.trc", Start: t0.Add(6 * time.Second), Duration: 3 * time.Second},
		// Gap.
		{Source: "a.trc", Start: t0.Add(9 * time.Second), Duration: time.Second, Gap: true},
		// Another source interleaved, in another zone, earlier than the first.
		{Source: "b", Start: t0.Add(-time.Hour).In(local), Duration: 1, Series: []stream.SeriesHist{{Key: k, Hist: open}}},
		// Zone change within a source (DST) and a start before the previous end.
		{Source: "a.trc", Start: t0.Add(5 * time.Second).In(time.FixedZone("CET", 3600)), Duration: 250 * time.Millisecond,
			Series: []stream.SeriesHist{{Key: unicode, Hist: padded}, {Key: k, Hist: negZero}}},
		// Same key in the same interval twice, one on another grid; empty histograms.
		{Source: "a.trc", Start: t0.Add(time.Hour).UTC(), Duration: time.Hour,
			Series: []stream.SeriesHist{{Key: k, Hist: sameKeyOtherGrid}, {Key: k, Hist: emptyWithOffset}, {Key: stream.Key{}, Hist: hist.NewBuckets(hist.Second)}}},
		// Relative time, empty source name.
		{Source: "", Start: stream.RelativeStart.Add(1500 * time.Millisecond), Duration: 500 * time.Millisecond, Relative: true,
			Series: []stream.SeriesHist{{Key: k, Hist: exact}}},
		{Source: "", Start: stream.RelativeStart.Add(2 * time.Second), Duration: 500 * time.Millisecond, Relative: true},
		// Far from the epoch and a long duration.
		{Source: "b", Start: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), Duration: math.MaxInt64},
		{Source: "b", Start: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), Duration: 1},
	}
	if !fractionalCounts(fractional) {
		t.Fatal("rebinned histogram has no fractional counts")
	}
	return ivs
}

func exampleBuckets() *hist.Histogram {
	h := hist.NewBuckets(hist.Millisecond)
	for _, b := range []struct{ n, c float64 }{{1, 1702}, {2, 2626}, {4, 781}, {8, 4591}, {16, 6345}, {1024, 25}} {
		_ = h.AddBound(hist.UpperBound, b.n, b.c)
	}
	return h
}

func fractionalCounts(h *hist.Histogram) bool { return !integralCounts(h) }

func TestLocalTimeKeepsItsZoneName(t *testing.T) {
	// A source that reads offset-less timestamps in --tz Europe/Paris.
	loc, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("no zoneinfo: %v", err)
	}
	start := time.Date(2013, 8, 26, 16, 26, 51, 653754000, loc)
	ivs := []stream.Interval{{Source: "x", Start: start, Duration: 3 * time.Second}}
	got, err := decodeAll(encode(t, ivs))
	if err != nil {
		t.Fatal(err)
	}
	const layout = "2006-01-02 15:04:05.000000 MST -0700"
	if a, b := start.Format(layout), got[0].Start.Format(layout); a != b {
		t.Errorf("replayed start prints %q, want %q", b, a)
	}
}

func TestMonotonicClockReadingsAreIgnored(t *testing.T) {
	now := time.Now() // carries a monotonic reading
	ivs := []stream.Interval{
		{Source: "live", Start: now, Duration: time.Second},
		{Source: "live", Start: now.Add(time.Second), Duration: time.Second},
	}
	got, err := decodeAll(encode(t, ivs))
	if err != nil {
		t.Fatal(err)
	}
	if err := diffIntervals(ivs, got); err != nil {
		t.Fatal(err)
	}
}

func TestContiguousIntervalsAreCompact(t *testing.T) {
	h := hist.NewBuckets(hist.Millisecond)
	_ = h.AddBound(hist.UpperBound, 8, 100)
	var ivs []stream.Interval
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		ivs = append(ivs, stream.Interval{Source: "s", Start: start.Add(time.Duration(i) * 10 * time.Second),
			Duration: 10 * time.Second, Series: []stream.SeriesHist{{Key: stream.Key{Event: "e"}, Hist: h}}})
	}
	a := len(encode(t, ivs[:1]))
	b := len(encode(t, ivs))
	// length, type, source id, flags, start delta, duration delta, series
	// count, series id, hist flags, offset, n, zero, one count, sum, CRC.
	if per := (b - a) / 99; per != 1+1+1+1+1+1+1+1+1+1+1+1+2+8+4 {
		t.Errorf("%d bytes per contiguous interval with one bucket", per)
	}
}

func TestWriterRefusesInvalidIntervals(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ok := hist.NewExact(hist.Microsecond, 0)
	bad := []stream.Interval{
		{Source: "s", Start: start},          // no duration
		{Source: "s", Duration: time.Second}, // no start
		{Source: "s", Start: start, Duration: 1, Series: []stream.SeriesHist{{Key: stream.Key{Event: "e"}}}},
		{Source: "s", Start: start, Duration: 1, Series: []stream.SeriesHist{{Hist: &hist.Histogram{Unit: 7}}}},
		{Source: "s", Start: start, Duration: 1, Series: []stream.SeriesHist{{Hist: &hist.Histogram{Unit: hist.Microsecond, Sum: math.NaN()}}}},
		{Source: "s", Start: start, Duration: 1, Series: []stream.SeriesHist{{Hist: &hist.Histogram{Unit: hist.Microsecond, ZeroPow: 5000}}}},
		{Source: "s", Start: start, Duration: 1, Series: []stream.SeriesHist{{Hist: &hist.Histogram{Unit: hist.Microsecond, Offset: 1 << 40}}}},
		{Source: "s", Start: start, Duration: 1, Series: []stream.SeriesHist{{Hist: &hist.Histogram{Unit: hist.Microsecond, Counts: make([]float64, maxBuckets+1)}}}},
		{Source: "s", Start: start.In(time.FixedZone("odd", 50*3600)), Duration: 1},
		{Source: "s", Start: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Duration: 1},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, iv := range bad {
		if err := w.Write(iv); err == nil {
			t.Errorf("case %d: invalid interval accepted", i)
		}
	}
	// A refused interval leaves no trace: the next one still round-trips.
	good := []stream.Interval{{Source: "s", Start: start, Duration: time.Second,
		Series: []stream.SeriesHist{{Key: stream.Key{Event: "e"}, Hist: ok}}}}
	if err := w.Write(good[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(good[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	got, err := decodeAll(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := diffIntervals(good, got); err != nil {
		t.Fatal(err)
	}
	if _, ends, _ := frameEnds(t, buf.Bytes()); len(ends) != 3 {
		t.Errorf("%d frames, want source, series and interval", len(ends))
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
	if _, err := NewWriter(&failingWriter{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("header write error: %v", err)
	}
	w, err := NewWriter(&failingWriter{after: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.FlushEach = true
	iv := stream.Interval{Source: "s", Start: time.Unix(1e9, 0), Duration: time.Second}
	if err := w.Write(iv); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("flush error: %v", err)
	}
	if err := w.Write(iv); err == nil {
		t.Error("write after a failed flush succeeded")
	}
}

func TestConcatenatedRecordingsReadAsOne(t *testing.T) {
	a := exampleIntervals(t, true)[:5]
	b := traceIntervals(t, "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc", 10*time.Millisecond)
	data := append(encode(t, a), encode(t, b)...)
	got, err := decodeAll(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := diffIntervals(append(append([]stream.Interval{}, a...), b...), got); err != nil {
		t.Fatal(err)
	}
}

func TestVersions(t *testing.T) {
	body := encode(t, exampleIntervals(t, false)[:3])[len(Magic)+2:]
	header := func(major, minor uint64) []byte {
		h := binary.AppendUvarint([]byte(Magic), major)
		return binary.AppendUvarint(h, minor)
	}
	t.Run("newer major fails clearly", func(t *testing.T) {
		_, err := decodeAll(append(header(2, 0), body...))
		var ve *VersionError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "version 2.0 is newer") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("newer minor with ancillary frames reads", func(t *testing.T) {
		extra := rawFrame(0x41, []byte("written by latscope 1.7"))
		data := append(append(header(1, 7), extra...), body...)
		got, err := decodeAll(append(data, extra...))
		if err != nil || len(got) != 3 {
			t.Errorf("%d intervals, %v", len(got), err)
		}
	})
	t.Run("unknown critical frame is damage", func(t *testing.T) {
		data := append(append(header(1, 0), body...), rawFrame(0x07, nil)...)
		got, err := decodeAll(data)
		var de *DamageError
		if !errors.As(err, &de) || de.Truncated || len(got) != 3 || !strings.Contains(err.Error(), "unknown frame type 0x07") {
			t.Errorf("%d intervals, %v", len(got), err)
		}
	})
	t.Run("not a recording", func(t *testing.T) {
		if _, err := NewReader(strings.NewReader("<begin record>\n")); !errors.Is(err, ErrNotRecording) {
			t.Errorf("error %v", err)
		}
	})
}

func rawFrame(typ byte, payload []byte) []byte {
	w := &Writer{}
	w.appendFrame(typ, payload)
	return w.buf
}
