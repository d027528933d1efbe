package recording

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Mean series (format 1.2). No recording of a live PostgreSQL can be
// shipped, so these intervals are SYNTHETIC: they have the shape the
// postgres source emits from pg_stat_statements (calls, total_exec_time in
// ms) and pg_stat_database (blks_read, blk_read_time in ms).

var (
	stmtKey = stream.Key{Event: "SELECT 1"}
	blkKey  = stream.Key{Event: "blk read"}
)

// goldenMeanIntervals are the two intervals of testdata/means.lsr, which
// docs/recording-format.md dissects.
func goldenMeanIntervals() []stream.Interval {
	start := time.Date(2024, 5, 2, 10, 0, 0, 0, time.UTC)
	return []stream.Interval{
		{Source: "pg", Start: start, Duration: time.Second, Means: []stream.SeriesMean{
			{Key: stmtKey, Count: 40, Sum: 12.5, Unit: hist.Millisecond},
			{Key: blkKey, Count: 3, Sum: 0.75, Unit: hist.Millisecond}}},
		{Source: "pg", Start: start.Add(time.Second), Duration: time.Second, Means: []stream.SeriesMean{
			{Key: stmtKey, Count: 25, Sum: 7.25, Unit: hist.Millisecond}}},
	}
}

func TestGoldenMeans(t *testing.T) {
	checkGolden(t, goldenMeanIntervals(), filepath.Join("testdata", "means.lsr"))
}

// meanEdgeCases covers every encoding choice of the means section.
func meanEdgeCases(t testing.TB) []stream.Interval {
	start := time.Date(2024, 5, 2, 10, 0, 0, 0, time.FixedZone("CEST", 7200))
	exact := hist.NewExact(hist.Microsecond, -10)
	exact.Record(812.5)
	exact.Record(3)
	custom, err := hist.NewCustom(hist.Microsecond, []float64{20, 40, math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := custom.AddCustom(0, 4); err != nil {
		t.Fatal(err)
	}
	ms := hist.Millisecond
	return []stream.Interval{
		// Histogram and mean series under the same key, with a custom
		// section before the means.
		{Source: "pg", Start: start, Duration: time.Second,
			Series: []stream.SeriesHist{{Key: stmtKey, Hist: exact}, {Key: blkKey, Hist: custom}},
			Means:  []stream.SeriesMean{{Key: stmtKey, Count: 2, Sum: 0.8155, Unit: ms}}},
		// Zero calls; a unit other than the definition's; a fractional
		// count; a count beyond uvarint range; a key listed twice; -0.
		{Source: "pg", Start: start.Add(time.Second), Duration: time.Second, Means: []stream.SeriesMean{
			{Key: stmtKey, Count: 0, Sum: 0, Unit: ms},
			{Key: blkKey, Count: 2.5, Sum: 1500, Unit: hist.Microsecond},
			{Key: stmtKey, Count: 1 << 63, Sum: math.Copysign(0, -1), Unit: hist.Second},
			{Key: stream.Key{Event: "io read", Instance: "client backend", Source: "relation"}, Count: math.MaxUint32, Sum: 1e-300, Unit: hist.Nanosecond}}},
		// A gap still carries what the source reported for it; a second
		// source shares the mean definitions.
		{Source: "pg", Start: start.Add(3 * time.Second), Duration: 2 * time.Second, Gap: true,
			Means: []stream.SeriesMean{{Key: blkKey, Count: 1, Sum: 0.25, Unit: ms}}},
		{Source: "other", Start: start, Duration: time.Second, Relative: true,
			Means: []stream.SeriesMean{{Key: blkKey, Count: 7, Sum: 3, Unit: ms}}},
		// Host figures that are not latencies: each quantity, fractional
		// and whole.
		{Source: "host:db1", Start: start.Add(6 * time.Second), Duration: time.Second, Means: []stream.SeriesMean{
			{Key: stream.Key{Event: "disk.r/s", Instance: "sda"}, Count: 1, Sum: 412, Unit: stream.QuantityUnit, Quantity: stream.PerSecond},
			{Key: stream.Key{Event: "disk.%util", Instance: "sda"}, Count: 1000.25, Sum: 31250, Unit: stream.QuantityUnit, Quantity: stream.Percent},
			{Key: stream.Key{Event: "disk.rkB/s", Instance: "sda"}, Count: 1, Sum: 1648, Unit: stream.QuantityUnit, Quantity: stream.KBPerSecond},
			{Key: stream.Key{Event: "mem.kbavail"}, Count: 1, Sum: 8e6, Unit: stream.QuantityUnit, Quantity: stream.KB},
			{Key: stream.Key{Event: "disk.aqu-sz", Instance: "sda"}, Count: 1000, Sum: 1730, Unit: stream.QuantityUnit, Quantity: stream.Count},
			{Key: stream.Key{Event: "x.ratio"}, Count: 2, Sum: 1, Unit: stream.QuantityUnit, Quantity: stream.Ratio},
			{Key: stream.Key{Event: "disk.r_await", Instance: "sda"}, Count: 412, Sum: 96.5, Unit: ms}}},
		// Histograms only, after means: no means section.
		{Source: "pg", Start: start.Add(5 * time.Second), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: stmtKey, Hist: exact}}},
	}
}

func TestMeansRoundTrip(t *testing.T) {
	ivs := meanEdgeCases(t)
	data := encode(t, ivs)
	got, err := decodeAll(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := diffIntervals(ivs, got); err != nil {
		t.Fatal(err)
	}
	// Concatenated: the second header starts a fresh mean series table.
	both := append(bytes.Clone(data), data...)
	got, err = decodeAll(both)
	if err != nil {
		t.Fatal(err)
	}
	if err := diffIntervals(append(slices.Clone(ivs), ivs...), got); err != nil {
		t.Fatal(err)
	}
}

// TestMeansAsOlderReaders checks what 1.1 and 1.0 readers see in a 1.2
// recording with means: the same intervals and histograms, no means.
func TestMeansAsOlderReaders(t *testing.T) {
	ivs := meanEdgeCases(t)
	data := encode(t, ivs)
	for _, version := range []string{"1.0", "1.1"} {
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		rd.asVersion10, rd.asVersion11 = version == "1.0", version == "1.1"
		for i, want := range ivs {
			iv, err := rd.Next()
			if err != nil {
				t.Fatalf("%s reader, interval %d: %v", version, i, err)
			}
			want.Means = nil
			if version == "1.0" {
				want.Series = slices.Clone(want.Series)
				for j, s := range want.Series {
					want.Series[j].Hist = toWire(s.Hist).main
				}
			}
			if err := diffInterval(want, iv); err != nil {
				t.Errorf("%s reader, interval %d: %v", version, i, err)
			}
		}
	}
}

// TestQuantitiesAsOlderReaders checks what a 1.2 reader written before
// quantities sees: every mean series, those with a quantity as latencies in
// ns with the same counts and sums.
func TestQuantitiesAsOlderReaders(t *testing.T) {
	ivs := meanEdgeCases(t)
	rd, err := NewReader(bytes.NewReader(encode(t, ivs)))
	if err != nil {
		t.Fatal(err)
	}
	rd.ignoreQuantities = true
	quantities := 0
	for i, want := range ivs {
		iv, err := rd.Next()
		if err != nil {
			t.Fatalf("interval %d: %v", i, err)
		}
		want.Means = slices.Clone(want.Means)
		for j := range want.Means {
			if !want.Means[j].Quantity.IsLatency() {
				want.Means[j].Quantity = stream.Latency
				quantities++
			}
		}
		if err := diffInterval(want, iv); err != nil {
			t.Errorf("interval %d: %v", i, err)
		}
	}
	if quantities == 0 {
		t.Fatal("no quantity tried")
	}
}

// TestMeansDamage cuts and corrupts the means: the reader names the
// offset of the frame that failed and keeps every interval before it.
func TestMeansDamage(t *testing.T) {
	ivs := goldenMeanIntervals()
	good := encode(t, ivs)
	_, ends, _ := frameEnds(t, good)
	second := ends[len(ends)-2] // the second interval frame starts here
	// File cut inside the second interval's mean entry.
	got, problems, err := replayBytes(t, good[:len(good)-7], ReplayOptions{})
	if err != nil || len(got) != 1 || diffInterval(ivs[0], got[0]) != nil || len(problems) != 1 ||
		problems[0].Reason != "byte offset 106: frame of 24 bytes cut short after 17 (recording truncated?)" {
		t.Errorf("file cut in a mean entry: %d intervals, %v, %v", len(got), problems, err)
	}
	if second != 106 {
		t.Errorf("second interval frame at %d, want 106", second)
	}
	// A frame with a valid CRC whose mean entry is cut short.
	n, k := binary.Uvarint(good[second:])
	payload := good[second+k+1 : second+k+1+int(n)]
	cut := append(bytes.Clone(good[:second]), rawFrame(frameInterval, payload[:len(payload)-3])...)
	got, problems, err = replayBytes(t, cut, ReplayOptions{})
	if err != nil || len(got) != 1 || len(problems) != 1 ||
		problems[0].Reason != "byte offset 106: interval of pg: mean sum: payload ends early" {
		t.Errorf("mean entry cut in its frame: %d intervals, %v, %v", len(got), problems, err)
	}
	// Payloads of the second interval: source 0, flags 0, start delta 0,
	// duration delta 0, no series, empty custom section, then the means.
	prefix := []byte{0, 0, 0, 0, 0, 0}
	cases := map[string]struct {
		means  []byte
		reason string
	}{
		"undefined id":  {[]byte{1, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, "undefined mean series id 2"},
		"unknown flag":  {[]byte{1, 0, 0x80, 1, 0, 0, 0, 0, 0, 0, 0, 0}, "unknown mean flags 0x80"},
		"bad unit":      {[]byte{1, 0, mUnit, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0}, "unit"},
		"negative sum":  {append([]byte{1, 0, 0, 1}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(-1))...), "must be finite and not negative"},
		"NaN count":     {append(append([]byte{1, 0, mFloat}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))...), 0, 0, 0, 0, 0, 0, 0, 0), "must be finite"},
		"too many":      {[]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, "mean series id: bad or truncated varint"},
		"entry cut":     {[]byte{1, 0, 0, 1, 0, 0}, "mean sum: payload ends early"},
		"count varint":  {[]byte{1, 0, 0, 0xff}, "mean count: bad or truncated varint"},
		"no entry body": {[]byte{1, 0}, "mean flags: payload ends early"},
	}
	for name, c := range cases {
		data := append(bytes.Clone(good[:second]), rawFrame(frameInterval, append(bytes.Clone(prefix), c.means...))...)
		got, err := decodeAll(data)
		var de *DamageError
		if !errors.As(err, &de) || de.Offset != int64(second) || len(got) != 1 || !strings.Contains(de.Reason, c.reason) {
			t.Errorf("%s: %d intervals, %v (want %q)", name, len(got), err, c.reason)
		}
	}
	// Definitions: out of sequence, bad unit, cut short.
	defs := map[string][]byte{
		"out of sequence": {5, 1, 'x', 0, 0, 0xc0, 0x84, 0x3d},
		"bad unit":        {2, 1, 'x', 0, 0, 7},
		"cut short":       {2, 1, 'x', 0},
	}
	for name, p := range defs {
		data := append(bytes.Clone(good[:second]), rawFrame(frameMeanSeries, p)...)
		got, err := decodeAll(data)
		var de *DamageError
		if !errors.As(err, &de) || de.Offset != int64(second) || len(got) != 1 ||
			!strings.HasPrefix(de.Reason, "mean series definition") {
			t.Errorf("definition %s: %d intervals, %v", name, len(got), err)
		}
	}
}

// TestMeansRefused checks the writer refuses what the reader would, and
// writes nothing for a refused interval.
func TestMeansRefused(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 5, 2, 10, 0, 0, 0, time.UTC)
	for _, m := range []stream.SeriesMean{
		{Key: stmtKey, Count: 1, Sum: 1, Unit: 7},
		{Key: stmtKey, Count: -1, Sum: 1, Unit: hist.Millisecond},
		{Key: stmtKey, Count: 1, Sum: math.Inf(1), Unit: hist.Millisecond},
	} {
		if err := w.Write(stream.Interval{Source: "pg", Start: start, Duration: time.Second, Means: []stream.SeriesMean{m}}); err == nil {
			t.Errorf("%+v accepted", m)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != len(Magic)+2 {
		t.Errorf("refused intervals wrote %d bytes", buf.Len()-len(Magic)-2)
	}
}

// TestMeansEventFilter checks --event applies to mean series too.
func TestMeansEventFilter(t *testing.T) {
	got, problems, err := replayBytes(t, encode(t, goldenMeanIntervals()), ReplayOptions{Events: []string{"blk read"}})
	if err != nil || len(problems) != 0 || len(got) != 2 {
		t.Fatalf("%d intervals, %v, %v", len(got), problems, err)
	}
	if len(got[0].Means) != 1 || got[0].Means[0].Key != blkKey || got[0].Means[0].Count != 3 || len(got[1].Means) != 0 {
		t.Errorf("filtered means: %+v, %+v", got[0].Means, got[1].Means)
	}
}
