package prometheus

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/events"
	"github.com/latscope/latscope/source/oracle10046"
	promsrc "github.com/latscope/latscope/source/prometheus"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// readAll runs a source format over r and returns its intervals.
func readAll(t testing.TB, f source.Format, name string, r io.Reader, opts source.Options) ([]stream.Interval, *input.Diagnostics) {
	t.Helper()
	diag := input.NewDiagnostics(nil, 100)
	src, err := f.Open(source.Input{Name: name, Reader: r, Diag: diag}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var ivs []stream.Interval
	if err := src.Run(context.Background(), func(iv stream.Interval) error {
		ivs = append(ivs, iv)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ivs, diag
}

// convert writes intervals with the sink and returns the text and warnings.
func convert(t testing.TB, ivs []stream.Interval) (string, []string) {
	t.Helper()
	out, warnings := sourcetest.WriteAllWarned(t, Format(), ivs)
	return string(out), warnings
}

// span is a bucket in seconds; an open top has hi = +Inf.
type span struct{ lo, hi, n float64 }

// originalSpans lists a histogram's non-empty buckets in seconds (custom
// ones from their edges).
func originalSpans(h *hist.Histogram) []span {
	if h.IsCustom() {
		out := readSpans(h)
		for i := range out {
			out[i].lo, out[i].hi = out[i].lo*float64(h.Unit)/1e9, out[i].hi*float64(h.Unit)/1e9
		}
		return out
	}
	var out []span
	for _, b := range h.Buckets() {
		s := span{b.Lower * float64(h.Unit) / 1e9, b.Upper * float64(h.Unit) / 1e9, b.Count}
		if b.Capped {
			s.hi = math.Inf(1)
		}
		out = append(out, s)
	}
	return out
}

// readSpans lists a read-back custom histogram's non-empty buckets from
// its edges (not through Buckets, which caps an open top).
func readSpans(h *hist.Histogram) []span {
	var out []span
	if h.ZeroCount > 0 {
		out = append(out, span{0, h.Bounds[0], h.ZeroCount})
	}
	for i, c := range h.Counts {
		if c > 0 {
			out = append(out, span{h.Bounds[i], h.Bounds[i+1], c})
		}
	}
	return out
}

// sameSpans compares edges exactly (the writer prints them so that they
// parse back to the same float64) and counts to rounding (cumulative
// counts are subtracted back).
func sameSpans(a, b []span) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].lo != b[i].lo || a[i].hi != b[i].hi || math.Abs(a[i].n-b[i].n) > 1e-9*max(1, a[i].n) {
			return false
		}
	}
	return true
}

// roundTrip converts intervals to Prometheus text, reads them back with
// latscope's prometheus reader and checks every interval, series, bucket
// and sum. It returns the text.
func roundTrip(t *testing.T, ivs []stream.Interval) string {
	t.Helper()
	text, _ := convert(t, ivs)
	back, diag := readAll(t, promsrc.Format(), "out.prom", strings.NewReader(text), source.Options{Location: time.UTC})
	if p := diag.Problems(); len(p) > 0 {
		t.Fatalf("reading back: %+v", p[0].First)
	}
	// Before the first series there is nothing to write: quiet time there
	// is not kept.
	for len(ivs) > 0 && len(ivs[0].Series) == 0 {
		ivs = ivs[1:]
	}
	// The reader emits an interval for every stretch between scrapes: the
	// original intervals, and quiet ones where the original had holes.
	j := 0
	for i, iv := range ivs {
		for j < len(back) && back[j].Start.Before(iv.Start.Truncate(time.Millisecond)) {
			if len(back[j].Series) > 0 || back[j].Gap {
				t.Fatalf("read-back interval %d at %s has data the original has not", j, back[j].Start)
			}
			j++
		}
		if j == len(back) {
			t.Fatalf("original interval %d at %s not read back", i, iv.Start)
		}
		b := back[j]
		j++
		// Sample timestamps are in ms: times read back are truncated.
		start, end := iv.Start.Truncate(time.Millisecond), iv.End().Truncate(time.Millisecond)
		if !b.Start.Equal(start) || b.Duration != end.Sub(start) || b.Gap != iv.Gap || b.Relative != iv.Relative {
			t.Fatalf("interval %d: read back %s+%s gap %v relative %v, wrote %s+%s gap %v relative %v",
				i, b.Start, b.Duration, b.Gap, b.Relative, iv.Start, iv.Duration, iv.Gap, iv.Relative)
		}
		if len(b.Series) != len(nonEmpty(iv.Series)) {
			t.Fatalf("interval %d: %d series read back, %d written", i, len(b.Series), len(nonEmpty(iv.Series)))
		}
		for _, s := range iv.Series {
			rb := findSeries(b, s.Key)
			if rb == nil {
				t.Fatalf("interval %d: series %s not read back", i, s.Key)
			}
			if got, want := readSpans(rb), originalSpans(s.Hist); !sameSpans(got, want) {
				t.Fatalf("interval %d %s: buckets read back\n%v\nwritten\n%v", i, s.Key, got, want)
			}
			want := s.Hist.Sum * float64(s.Hist.Unit) / 1e9
			if math.Abs(rb.Sum-want) > 1e-9*max(want, 1e-6) {
				t.Fatalf("interval %d %s: sum %g s read back, %g written", i, s.Key, rb.Sum, want)
			}
		}
	}
	return text
}

func nonEmpty(ss []stream.SeriesHist) []stream.SeriesHist {
	var out []stream.SeriesHist
	for _, s := range ss {
		if s.Hist.Count() > 0 {
			out = append(out, s)
		}
	}
	return out
}

func findSeries(iv stream.Interval, k stream.Key) *hist.Histogram {
	for _, s := range iv.Series {
		if s.Key == k {
			return s.Hist
		}
	}
	return nil
}

func readShared(t *testing.T, f source.Format, rel string, opts source.Options) []stream.Interval {
	t.Helper()
	fh, err := os.Open(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	opts.Location = time.UTC
	ivs, _ := readAll(t, f, rel, fh, opts)
	if len(ivs) == 0 {
		t.Fatalf("%s gave no intervals", rel)
	}
	return ivs
}

// TestRoundTripPyLatencyMap: power-of-two histograms (µs and ms records,
// RAC instances summed) from PyLatencyMap's real sample data.
func TestRoundTripPyLatencyMap(t *testing.T) {
	for _, rel := range []string{"pylatencymap/example_latency_data.txt", "pylatencymap/test_SystemTap_data.txt"} {
		ivs := readShared(t, pylatencymap.Format(), rel, source.Options{})
		roundTrip(t, ivs)
	}
}

// TestRoundTripTrace: exact histograms (64 buckets per power of two) of a
// real Oracle 10046 trace (12.2) binned per 100 ms: many events and series,
// quiet stretches, series coming and going.
func TestRoundTripTrace(t *testing.T) {
	ivs := readShared(t, oracle10046.Format(), "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc",
		source.Options{Interval: 100 * time.Millisecond})
	if len(ivs) < 20 {
		t.Fatalf("%d intervals: the test wants many", len(ivs))
	}
	text := roundTrip(t, ivs)
	checkExpfmt(t, text)
	t.Logf("%d intervals, %d bytes of exposition text", len(ivs), len(text))
}

// TestRoundTripRelative: relative time (iosnoop's monotonic seconds) is
// written as ms since 1970 and read back as relative time.
func TestRoundTripRelative(t *testing.T) {
	fh, err := os.Open("../../source/events/testdata/iosnoop_example.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	ivs, _ := readAll(t, events.Format(), "iosnoop", fh, source.Options{})
	if !ivs[0].Relative {
		t.Fatal("the iosnoop example should be relative")
	}
	roundTrip(t, ivs)
}

// TestGapAndCustom: custom edges, a gap (written as a counter reset) and a
// hole between intervals (a quiet interval when read back).
func TestGapAndCustom(t *testing.T) {
	t0 := time.Date(2024, 3, 14, 12, 0, 0, 0, time.UTC)
	custom := func(counts ...float64) *hist.Histogram {
		h, err := hist.NewCustom(hist.Microsecond, []float64{20, 40, 60, 1000, math.Inf(1)})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range counts {
			if err := h.AddCustom(i-1, c); err != nil {
				t.Fatal(err)
			}
		}
		return h
	}
	key := stream.Key{Event: "nfs_protocol_read_latency", Instance: "vol1", Source: "filer \"a\"\n"}
	ivs := []stream.Interval{
		{Start: t0, Duration: 5 * time.Second, Series: []stream.SeriesHist{{Key: key, Hist: custom(1, 2, 0, 3, 1)}}},
		{Start: t0.Add(5 * time.Second), Duration: 5 * time.Second, Gap: true},
		{Start: t0.Add(10 * time.Second), Duration: 5 * time.Second, Series: []stream.SeriesHist{{Key: key, Hist: custom(0, 0, 7)}}},
		{Start: t0.Add(30 * time.Second), Duration: 5 * time.Second, Series: []stream.SeriesHist{{Key: key, Hist: custom(0, 1)}}},
	}
	text, warnings := convert(t, ivs)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "sums are estimates") {
		t.Errorf("warnings %q", warnings)
	}
	roundTrip(t, ivs)
	checkExpfmt(t, text)
	// The label value is escaped as the format wants.
	if !strings.Contains(text, `source="filer \"a\"\n"`) {
		t.Errorf("label not escaped:\n%s", text)
	}
}

// TestFirstScrapeLines pins the text of the first two scrapes of a small
// stream.
func TestFirstScrapeLines(t *testing.T) {
	h := hist.NewBuckets(hist.Millisecond)
	_ = h.AddBound(hist.LowerBound, 2, 3) // [2, 4) ms
	_ = h.AddBound(hist.LowerBound, 0, 1) // [0, 1) ms
	iv := stream.Interval{Start: time.UnixMilli(1700000000000), Duration: time.Second,
		Series: []stream.SeriesHist{{Key: stream.Key{Event: "read"}, Hist: h}}}
	text, _ := convert(t, []stream.Interval{iv})
	want := `# HELP latscope_latency_seconds Latency histograms written by latscope.
# TYPE latscope_latency_seconds histogram
latscope_latency_seconds_bucket{event="read",le="0.001"} 0 1700000000000
latscope_latency_seconds_bucket{event="read",le="0.002"} 0 1700000000000
latscope_latency_seconds_bucket{event="read",le="0.004"} 0 1700000000000
latscope_latency_seconds_bucket{event="read",le="+Inf"} 0 1700000000000
latscope_latency_seconds_sum{event="read"} 0 1700000000000
latscope_latency_seconds_count{event="read"} 0 1700000000000
# HELP latscope_latency_seconds Latency histograms written by latscope.
# TYPE latscope_latency_seconds histogram
latscope_latency_seconds_bucket{event="read",le="0.001"} 1 1700000001000
latscope_latency_seconds_bucket{event="read",le="0.002"} 1 1700000001000
latscope_latency_seconds_bucket{event="read",le="0.004"} 4 1700000001000
latscope_latency_seconds_bucket{event="read",le="+Inf"} 4 1700000001000
latscope_latency_seconds_sum{event="read"} 0.0095 1700000001000
latscope_latency_seconds_count{event="read"} 4 1700000001000
`
	if text != want {
		t.Errorf("text\n%s\nwant\n%s", text, want)
	}
}

// checkExpfmt parses every scrape of the output with Prometheus' own text
// parser: one histogram family, every series' buckets cumulative in le and
// never decreasing from one scrape to the next, +Inf equal to _count.
func checkExpfmt(t *testing.T, text string) {
	t.Helper()
	scrapes := strings.Split(text, "# HELP ")[1:]
	prev := map[string]float64{}
	for i, s := range scrapes {
		p := expfmt.NewTextParser(model.LegacyValidation)
		mfs, err := p.TextToMetricFamilies(strings.NewReader("# HELP " + s))
		if err != nil {
			t.Fatalf("scrape %d: %v", i, err)
		}
		mf := mfs[MetricName]
		if len(mfs) != 1 || mf == nil {
			t.Fatalf("scrape %d: families %v", i, mfs)
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			last := 0.0
			for _, b := range h.GetBucket() {
				c := b.GetCumulativeCountFloat() + float64(b.GetCumulativeCount())
				if c < last {
					t.Fatalf("scrape %d: counts decrease with le", i)
				}
				last = c
				id := fmt.Sprint(m.GetLabel(), b.GetUpperBound())
				if c < prev[id] && i > 0 {
					// Only a gap (a reset to zero) may lower a counter.
					if c != 0 {
						t.Fatalf("scrape %d: bucket %s went from %g to %g", i, id, prev[id], c)
					}
				}
				prev[id] = c
			}
			count := h.GetSampleCountFloat() + float64(h.GetSampleCount())
			if math.IsInf(h.GetBucket()[len(h.GetBucket())-1].GetUpperBound(), 1) && last != count {
				t.Fatalf("scrape %d: +Inf %g, _count %g", i, last, count)
			}
			if m.GetTimestampMs() == 0 {
				t.Fatalf("scrape %d: no timestamp", i)
			}
		}
	}
}
