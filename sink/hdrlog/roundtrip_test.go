package hdrlog

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/fio"
	reader "github.com/latscope/latscope/source/hdrlog"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// readThrough reads a file through a real source and gathers its intervals
// as `latscope convert` does (a stream.Recording, in time order).
func readThrough(t *testing.T, f source.Format, path string, opts source.Options) []stream.Interval {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	diag := input.NewDiagnostics(nil, 5)
	src, err := f.Open(source.Input{Name: filepath.Base(path), Reader: bytes.NewReader(data), Diag: diag, ModTime: st.ModTime()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var rec stream.Recording
	if err := src.Run(context.Background(), func(iv stream.Interval) error {
		if err := iv.Validate(); err != nil {
			t.Fatal(err)
		}
		rec.Add(iv)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rec.Intervals()
}

// writeLog converts intervals to an hdrlog and returns it with the
// warnings given.
func writeLog(t *testing.T, ivs []stream.Interval) ([]byte, []string) {
	t.Helper()
	return sourcetest.WriteAllWarned(t, Format(), ivs)
}

// readLog reads an hdrlog back through the hdrlog source.
func readLog(t *testing.T, data []byte, opts source.Options) ([]stream.Interval, *input.Diagnostics) {
	t.Helper()
	if v := reader.Detect(data); v != input.Yes {
		t.Fatalf("Detect = %v on the written log", v)
	}
	diag := input.NewDiagnostics(nil, 5)
	src, err := reader.Format().Open(source.Input{Name: "out.hlog", Reader: bytes.NewReader(data), Diag: diag}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []stream.Interval
	if err := src.Run(context.Background(), func(iv stream.Interval) error {
		if err := iv.Validate(); err != nil {
			t.Fatal(err)
		}
		out = append(out, iv)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out, diag
}

// sameIntervals checks two interval lists are the same: windows, keys,
// bucket layouts, every count, sums and flags.
func sameIntervals(t *testing.T, want, got []stream.Interval) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d intervals back, %d written", len(got), len(want))
	}
	for i := range want {
		a, b := want[i], got[i]
		if !a.Start.Equal(b.Start) || a.Duration != b.Duration || a.Relative != b.Relative || a.Gap != b.Gap {
			t.Fatalf("interval %d: %s+%s rel %v gap %v back as %s+%s rel %v gap %v", i,
				a.Start, a.Duration, a.Relative, a.Gap, b.Start, b.Duration, b.Relative, b.Gap)
		}
		if len(a.Series) != len(b.Series) {
			t.Fatalf("interval %d: %d series back, %d written", i, len(b.Series), len(a.Series))
		}
		for j := range a.Series {
			if a.Series[j].Key != b.Series[j].Key {
				t.Fatalf("interval %d: key %+v back as %+v", i, a.Series[j].Key, b.Series[j].Key)
			}
			sameHist(t, a.Series[j].Key.String(), a.Series[j].Hist, b.Series[j].Hist)
		}
	}
}

func sameHist(t *testing.T, what string, a, b *hist.Histogram) {
	t.Helper()
	trim := func(h *hist.Histogram) (int, []float64) {
		c := h.Counts
		off := h.Offset
		for len(c) > 0 && c[0] == 0 && !h.IsCustom() {
			c, off = c[1:], off+1
		}
		for len(c) > 0 && c[len(c)-1] == 0 && !h.IsCustom() {
			c = c[:len(c)-1]
		}
		return off, c
	}
	ao, ac := trim(a)
	bo, bc := trim(b)
	if a.Unit != b.Unit || a.Scale != b.Scale || a.ZeroPow != b.ZeroPow || !slices.Equal(a.Bounds, b.Bounds) {
		t.Fatalf("%s: layout %s/%d/%d/%d edges back as %s/%d/%d/%d edges", what, a.Unit, a.Scale, a.ZeroPow, len(a.Bounds),
			b.Unit, b.Scale, b.ZeroPow, len(b.Bounds))
	}
	if a.ZeroCount != b.ZeroCount || ao != bo && len(ac) > 0 || !slices.Equal(ac, bc) {
		t.Fatalf("%s: counts zero %g off %d %v back as zero %g off %d %v", what, a.ZeroCount, ao, ac, b.ZeroCount, bo, bc)
	}
	if a.Sum != b.Sum || a.SumExact != b.SumExact || a.TopOpen != b.TopOpen {
		t.Fatalf("%s: sum %g exact %v open %v back as %g %v %v", what, a.Sum, a.SumExact, a.TopOpen, b.Sum, b.SumExact, b.TopOpen)
	}
}

// totalCount adds up every event.
func totalCount(ivs []stream.Interval) float64 {
	n := 0.0
	for _, iv := range ivs {
		for _, s := range iv.Series {
			n += s.Hist.Count()
		}
	}
	return n
}

// realTrace is a real Oracle 12.2 trace of the repository (40 waits of 13
// events).
const realTrace = "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc"

// The 10046 trace (µs, 64 buckets per power of two, exact sums, wall
// clock): latscope → hdrlog → latscope gives back every interval, bucket
// count and sum; the total is the trace's WAIT line count.
func TestRoundTripOracle10046(t *testing.T) {
	path := testenv.DataFile(t, realTrace)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ivs := readThrough(t, oracle10046.Format(), path, source.Options{Location: time.UTC, Interval: time.Second})
	waits := float64(bytes.Count(raw, []byte("\nWAIT #")))
	if totalCount(ivs) != waits || waits == 0 {
		t.Fatalf("source read %g waits, the trace has %g WAIT lines", totalCount(ivs), waits)
	}
	log, warns := writeLog(t, ivs)
	if len(warns) != 1 || !strings.Contains(warns[0], "one value") {
		t.Errorf("warnings %q, want the one about other tools", warns)
	}
	back, diag := readLog(t, log, source.Options{})
	if len(diag.Problems()) > 0 {
		t.Fatalf("problems reading our own log: %+v", diag.Problems())
	}
	sameIntervals(t, ivs, back)
	if totalCount(back) != waits {
		t.Errorf("read back %g waits, want %g", totalCount(back), waits)
	}
}

// PyLatencyMap's RAC example (ms, power-of-two upper-bound buckets,
// estimated sums, +02:00 wall clock, idle windows): the same round trip;
// the total is 1,237,243 waits (pylatencymap's own test derives it from the
// file's first and last records).
func TestRoundTripPyLatencyMap(t *testing.T) {
	path := testenv.DataFile(t, "pylatencymap/example_latency_data.txt")
	ivs := readThrough(t, pylatencymap.Format(), path, source.Options{})
	if totalCount(ivs) != 1237243 {
		t.Fatalf("source read %g waits", totalCount(ivs))
	}
	log, _ := writeLog(t, ivs)
	back, diag := readLog(t, log, source.Options{})
	if len(diag.Problems()) > 0 {
		t.Fatalf("problems: %+v", diag.Problems())
	}
	sameIntervals(t, ivs, back)
	// The written zone offset survives (+02:00).
	if _, off := back[0].Start.Zone(); off != 2*3600 {
		t.Errorf("zone offset %d s", off)
	}
}

// fio's bins (custom edges, 1 ns wide below 128 ns) through hdrlog, and
// fio's histogram log (relative times from stdin) too.
func TestRoundTripFio(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "source", "fio", "testdata")
	for _, tc := range []struct {
		format source.Format
		file   string
	}{{fio.JSONFormat(), "randread.json"}, {fio.HistLogFormat(), "randrw-coarse6_clat_hist.1.log"}} {
		t.Run(tc.file, func(t *testing.T) {
			ivs := readThrough(t, tc.format, filepath.Join(dir, tc.file), source.Options{})
			log, _ := writeLog(t, ivs)
			back, diag := readLog(t, log, source.Options{})
			if len(diag.Problems()) > 0 {
				t.Fatalf("problems: %+v", diag.Problems())
			}
			sameIntervals(t, ivs, back)
			if totalCount(back) != 12 && totalCount(back) != 16 {
				t.Errorf("total %g", totalCount(back))
			}
		})
	}
}

// Synthetic, for what real sources rarely emit: fractional counts (from
// rebinned merges), buckets narrower than a nanosecond (scale 8 in ns),
// an open top, an empty and a gap interval, relative time, keys with
// spaces, commas and the same sanitised tag. All come back exactly.
func TestRoundTripEdgeCases(t *testing.T) {
	fine := &hist.Histogram{Unit: hist.Nanosecond, Scale: 8, ZeroPow: 0, ZeroCount: 2, Offset: 256, Counts: []float64{1, 2, 3, 0, 4.5}, Sum: 30}
	custom, err := hist.NewCustom(hist.Millisecond, []float64{0.02, 0.04, 0.06, math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	_ = custom.AddCustom(-1, 3)
	_ = custom.AddCustom(2, 7)
	rel := stream.RelativeStart.Add(1500 * time.Millisecond)
	ivs := []stream.Interval{
		{Source: "a", Start: rel, Duration: 333 * time.Microsecond, Relative: true, Series: []stream.SeriesHist{
			{Key: stream.Key{Event: "a b,c", Instance: "x"}, Hist: fine},
			{Key: stream.Key{Event: "a_b_c@x"}, Hist: custom},
		}},
		{Source: "a", Start: rel.Add(time.Second), Duration: time.Second, Relative: true},
		{Source: "a", Start: rel.Add(2 * time.Second), Duration: time.Second, Relative: true, Gap: true},
	}
	log, _ := writeLog(t, ivs)
	back, diag := readLog(t, log, source.Options{})
	if len(diag.Problems()) > 0 {
		t.Fatalf("problems: %+v", diag.Problems())
	}
	for i := range back {
		back[i].Source = "a"
	}
	sameIntervals(t, ivs, back)
	if !strings.Contains(string(log), "fix=") {
		t.Errorf("no fix list for the fractional count and sub-ns buckets:\n%s", log)
	}
}

// Other HdrHistogram tools: the Go library's own log reader reads the
// written 10046 log line by line, with our tags, every event, and every
// HDR bucket inside the latscope bucket it stands for.
func TestLibraryReadsOurLog(t *testing.T) {
	path := testenv.DataFile(t, realTrace)
	ivs := readThrough(t, oracle10046.Format(), path, source.Options{Location: time.UTC, Interval: time.Second})
	log, _ := writeLog(t, ivs)
	lr := hdr.NewHistogramLogReader(bytes.NewReader(log))
	n := 0
	for _, iv := range ivs {
		for _, s := range iv.Series {
			h, err := lr.NextIntervalHistogram()
			if err != nil || h == nil {
				t.Fatalf("line %d: %v %v", n, h, err)
			}
			n++
			if h.Tag() != reader.SafeTag(s.Key.Event+"@"+s.Key.Instance) || float64(h.TotalCount()) != s.Hist.Count() {
				t.Fatalf("line %d: tag %q with %d events, want %s with %.0f", n, h.Tag(), h.TotalCount(), s.Key, s.Hist.Count())
			}
			if h.StartTimeMs() < iv.Start.UnixMilli()-1 || h.StartTimeMs() > iv.Start.UnixMilli() {
				t.Errorf("line %d: starts %d ms, interval %d ms", n, h.StartTimeMs(), iv.Start.UnixMilli())
			}
			unit := float64(s.Hist.Unit)
			for _, bar := range h.Distribution() {
				if bar.Count == 0 {
					continue
				}
				inside := false
				for _, b := range s.Hist.Buckets() {
					if float64(bar.From) >= b.Lower*unit && float64(bar.To)+1 <= b.Upper*unit {
						inside = true
					}
				}
				if !inside {
					t.Errorf("line %d: HDR bucket [%d, %d] ns is in no latscope bucket", n, bar.From, bar.To)
				}
			}
		}
	}
	if h, err := lr.NextIntervalHistogram(); h != nil || err != nil {
		t.Errorf("extra line %v %v", h, err)
	}
}
