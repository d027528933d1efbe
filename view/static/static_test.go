package static

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

func TestWriteDispatchesOnExtension(t *testing.T) {
	dir := t.TempDir()
	magic := map[string]string{
		"a.html": "<!DOCTYPE html>", "b.HTM": "<!DOCTYPE html>", "c.svg": "<?xml", "d.Png": "\x89PNG\r\n\x1a\n",
	}
	for name, want := range magic {
		p := filepath.Join(dir, name)
		if err := Write(p, knownRecording(), Options{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, err := os.ReadFile(p)
		if err != nil || !strings.HasPrefix(string(data), want) {
			t.Errorf("%s starts with %q (%v), want %q", name, data[:min(len(data), 16)], err, want)
		}
	}
	p := filepath.Join(dir, "e.jpg")
	err := Write(p, knownRecording(), Options{})
	if !errors.Is(err, ErrUnsupportedFormat) {
		t.Fatalf("jpg: %v, want ErrUnsupportedFormat", err)
	}
	for _, ext := range []string{".html", ".htm", ".svg", ".png", "e.jpg"} {
		if !strings.Contains(err.Error(), ext) {
			t.Errorf("error %q does not name %s", err, ext)
		}
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Error("an unsupported extension still created the file")
	}
	if err := Write(filepath.Join(dir, "missing", "x.svg"), knownRecording(), Options{}); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestGapOriginFits(t *testing.T) {
	// Found by FuzzWrite: a gap first and data an hour later built a frame
	// of 3601 columns with MaxColumns 10.
	ivs := knownRecording()[2:5]
	ivs[1].Start = ivs[0].Start.Add(time.Hour)
	ivs[2].Start = ivs[0].Start.Add(2 * time.Hour)
	r := buildReport(ivs, Options{MaxColumns: 10})
	if r.Columns > 10 || len(r.Frames) != 1 || len(r.Frames[0].Columns) != r.Columns {
		t.Errorf("%d columns of %s", r.Columns, r.Width)
	}
}

func TestMaxColumnsOption(t *testing.T) {
	r := buildReport(randomRecording(500, 1, time.Second, 1), Options{MaxColumns: 100, ColumnWidth: 2 * time.Second})
	if r.Columns > 100 || r.Width != 6*time.Second || r.Asked != 2*time.Second {
		t.Errorf("%d columns of %s (asked %s)", r.Columns, r.Width, r.Asked)
	}
	r = buildReport(randomRecording(50, 1, time.Second, 1), Options{ColumnWidth: 5 * time.Second, Scale: heatmap.Log})
	if r.Columns != 10 || r.Width != 5*time.Second || r.Frames[0].Scale != heatmap.Log {
		t.Errorf("%d columns of %s", r.Columns, r.Width)
	}
}

func TestTitleDefaultsToSources(t *testing.T) {
	ivs := knownRecording()
	ivs[3].Source = "other.txt"
	if got := buildReport(ivs, Options{}).Title; got != "synthetic, other.txt" {
		t.Errorf("title %q", got)
	}
	if got := buildReport(ivs, Options{Title: "T"}).Title; got != "T" {
		t.Errorf("title %q", got)
	}
}

func TestTimeTicks(t *testing.T) {
	// 400 columns of 3 s from 10:00:00 at 2.35 px per column: a tick every
	// minute or more, on round minutes, the date on the first only.
	r := buildReport(randomRecording(400, 1, 3*time.Second, 1), Options{})
	ticks := timeTicks(r, 940.0/400, 110)
	if len(ticks) < 4 || ticks[0].label != "10:00" || ticks[0].date != "2024-03-05" || ticks[0].x != 0 {
		t.Fatalf("ticks %+v", ticks)
	}
	for i, tk := range ticks[1:] {
		if tk.date != "" || !strings.HasSuffix(tk.label, "0") && !strings.HasSuffix(tk.label, "5") {
			t.Errorf("tick %d %+v", i+1, tk)
		}
		if gap := tk.x - ticks[i].x; gap < 110 {
			t.Errorf("ticks %g px apart", gap)
		}
	}
	// Relative recordings count from zero.
	ivs := knownRecording()
	for i := range ivs {
		ivs[i].Relative = true
		ivs[i].Start = stream.RelativeStart.Add(time.Duration(i) * time.Minute)
		ivs[i].Duration = time.Minute
	}
	r = buildReport(ivs, Options{})
	ticks = timeTicks(r, 100, 110)
	if len(ticks) == 0 || ticks[0].label != "+0s" || ticks[1].label != "+2m" || ticks[0].date != "" {
		t.Errorf("relative ticks %+v", ticks)
	}
}

func TestFormatting(t *testing.T) {
	nums := map[float64]string{0: "0", 0.0012: "0.0012", 1.2e-5: "1.2e-5", 0.25: "0.25", 12.34: "12.3",
		456: "456", 12345: "12.3k", 4.56e6: "4.56M", 7e9: "7G", math.NaN(): "–"}
	for v, want := range nums {
		if got := formatNumber(v); got != want {
			t.Errorf("formatNumber(%g) = %q, want %q", v, got, want)
		}
	}
	events := map[float64]string{0: "0", 999: "999", 1234567: "1,234,567", 12.5: "12.5"}
	for v, want := range events {
		if got := formatEvents(v); got != want {
			t.Errorf("formatEvents(%g) = %q, want %q", v, got, want)
		}
	}
	spans := map[time.Duration]string{3 * time.Second: "3s", 90 * time.Second: "1m30s", time.Minute: "1m",
		2 * time.Hour: "2h", 250 * time.Millisecond: "250ms", 17 * time.Second: "17s"}
	for d, want := range spans {
		if got := formatSpan(d); got != want {
			t.Errorf("formatSpan(%s) = %q, want %q", d, got, want)
		}
	}
	floats := map[float64]string{12.5: "12.5", 0.003125: "0.003125", 1.2344e-7: "1.234e-7", 100: "100",
		2.0 / 3: "0.6667", 123456: "1.235e5"}
	for v, want := range floats {
		if got := compactFloat(v); got != want {
			t.Errorf("compactFloat(%g) = %q, want %q", v, got, want)
		}
	}
	rows := []struct {
		row  heatmap.Row
		want string
	}{
		{heatmap.Row{Lower: 1024e3, Upper: 2048e3}, "1.02ms – 2.05ms"},
		{heatmap.Row{Lower: 0, Upper: 1e3, FoldsBelow: true}, "< 1µs"},
		{heatmap.Row{Lower: 1.024e9, Upper: math.Inf(1), FoldsAbove: true}, "≥ 1.02s"},
	}
	for _, c := range rows {
		if got := bucketRange(c.row); got != c.want {
			t.Errorf("bucketRange(%+v) = %q, want %q", c.row, got, c.want)
		}
	}
	if got := zoneName(syntheticStart); got != "UTC+02:00" {
		t.Errorf("zone %q", got)
	}
	if got := formatRange(syntheticStart, syntheticStart.Add(25*time.Hour), time.Hour, false); got !=
		"2024-03-05 10:00:00 – 2024-03-06 11:00:00" {
		t.Errorf("range over a day change %q", got)
	}
	if got := formatRange(syntheticStart, syntheticStart.Add(1500*time.Millisecond), 1500*time.Millisecond, false); got !=
		"2024-03-05 10:00:00.000 – 10:00:01.500" {
		t.Errorf("sub-second range %q", got)
	}
}

func TestLegendRanges(t *testing.T) {
	m := &heatmap.Map{Mode: heatmap.Frequency, Max: 60, MinNonZero: 1}
	lin := levelRanges(m, heatmap.Linear)
	if lin[1] != "0 – 10" || lin[6] != "50 – 60" {
		t.Errorf("linear %q", lin)
	}
	m.Max = 1e6
	lg := levelRanges(m, heatmap.Log)
	if lg[1] != "1 – 10" || lg[6] != "100k – 1M" {
		t.Errorf("log %q", lg)
	}
	if empty := levelRanges(&heatmap.Map{}, heatmap.Linear); empty != [heatmap.Levels + 1]string{} {
		t.Errorf("empty map %q", empty)
	}
	im := &heatmap.Map{Mode: heatmap.Intensity, Max: 0.06}
	if got := levelRanges(im, heatmap.Linear)[6]; got != "50ms – 60ms" {
		t.Errorf("intensity %q", got)
	}
}

func TestFooterStats(t *testing.T) {
	r := buildReport(knownRecording(), Options{})
	lines := footerLines(r, 0)
	// 180 events: 70 × 100µs, 30 × 1ms, 80 × 10ms = 837 ms exactly.
	if !strings.Contains(lines[0], "Total: 180 events") || !strings.Contains(lines[0], "time waited 837ms (exact)") {
		t.Errorf("footer %q", lines[0])
	}
	if !strings.Contains(lines[1], "10s ending 2024-03-05 10:01:10") || !strings.Contains(lines[1], "20 events") {
		t.Errorf("footer %q", lines[1])
	}
	// Bucket sources say their sums are estimates.
	h := hist.NewBuckets(hist.Millisecond)
	_ = h.AddBound(hist.UpperBound, 8, 10)
	ivs := []stream.Interval{{Source: "o", Start: syntheticStart, Duration: time.Second,
		Series: []stream.SeriesHist{{Key: stream.Key{Event: "e"}, Hist: h}}}}
	if got := footerLines(buildReport(ivs, Options{}), 0)[0]; !strings.Contains(got, "estimated from bucket midpoints") {
		t.Errorf("footer %q", got)
	}
}

func TestWritersSurviveOddIntervals(t *testing.T) {
	// SYNTHETIC edge cases: zero and negative durations, mixed clocks,
	// empty histograms, out-of-order starts, a gap only.
	h := hist.NewExact(hist.Nanosecond, 0)
	_ = h.Record(5)
	k := stream.Key{Event: "e"}
	ivs := []stream.Interval{
		{Source: "a", Start: syntheticStart, Duration: 0},
		{Source: "a", Start: syntheticStart, Duration: -time.Second},
		{Source: "a", Start: syntheticStart.Add(time.Hour), Duration: time.Second, Series: []stream.SeriesHist{{Key: k, Hist: h}}},
		{Source: "b", Start: stream.RelativeStart, Duration: time.Second, Relative: true, Series: []stream.SeriesHist{{Key: k, Hist: h}}},
		{Source: "a", Start: syntheticStart, Duration: time.Second, Series: []stream.SeriesHist{{Key: stream.Key{Event: "empty"}, Hist: hist.NewExact(hist.Microsecond, 0)}}},
		{Source: "a", Start: syntheticStart.Add(2 * time.Hour), Duration: time.Second, Gap: true},
	}
	for _, w := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return WriteHTML(b, ivs, Options{}) },
		func(b *bytes.Buffer) error { return WriteSVG(b, ivs, Options{}) },
		func(b *bytes.Buffer) error { return WritePNG(b, ivs, Options{}) },
	} {
		var buf bytes.Buffer
		if err := w(&buf); err != nil {
			t.Fatal(err)
		}
	}
	var svg bytes.Buffer
	_ = WriteSVG(&svg, ivs, Options{})
	parseSVG(t, svg.Bytes())
	if r := buildReport(ivs, Options{}); r.Skipped == 0 || r.Columns > DefaultMaxColumns {
		t.Errorf("skipped %d, columns %d", r.Skipped, r.Columns)
	}
}
