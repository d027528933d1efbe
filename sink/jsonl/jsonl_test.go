package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/recordingtest"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// parsed is a line read back with encoding/json into plain values, as a
// jq or pandas user would see it.
type parsed map[string]any

func parseLines(t testing.TB, out []byte) []parsed {
	t.Helper()
	var lines []parsed
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var p parsed
		d := json.NewDecoder(strings.NewReader(sc.Text()))
		d.UseNumber()
		if err := d.Decode(&p); err != nil {
			t.Fatalf("line %d: %v: %s", n, err, sc.Text())
		}
		lines = append(lines, p)
	}
	return lines
}

func num(t testing.TB, v any) float64 {
	t.Helper()
	if v == nil {
		return math.Inf(1) // only custom top edges are null
	}
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// toInterval rebuilds an interval's series from its lines' native layout:
// every field the format documents as lossless.
func toHist(t testing.TB, p parsed) *hist.Histogram {
	t.Helper()
	lay, ok := p["layout"].(map[string]any)
	if !ok {
		return nil
	}
	unit, err := hist.ParseUnit(lay["unit"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var counts []float64
	for _, c := range lay["counts"].([]any) {
		counts = append(counts, num(t, c))
	}
	h := &hist.Histogram{Unit: unit, ZeroCount: num(t, lay["zero_count"]), Counts: counts, Sum: num(t, lay["sum"]),
		SumExact: p["sum_exact"].(bool), TopOpen: p["top_open"].(bool)}
	if lay["kind"] == "custom" {
		for _, e := range lay["edges"].([]any) {
			h.Bounds = append(h.Bounds, num(t, e))
		}
	} else {
		h.Scale, h.ZeroPow, h.Offset = int(num(t, lay["scale"])), int(num(t, lay["zero_pow"])), int(num(t, lay["offset"]))
	}
	if err := h.Validate(); err != nil {
		t.Fatalf("layout does not make a valid histogram: %v", err)
	}
	return h
}

// checkLossless reads the lines back into intervals and compares every
// field with the originals (the zone's name aside).
func checkLossless(t *testing.T, ivs []stream.Interval, lines []parsed) {
	t.Helper()
	i := 0
	var origin *time.Time // the first dated window's start
	for k, iv := range ivs {
		if !iv.Relative && origin == nil {
			origin = &iv.Start
		}
		n := max(len(iv.Series)+len(iv.Means), 1)
		if i+n > len(lines) {
			t.Fatalf("interval %d: lines run out", k)
		}
		for j := 0; j < n; j++ {
			p := lines[i+j]
			checkWindow(t, iv, p, origin)
			if len(iv.Series) == 0 && len(iv.Means) == 0 {
				if p["event"] != nil || p["layout"] != nil || num(t, p["count"]) != 0 || p["mean"] != nil {
					t.Fatalf("interval %d without series: %v", k, p)
				}
				continue
			}
			if j >= len(iv.Series) {
				checkMean(t, iv.Means[j-len(iv.Series)], p)
				continue
			}
			if p["mean"] != nil {
				t.Fatalf("interval %d series %d: a histogram line with a mean: %v", k, j, p)
			}
			s := iv.Series[j]
			if p["event"] != utf8Valid(s.Key.Event) || p["instance"] != utf8Valid(s.Key.Instance) || p["source"] != utf8Valid(s.Key.Source) {
				t.Fatalf("interval %d series %d: key %v %v %v, want %+v", k, j, p["event"], p["instance"], p["source"], s.Key)
			}
			if err := sameHist(s.Hist, toHist(t, p)); err != nil {
				t.Fatalf("interval %d series %s: %v", k, s.Key, err)
			}
			checkDerived(t, s.Hist, p)
		}
		i += n
	}
	if i != len(lines) {
		t.Fatalf("%d lines, intervals need %d", len(lines), i)
	}
}

// checkMean checks a mean series' line: key, count and sum in the series'
// own unit (exact), and the derived count, sum_us and mean_us.
func checkMean(t *testing.T, m stream.SeriesMean, p parsed) {
	t.Helper()
	if p["event"] != utf8Valid(m.Key.Event) || p["instance"] != utf8Valid(m.Key.Instance) || p["source"] != utf8Valid(m.Key.Source) {
		t.Fatalf("mean line key %v %v %v, want %+v", p["event"], p["instance"], p["source"], m.Key)
	}
	mp, ok := p["mean"].(map[string]any)
	if !ok || p["layout"] != nil || len(p["buckets"].([]any)) != 0 {
		t.Fatalf("mean line %v", p)
	}
	unit, err := hist.ParseUnit(mp["unit"].(string))
	if err != nil || unit != m.Unit || p["unit"] != mp["unit"] {
		t.Fatalf("mean unit %v (%v), want %s", mp["unit"], err, m.Unit)
	}
	toUs := float64(m.Unit) / float64(hist.Microsecond)
	if num(t, mp["count"]) != m.Count || num(t, mp["sum"]) != m.Sum || num(t, p["count"]) != m.Count ||
		num(t, p["sum_us"]) != m.Sum*toUs || p["sum_exact"] != true {
		t.Fatalf("mean line %v, want %+v", p, m)
	}
	want := m.Mean() / 1000
	if got := mp["mean_us"]; m.Count == 0 && got != nil || m.Count > 0 && num(t, got) != want {
		t.Fatalf("mean_us %v, want %g", got, want)
	}
}

// utf8Valid is s as JSON carries it: each byte that is not UTF-8 becomes
// U+FFFD (the documented exception to losslessness).
func utf8Valid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func checkWindow(t *testing.T, iv stream.Interval, p parsed, origin *time.Time) {
	t.Helper()
	if p["input"] != utf8Valid(iv.Source) || p["gap"] != iv.Gap {
		t.Fatalf("input %v gap %v, want %q %v", p["input"], p["gap"], iv.Source, iv.Gap)
	}
	if d := time.Duration(math.Round(num(t, p["seconds"]) * 1e9)); d != iv.Duration {
		t.Fatalf("%v seconds, want %s", p["seconds"], iv.Duration)
	}
	if iv.Relative {
		off := time.Duration(math.Round(num(t, p["offset_s"]) * 1e9))
		if p["start"] != nil || !stream.RelativeStart.Add(off).Equal(iv.Start) {
			t.Fatalf("relative start %v offset %v, want %s", p["start"], p["offset_s"], iv.Start)
		}
		return
	}
	start, err := time.Parse(time.RFC3339Nano, p["start"].(string))
	_, off := start.Zone()
	_, want := iv.Start.Zone()
	if want%60 != 0 {
		want = 0 // RFC 3339 offsets have no seconds: such starts are in UTC
	}
	if err != nil || !start.Equal(iv.Start) || off != want {
		t.Fatalf("start %v (%v), want %s", p["start"], err, iv.Start)
	}
	if d := iv.Start.Sub(*origin).Seconds(); num(t, p["offset_s"]) != d {
		t.Fatalf("offset_s %v, want %g s after the first window", p["offset_s"], d)
	}
}

// checkDerived checks the convenience fields against the histogram.
func checkDerived(t *testing.T, h *hist.Histogram, p parsed) {
	t.Helper()
	toUs := float64(h.Unit) / 1000
	if num(t, p["count"]) != h.Count() || num(t, p["sum_us"]) != h.Sum*toUs || p["unit"] != h.Unit.String() {
		t.Fatalf("count %v sum_us %v unit %v, want %g %g %s", p["count"], p["sum_us"], p["unit"], h.Count(), h.Sum*toUs, h.Unit)
	}
	buckets := p["buckets"].([]any)
	want := h.Buckets()
	if len(buckets) != len(want) {
		t.Fatalf("%d buckets, want %d", len(buckets), len(want))
	}
	total := 0.0
	for i, b := range buckets {
		m := b.(map[string]any)
		lo, hi, c := num(t, m["lower_us"]), num(t, m["upper_us"]), num(t, m["count"])
		if lo != want[i].Lower*toUs || hi != want[i].Upper*toUs || c != want[i].Count || (m["capped"] == true) != want[i].Capped {
			t.Fatalf("bucket %d: %v, want %+v (×%g)", i, m, want[i], toUs)
		}
		total += c
	}
	if total != h.Count() {
		t.Fatalf("buckets add up to %g, count %g", total, h.Count())
	}
}

func sameHist(a, b *hist.Histogram) error {
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	if b == nil {
		return errors.New("no layout")
	}
	if a.Unit != b.Unit || a.Scale != b.Scale || a.ZeroPow != b.ZeroPow || a.Offset != b.Offset || !same(a.ZeroCount, b.ZeroCount) ||
		!same(a.Sum, b.Sum) || a.SumExact != b.SumExact || a.TopOpen != b.TopOpen || len(a.Counts) != len(b.Counts) || len(a.Bounds) != len(b.Bounds) {
		return fmt.Errorf("got %+v, want %+v", b, a)
	}
	for i := range a.Counts {
		if !same(a.Counts[i], b.Counts[i]) {
			return fmt.Errorf("count %d: %g, want %g", i, b.Counts[i], a.Counts[i])
		}
	}
	for i := range a.Bounds {
		if !same(a.Bounds[i], b.Bounds[i]) {
			return fmt.Errorf("edge %d: %g, want %g", i, b.Bounds[i], a.Bounds[i])
		}
	}
	return nil
}

func TestExampleLatencyData(t *testing.T) {
	ivs := sourcetest.ReadShared(t, pylatencymap.Format(), "pylatencymap/example_latency_data.txt", source.Options{})
	out := sourcetest.WriteAll(t, Format(), ivs)
	lines := parseLines(t, out)
	checkLossless(t, ivs, lines)
	total := 0.0
	for _, p := range lines {
		total += num(t, p["count"])
	}
	// The input's last record minus its first, counted by the reader's own
	// test: 1237243 reads.
	if total != 1237243 {
		t.Errorf("counts add up to %g, want 1237243", total)
	}
	first := lines[0]
	if first["start"] != "2013-08-26T16:26:51.653754+02:00" || first["seconds"] != json.Number("3.01771") {
		t.Errorf("first line start %v seconds %v", first["start"], first["seconds"])
	}
	b0 := first["buckets"].([]any)[0].(map[string]any)
	if b0["lower_us"] != json.Number("0") || b0["upper_us"] != json.Number("1000") || b0["count"] != json.Number("1702") {
		t.Errorf("first bucket %v (Oracle's [0, 1) ms bucket of 1702 reads)", b0)
	}
	t.Logf("%d lines, %d bytes", len(lines), len(out))
}

// A real trace: exact µs sums at scale 6; the totals per event equal an
// independent count of the trace's WAIT lines.
func TestTraceTotalsEqualTheTrace(t *testing.T) {
	const trace = "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc" // Oracle 12.2: 40 waits of 13 events
	ivs := sourcetest.ReadShared(t, oracle10046.Format(), trace, source.Options{Interval: 100 * time.Millisecond})
	lines := parseLines(t, sourcetest.WriteAll(t, Format(), ivs))
	checkLossless(t, ivs, lines)
	count, sumUs := map[string]float64{}, map[string]float64{}
	for _, p := range lines {
		if p["event"] == nil {
			continue
		}
		if p["sum_exact"] != true {
			t.Fatalf("trace sum not exact: %v", p)
		}
		e := p["event"].(string)
		count[e] += num(t, p["count"])
		sumUs[e] += num(t, p["sum_us"])
	}
	wantCount, wantSum := waitTotals(t, trace)
	if len(count) != len(wantCount) {
		t.Errorf("%d events, the trace has %d", len(count), len(wantCount))
	}
	for e, n := range wantCount {
		if count[e] != n || math.Abs(sumUs[e]-wantSum[e]) > 1e-9*wantSum[e] {
			t.Errorf("%q: %g waits %g µs, the trace has %g waits %g µs", e, count[e], sumUs[e], n, wantSum[e])
		}
	}
}

// waitTotals counts WAIT lines and their ela per event by splitting lines.
func waitTotals(t testing.TB, rel string) (count, sum map[string]float64) {
	t.Helper()
	data, err := os.ReadFile(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	count, sum = map[string]float64{}, map[string]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "WAIT #") {
			continue
		}
		_, rest, _ := strings.Cut(line, "nam='")
		name, rest, _ := strings.Cut(rest, "'")
		_, rest, _ = strings.Cut(rest, "ela=")
		ela, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		count[name]++
		sum[name] += ela
	}
	return count, sum
}

// Synthetic: what real files rarely hold.
func TestGapsRelativeTimeAndCustomEdges(t *testing.T) {
	netapp, err := hist.NewCustom(hist.Microsecond, []float64{20, 40, 60, math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	_ = netapp.AddCustom(-1, 3)
	_ = netapp.AddCustom(2, 2)
	frac := hist.Rebin(netapp, hist.Nanosecond, 3)
	cest := time.FixedZone("CEST", 2*3600)
	ivs := []stream.Interval{
		{Source: "netapp", Start: time.Date(2015, 7, 14, 10, 0, 0, 0, cest), Duration: 5 * time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "nfs, \"read\"", Instance: "vol1", Source: "netapp"}, Hist: netapp}, {Key: stream.Key{Event: "ns"}, Hist: frac}}},
		{Source: "netapp", Start: time.Date(2015, 7, 14, 10, 0, 5, 0, cest), Duration: 5 * time.Second, Gap: true},
		{Source: "netapp", Start: time.Date(2015, 7, 14, 10, 0, 10, 0, cest), Duration: 5 * time.Second},
		{Source: "rel", Start: stream.RelativeStart.Add(1500 * time.Millisecond), Duration: 250 * time.Millisecond, Relative: true,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "e"}, Hist: hist.NewExact(hist.Second, -20)}}},
	}
	out := sourcetest.WriteAll(t, Format(), ivs)
	lines := parseLines(t, out)
	checkLossless(t, ivs, lines)
	first := string(out[:bytes.IndexByte(out, '\n')])
	for _, want := range []string{`"start":"2015-07-14T10:00:00+02:00"`, `"event":"nfs, \"read\""`, `"edges":[20,40,60,null]`,
		`{"lower_us":60,"upper_us":120,"count":2,"capped":true}`, `"kind":"custom"`} {
		if !strings.Contains(first, want) {
			t.Errorf("first line lacks %s:\n%s", want, first)
		}
	}
	if !strings.Contains(string(out), `{"start":null,"offset_s":1.5,"seconds":0.25,"gap":false,"input":"rel","event":"e"`) ||
		!strings.Contains(string(out), `{"start":"2015-07-14T10:00:10+02:00","offset_s":10,"seconds":5,"gap":false,"input":"netapp","event":null`) {
		t.Errorf("relative line:\n%s", out)
	}
}

// jq, the tool users reach for, reads the file and adds up the same total.
func TestJqReadsTheLines(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		testenv.SkipOrFail(t, "jq not installed (apt-get install jq)")
	}
	out := sourcetest.WriteAll(t, Format(), sourcetest.ReadShared(t, pylatencymap.Format(), "pylatencymap/example_latency_data.txt", source.Options{}))
	cmd := exec.Command(jq, "-s", `[.[].count] | add`)
	cmd.Stdin = bytes.NewReader(out)
	got, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(got)) != "1237243" {
		t.Errorf("jq total %q (%v), want 1237243", got, err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorsAreReported(t *testing.T) {
	w := NewWriter(failingWriter{})
	iv := stream.Interval{Source: "s", Start: time.Unix(1e9, 0), Duration: time.Second}
	for range 1000 { // fill the buffer
		if err := w.Write(iv); err != nil {
			break
		}
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close: %v", err)
	}
}

// FuzzWriter writes arbitrary valid streams (fuzzed recording frames seeded
// with real data): every line must parse and read back losslessly.
func FuzzWriter(f *testing.F) {
	f.Add(recordingtest.Chunks(recordingtest.Encode(sourcetest.ReadShared(f, pylatencymap.Format(), "pylatencymap/example_latency_data.txt", source.Options{})[:4])))
	f.Add(recordingtest.Chunks(recordingtest.Encode(sourcetest.ReadShared(f, oracle10046.Format(), "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc",
		source.Options{Interval: 10 * time.Millisecond}))))
	f.Add(recordingtest.Chunks(recordingtest.Encode(meanIntervals())))
	f.Fuzz(func(t *testing.T, chunks []byte) {
		ivs := recordingtest.Intervals(chunks)
		for _, iv := range ivs {
			if iv.Duration >= 1<<51 || iv.Start.Sub(stream.RelativeStart) >= 1<<51 && iv.Relative {
				return // float seconds are exact below 2^51 ns (26 days)
			}
		}
		checkLossless(t, ivs, parseLines(t, sourcetest.WriteAll(t, Format(), ivs)))
	})
}

// meanIntervals are SYNTHETIC (no live PostgreSQL recording can be
// shipped): the shape the postgres source emits from pg_stat_statements
// (calls, total_exec_time in ms), a window without calls, and a gap.
func meanIntervals() []stream.Interval {
	start := time.Date(2024, 5, 2, 10, 0, 0, 0, time.UTC)
	stmt := stream.Key{Event: "SELECT 1", Instance: "shop"}
	return []stream.Interval{
		{Source: "pg", Start: start, Duration: time.Second,
			Means: []stream.SeriesMean{{Key: stmt, Count: 40, Sum: 12.5, Unit: hist.Millisecond},
				{Key: stream.Key{Event: "blk read"}, Count: 2.5, Sum: 750, Unit: hist.Microsecond}}},
		{Source: "pg", Start: start.Add(time.Second), Duration: time.Second,
			Means: []stream.SeriesMean{{Key: stmt, Count: 0, Sum: 0, Unit: hist.Millisecond}}},
		{Source: "pg", Start: start.Add(2 * time.Second), Duration: time.Second, Gap: true},
	}
}

func TestMeanSeries(t *testing.T) {
	ivs := meanIntervals()
	out := sourcetest.WriteAll(t, Format(), ivs)
	checkLossless(t, ivs, parseLines(t, out))
	want := `{"start":"2024-05-02T10:00:00Z","offset_s":0,"seconds":1,"gap":false,"input":"pg","event":"SELECT 1","instance":"shop","source":"","unit":"ms","count":40,"sum_us":12500,"sum_exact":true,"top_open":false,"buckets":[],"layout":null,"mean":{"unit":"ms","count":40,"sum":12.5,"mean_us":312.5}}
{"start":"2024-05-02T10:00:00Z","offset_s":0,"seconds":1,"gap":false,"input":"pg","event":"blk read","instance":"","source":"","unit":"us","count":2.5,"sum_us":750,"sum_exact":true,"top_open":false,"buckets":[],"layout":null,"mean":{"unit":"us","count":2.5,"sum":750,"mean_us":300}}
{"start":"2024-05-02T10:00:01Z","offset_s":1,"seconds":1,"gap":false,"input":"pg","event":"SELECT 1","instance":"shop","source":"","unit":"ms","count":0,"sum_us":0,"sum_exact":true,"top_open":false,"buckets":[],"layout":null,"mean":{"unit":"ms","count":0,"sum":0,"mean_us":null}}
{"start":"2024-05-02T10:00:02Z","offset_s":2,"seconds":1,"gap":true,"input":"pg","event":null,"instance":"","source":"","unit":null,"count":0,"sum_us":0,"sum_exact":false,"top_open":false,"buckets":[],"layout":null}
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
