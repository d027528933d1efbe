package hdrlog

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

type result struct {
	intervals []stream.Interval
	diag      *input.Diagnostics
	err       error
}

func (r result) malformed() []string {
	var out []string
	for _, sp := range r.diag.Problems() {
		for _, p := range sp.First {
			out = append(out, fmt.Sprintf("%d: %s", p.Line, p.Reason))
		}
	}
	return out
}

// byEvent merges every interval's histogram per event.
func (r result) byEvent() map[string]*hist.Histogram {
	out := map[string]*hist.Histogram{}
	for _, iv := range r.intervals {
		for _, s := range iv.Series {
			if h := out[s.Key.Event]; h != nil {
				h.Merge(s.Hist)
			} else {
				out[s.Key.Event] = s.Hist.Clone()
			}
		}
	}
	return out
}

func run(t testing.TB, data []byte, opts source.Options) result {
	t.Helper()
	diag := input.NewDiagnostics(nil, 1000)
	src, err := Format().Open(source.Input{Name: "in.hlog", Reader: bytes.NewReader(data), Diag: diag}, opts)
	if err != nil {
		t.Fatal(err)
	}
	res := result{diag: diag}
	res.err = src.Run(context.Background(), func(iv stream.Interval) error {
		if err := iv.Validate(); err != nil {
			t.Fatalf("invalid interval: %v", err)
		}
		res.intervals = append(res.intervals, iv)
		return nil
	})
	return res
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// libLine is one data line as the Go HdrHistogram library reads it.
type libLine struct {
	tag     string
	startMs int64
	endMs   int64
	h       *hdr.Histogram
}

// readWithLibrary reads a log with the library's own HistogramLogReader:
// the independent reference.
func readWithLibrary(t testing.TB, data []byte) []libLine {
	t.Helper()
	lr := hdr.NewHistogramLogReader(bytes.NewReader(data))
	var out []libLine
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("library reader: %v", err)
		}
		if h == nil {
			return out
		}
		out = append(out, libLine{tag: h.Tag(), startMs: h.StartTimeMs(), endMs: h.EndTimeMs(), h: h})
	}
}

// checkAgainstLibrary holds latscope's reading against the library's: one
// series per line, same count, start to the millisecond, and percentiles
// within latscope's bucket (1/64 of the value) plus HDR's own precision.
func checkAgainstLibrary(t *testing.T, res result, lib []libLine) {
	t.Helper()
	var series []stream.SeriesHist
	var starts []time.Time
	for _, iv := range res.intervals {
		for _, s := range iv.Series {
			series = append(series, s)
			starts = append(starts, iv.Start)
		}
	}
	if len(series) != len(lib) {
		t.Fatalf("%d series lines, the library reads %d", len(series), len(lib))
	}
	for i, l := range lib {
		s := series[i]
		wantEvent := l.tag
		if wantEvent == "" {
			wantEvent = untagged
		}
		if s.Key.Event != wantEvent || s.Hist.Count() != float64(l.h.TotalCount()) {
			t.Errorf("line %d: %s with %.0f, library %q with %d", i, s.Key.Event, s.Hist.Count(), l.tag, l.h.TotalCount())
		}
		// The library truncates start·1000 in float64 (…290.607 s becomes
		// …290606 ms); latscope reads the decimals exactly.
		if d := starts[i].UnixMilli() - l.startMs; d < 0 || d > 1 {
			t.Errorf("line %d: starts %d ms, library %d ms", i, starts[i].UnixMilli(), l.startMs)
		}
		for _, q := range []float64{0.5, 0.9, 0.99, 1} {
			want := float64(l.h.ValueAtQuantile(q * 100))
			// HdrHistogram rounds the rank to a whole event; ask latscope for
			// the same event so that only the bucket layouts differ.
			n := float64(l.h.TotalCount())
			got := s.Hist.Quantile(math.Max(1, math.Min(n, math.Floor(q*n+0.5))) / n)
			// The library reports the top of its bucket, latscope places the
			// bucket at its median: they differ by at most the HDR bucket plus
			// one latscope bucket (1/64 of the value).
			if math.Abs(got-want) > hdrWidth(l.h, want)+want/64+1 {
				t.Errorf("line %d: p%g = %.0f, library %.0f", i, q*100, got, want)
			}
		}
	}
}

// jHiccup's own logs (Java HdrHistogram, format 1.2, relative timestamps
// after a StartTime): every line read, as the Go library reads it.
func TestJHiccupLogs(t *testing.T) {
	for _, name := range []string{"jHiccup-2.0.7S.logV2.hlog", "tagged-Log.logV2.hlog"} {
		t.Run(name, func(t *testing.T) {
			data := readTestdata(t, name)
			if v := Detect(data); v != input.Yes {
				t.Fatalf("Detect = %v", v)
			}
			res := run(t, data, source.Options{})
			if res.err != nil || len(res.malformed()) > 0 || len(res.diag.Warnings()) > 0 {
				t.Fatalf("err %v malformed %q warnings %q", res.err, res.malformed(), res.diag.Warnings())
			}
			lib := readWithLibrary(t, data)
			checkAgainstLibrary(t, res, lib)
			// StartTime 1441812279.474 + 0.127: wall clock, not relative.
			first := res.intervals[0]
			if first.Relative || first.Start.UnixMilli() != 1441812279601 || first.Duration != 1007*time.Millisecond {
				t.Errorf("first window %s + %s relative %v", first.Start, first.Duration, first.Relative)
			}
			if name == "tagged-Log.logV2.hlog" {
				// The untagged and Tag=A lines share windows: one interval, two series.
				if len(res.intervals) != len(lib)/2 || len(first.Series) != 2 || first.Series[1].Key.Event != "A" {
					t.Errorf("%d intervals for %d lines; first has %d series", len(res.intervals), len(lib), len(first.Series))
				}
				ev := res.byEvent()
				if ev["A"].Count() != ev[untagged].Count() || ev["A"].Count() == 0 {
					t.Errorf("tag A %.0f, untagged %.0f: the file duplicates every line", ev["A"].Count(), ev[untagged].Count())
				}
			}
		})
	}
}

// The V1 encoding of older jHiccup logs is not decoded by the Go library:
// every data line is reported, none kept, no panic.
func TestOlderEncodingReported(t *testing.T) {
	data := readTestdata(t, "jHiccup-2.0.6.logV1.hlog")
	res := run(t, data, source.Options{})
	got := res.malformed()
	if res.err != nil || len(res.intervals) != 0 || len(got) == 0 || !strings.Contains(got[0], "only V2 is supported") {
		t.Errorf("err %v, %d intervals, malformed %q", res.err, len(res.intervals), got[:min(len(got), 2)])
	}
}

// A log written by the Go library's HistogramLogWriter (a real HdrHistogram
// writer): two tags over three 5 s intervals of known latencies in ns,
// absolute times from StartTime/BaseTime. Counts are exact, percentiles
// within a bucket, sums within 1 %.
func TestGoLibraryWrittenLog(t *testing.T) {
	var buf bytes.Buffer
	lw := hdr.NewHistogramLogWriter(&buf)
	base := int64(1_700_000_000_000)
	must(t, lw.OutputLogFormatVersion())
	must(t, lw.OutputStartTime(base))
	must(t, lw.OutputBaseTime(base))
	must(t, lw.OutputLegend())
	lw.SetBaseTime(base)
	rng := rand.New(rand.NewPCG(1, 2))
	type truth struct{ n, sum float64 }
	want := map[string]*truth{"read": {}, "write": {}}
	for i := int64(0); i < 3; i++ {
		for _, tag := range []string{"read", "write"} {
			h := hdr.New(1, 60_000_000_000, 3)
			for k := 0; k < 5000; k++ {
				v := int64(50_000 * math.Exp(rng.NormFloat64())) // log-normal around 50 µs
				must(t, h.RecordValue(v))
				want[tag].n++
				want[tag].sum += float64(v)
			}
			h.SetTag(tag)
			h.SetStartTimeMs(base + i*5000)
			h.SetEndTimeMs(base + (i+1)*5000)
			must(t, lw.OutputIntervalHistogram(h))
		}
	}
	data := buf.Bytes()
	res := run(t, data, source.Options{})
	if res.err != nil || len(res.malformed()) > 0 {
		t.Fatalf("err %v malformed %q", res.err, res.malformed())
	}
	if len(res.intervals) != 3 {
		t.Fatalf("%d intervals, want 3", len(res.intervals))
	}
	for i, iv := range res.intervals {
		if iv.Start.UnixMilli() != base+int64(i)*5000 || iv.Duration != 5*time.Second || iv.Relative {
			t.Errorf("interval %d: %s + %s", i, iv.Start, iv.Duration)
		}
	}
	checkAgainstLibrary(t, res, readWithLibrary(t, data))
	for tag, w := range want {
		h := res.byEvent()[tag]
		if h.Count() != w.n || h.Unit != hist.Nanosecond || h.SumExact {
			t.Errorf("%s: %.0f events in %s (exact sum %v), want %.0f in ns, estimated", tag, h.Count(), h.Unit, h.SumExact, w.n)
		}
		if math.Abs(h.Sum-w.sum) > 0.01*w.sum {
			t.Errorf("%s: sum %.0f, recorded %.0f", tag, h.Sum, w.sum)
		}
	}

	// --unit us: the same values read as microseconds.
	us := run(t, data, source.Options{Unit: hist.Microsecond}).byEvent()["read"]
	if us.Unit != hist.Microsecond || math.Abs(us.Sum-want["read"].sum) > 0.01*want["read"].sum {
		t.Errorf("--unit us: %s sum %.0f", us.Unit, us.Sum)
	}
}

// A log of running totals (each line the histogram since the start, as
// some tools write): --counts cumulative takes the differences.
func TestCumulativeLog(t *testing.T) {
	var buf bytes.Buffer
	lw := hdr.NewHistogramLogWriter(&buf)
	must(t, lw.OutputLegend())
	h := hdr.New(1, 1_000_000, 3)
	for i := int64(1); i <= 4; i++ {
		must(t, h.RecordValues(1000*i, 10*i)) // interval i adds 10·i events at i µs
		h.SetStartTimeMs(0)
		h.SetEndTimeMs(i * 1000)
		must(t, lw.OutputIntervalHistogram(h))
	}
	res := run(t, buf.Bytes(), source.Options{Counts: source.CountsCumulative})
	if res.err != nil || len(res.malformed()) > 0 {
		t.Fatalf("err %v malformed %q", res.err, res.malformed())
	}
	// The first line is the baseline; then 20, 30 and 40 new events.
	if len(res.intervals) != 3 {
		t.Fatalf("%d intervals, want 3", len(res.intervals))
	}
	for i, iv := range res.intervals {
		if n := iv.Series[0].Hist.Count(); n != float64(10*(i+2)) || !iv.Relative {
			t.Errorf("interval %d: %.0f events (relative %v), want %d", i, n, iv.Relative, 10*(i+2))
		}
	}
}

// Detection: HdrHistogram logs yes, every other real format no.
func TestDetect(t *testing.T) {
	for _, name := range []string{"jHiccup-2.0.7S.logV2.hlog", "tagged-Log.logV2.hlog", "jHiccup-2.0.6.logV1.hlog", "latscope-js122a1.hlog"} {
		if v := Detect(readTestdata(t, name)); v != input.Yes {
			t.Errorf("%s: %v", name, v)
		}
	}
	for _, in := range []string{"0.127,1.007,2.769,HISTFAAAAEV42pNp\n", "Tag=x,1,1,1,HISTF\n", "#[StartTime: 1 (s)]\n"} {
		if v := Detect([]byte(in)); v != input.Yes {
			t.Errorf("%q: %v", in, v)
		}
	}
	others := []string{"pylatencymap/example_latency_data.txt", "pylatencymap/test_DTrace_data.txt",
		"trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc"}
	for _, rel := range others {
		data, err := os.ReadFile(testenv.DataFile(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		if v := Detect(data[:min(len(data), 64<<10)]); v != input.No {
			t.Errorf("%s: %v", rel, v)
		}
	}
	fioDir := filepath.Join(testenv.RepoRoot(t), "source", "fio", "testdata")
	for _, name := range []string{"randread.json", "randread_clat_hist.1.log"} {
		data, err := os.ReadFile(filepath.Join(fioDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if v := Detect(data); v != input.No {
			t.Errorf("fio %s: %v", name, v)
		}
	}
	for _, in := range []string{"# HELP x\nx_bucket{le=\"1\"} 3\n", "{\n", "<begin record>\n", "# comment only\n"} {
		if v := Detect([]byte(in)); v == input.Yes {
			t.Errorf("%q: %v", in, v)
		}
	}
}

// Damage in a real log: a bad payload, a line cut short and a bad number
// are reported with their line numbers; the rest is kept.
func TestDamagedLog(t *testing.T) {
	lines := strings.Split(string(readTestdata(t, "jHiccup-2.0.7S.logV2.hlog")), "\n")
	lines[5] = lines[5][:len(lines[5])-10]                    // payload cut
	lines[6] = "1.x34" + lines[6][5:]                         // start
	lines[7] = strings.Replace(lines[7], "HISTF", "HISTX", 1) // cookie
	res := run(t, []byte(strings.Join(lines, "\n")), source.Options{})
	got := res.malformed()
	if res.err != nil || len(got) != 3 || !strings.HasPrefix(got[0], "6: ") || !strings.HasPrefix(got[1], "7: ") || !strings.HasPrefix(got[2], "8: ") {
		t.Errorf("err %v malformed %q", res.err, got)
	}
	good := run(t, readTestdata(t, "jHiccup-2.0.7S.logV2.hlog"), source.Options{})
	if len(res.intervals) != len(good.intervals)-3 {
		t.Errorf("%d intervals kept of %d", len(res.intervals), len(good.intervals))
	}
}

// A latscope-written log read without its comments is a plain HDR log:
// the same counts per series, on the per-event grid.
func TestLatscopeLogWithoutComments(t *testing.T) {
	data := readTestdata(t, "latscope-js122a1.hlog")
	full := run(t, data, source.Options{})
	var plain []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, CommentPrefix) {
			plain = append(plain, l)
		}
	}
	bare := run(t, []byte(strings.Join(plain, "\n")), source.Options{})
	if full.err != nil || bare.err != nil || len(full.malformed())+len(bare.malformed()) > 0 {
		t.Fatalf("errors %v %v, malformed %q %q", full.err, bare.err, full.malformed(), bare.malformed())
	}
	a, b := full.byEvent(), bare.byEvent()
	if len(a) != len(b) {
		t.Fatalf("%d series with comments, %d without", len(a), len(b))
	}
	for ev, h := range a {
		tag := SafeTag(ev + "@js122a1")
		if b[tag] == nil || b[tag].Count() != h.Count() || h.Unit != hist.Microsecond || b[tag].Unit != hist.Nanosecond {
			t.Errorf("%s: %v with comments, %v without", ev, h, b[tag])
		}
	}
}

// hdrWidth returns the width of the HDR bucket holding v.
func hdrWidth(h *hdr.Histogram, v float64) float64 {
	for _, b := range h.Distribution() {
		if float64(b.From) <= v && v <= float64(b.To) {
			return float64(b.To - b.From + 1)
		}
	}
	return 0
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
