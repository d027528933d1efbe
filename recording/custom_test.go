package recording

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
)

// netappEdges are bucket edges in µs modelled on NetApp ONTAP's latency
// counters (<20us, <40us, ... <120s, >120s): not powers of two, open top.
// The layout is synthetic (no NetApp sample can exist here); the events
// recorded into it are real.
var netappEdges = []float64{20, 40, 60, 80, 100, 200, 400, 600, 800, 1000, 2000, 4000, 6000, 8000,
	10000, 12000, 14000, 16000, 18000, 20000, 40000, 60000, 80000, 100000, 200000, 400000, 600000, 800000,
	1e6, 2e6, 4e6, 6e6, 8e6, 1e7, 2e7, 3e7, 6e7, 9e7, 1.2e8, math.Inf(1)}

// promEdges are Prometheus client libraries' default histogram buckets, in
// seconds: fractional edges.
var promEdges = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, math.Inf(1)}

func mustCustom(t testing.TB, unit hist.Unit, edges []float64) *hist.Histogram {
	t.Helper()
	h, err := hist.NewCustom(unit, edges)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// netappTraceIntervals records the real waits of a 10046 trace into
// NetApp-style edges: whole counts, exact sums.
func netappTraceIntervals(t testing.TB) []stream.Interval {
	return traceIntervalsInto(t, realTrace, 100*time.Millisecond,
		func() *hist.Histogram { return mustCustom(t, hist.Microsecond, netappEdges) })
}

// promExampleIntervals moves PyLatencyMap's real example records (ms,
// power-of-two buckets) onto Prometheus' default edges in seconds:
// fractional edges and fractional counts.
func promExampleIntervals(t testing.TB) []stream.Interval {
	like := mustCustom(t, hist.Second, promEdges)
	var out []stream.Interval
	for _, iv := range exampleIntervals(t, true)[:10] {
		c := iv
		c.Series = nil
		for _, s := range iv.Series {
			c.Series = append(c.Series, stream.SeriesHist{Key: s.Key, Hist: hist.RebinLike(s.Hist, like)})
		}
		out = append(out, c)
	}
	return out
}

// customEdgeCases are layouts real sources rarely produce (synthetic).
func customEdgeCases(t testing.TB) []stream.Interval {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	k := stream.Key{Event: "nfs_protocol_read_latency", Instance: "vol1"}
	netapp := mustCustom(t, hist.Microsecond, netappEdges)
	for i, c := range []float64{5, 120, 33, 0, 0, 7} {
		_ = netapp.AddCustom(i-1, c)
	}
	_ = netapp.AddCustom(len(netappEdges)-2, 2) // >120s
	narrower := mustCustom(t, hist.Microsecond, netappEdges[:10])
	_ = narrower.AddCustom(3, 9)
	fromZero := mustCustom(t, hist.Millisecond, []float64{0, 10, 20, 30}) // lquantize()-like
	_ = fromZero.Record(0)
	_ = fromZero.Record(15.5)
	_ = fromZero.Record(29.999)
	onlyOpen := mustCustom(t, hist.Nanosecond, []float64{0, math.Inf(1)})
	_ = onlyOpen.AddCustom(0, 3)
	_ = onlyOpen.AddCustom(-1, 1) // an impossible [0, 0) count is kept as is
	odd := mustCustom(t, hist.Second, []float64{math.Copysign(0, -1), 1e-300, 0.1, 1 << 62, 1 << 63, 1e300})
	_ = odd.AddCustom(0, 0.5)
	_ = odd.AddCustom(3, 1<<53)
	_ = odd.AddCustom(4, 1)
	hugeInts := mustCustom(t, hist.Nanosecond, []float64{1, 1 << 62, 1<<63 - 1024})
	_ = hugeInts.AddCustom(1, 4)
	empty := mustCustom(t, hist.Microsecond, netappEdges)
	grid := hist.NewBuckets(hist.Microsecond)
	_ = grid.AddBound(hist.UpperBound, 64, 10)
	sameEdgesOtherSlice := mustCustom(t, hist.Microsecond, append([]float64(nil), netappEdges...))
	_ = sameEdgesOtherSlice.AddCustom(8, 1)
	flagged := netapp.Clone()
	flagged.TopOpen, flagged.SumExact = false, true // flags are kept, whatever the edges say

	other := stream.Key{Event: "nfs_protocol_write_latency", Instance: "vol1"}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	return []stream.Interval{
		{Source: "netapp", Start: at(0), Duration: time.Minute, Series: []stream.SeriesHist{{Key: k, Hist: netapp}, {Key: other, Hist: empty}}},
		// Same edges again (not resent), from another slice.
		{Source: "netapp", Start: at(1), Duration: time.Minute, Series: []stream.SeriesHist{{Key: k, Hist: sameEdgesOtherSlice}}},
		// Edges change, then a grid histogram, then back: same key twice.
		{Source: "netapp", Start: at(2), Duration: time.Minute, Series: []stream.SeriesHist{
			{Key: k, Hist: narrower}, {Key: k, Hist: grid}, {Key: k, Hist: netapp}, {Key: other, Hist: flagged}}},
		{Source: "netapp", Start: at(3), Duration: time.Minute, Series: []stream.SeriesHist{{Key: k, Hist: grid}}},
		{Source: "netapp", Start: at(4), Duration: time.Minute, Gap: true},
		// A series whose first histogram is on the grid, later custom.
		{Source: "lq", Start: at(5), Duration: time.Second, Series: []stream.SeriesHist{{Key: stream.Key{Event: "lq"}, Hist: grid}}},
		{Source: "lq", Start: at(6), Duration: time.Second, Series: []stream.SeriesHist{
			{Key: stream.Key{Event: "lq"}, Hist: fromZero}, {Key: stream.Key{Event: "open"}, Hist: onlyOpen},
			{Key: stream.Key{Event: "odd"}, Hist: odd}, {Key: stream.Key{Event: "huge"}, Hist: hugeInts}}},
	}
}

func TestRoundTripCustomEdges(t *testing.T) {
	cases := map[string][]stream.Interval{
		"real trace waits in NetApp-style µs edges": netappTraceIntervals(t),
		"real Oracle records on Prometheus edges":   promExampleIntervals(t),
		"edge cases": customEdgeCases(t),
	}
	for name, ivs := range cases {
		t.Run(name, func(t *testing.T) {
			data := roundTrip(t, ivs)
			custom := 0
			for _, iv := range ivs {
				for _, s := range iv.Series {
					if s.Hist.IsCustom() {
						custom++
					}
				}
			}
			if custom == 0 {
				t.Fatal("no custom-edge histogram in the case")
			}
			t.Logf("%d intervals, %d custom histograms, %d bytes", len(ivs), custom, len(data))
		})
	}
}

// TestRealWaitsKeepTheirTotals checks the trace case against an independent
// count of the trace's WAIT lines: every wait lands in one NetApp bucket.
func TestRealWaitsKeepTheirTotals(t *testing.T) {
	ivs := netappTraceIntervals(t)
	got, err := decodeAll(encode(t, ivs))
	if err != nil {
		t.Fatal(err)
	}
	var count, sum float64
	for _, iv := range got {
		for _, s := range iv.Series {
			if !s.Hist.IsCustom() || !s.Hist.SumExact {
				t.Fatalf("series %s came back without its edges or exact sum", s.Key)
			}
			count += s.Hist.Count()
			sum += s.Hist.Sum
		}
	}
	wantCount, wantSum := countWaits(t, realTrace)
	if count != wantCount || math.Abs(sum-wantSum) > 1e-6*wantSum {
		t.Errorf("%g waits, %g µs; the trace has %g waits, %g µs", count, sum, wantCount, wantSum)
	}
}

// TestCustomEdgesAreSentOncePerSeries: a series' later histograms with the
// same edges cost only their counts.
func TestCustomEdgesAreSentOncePerSeries(t *testing.T) {
	ivs := customEdgeCases(t)[:2] // same edges twice
	one := len(encode(t, ivs[:1]))
	two := len(encode(t, ivs))
	second := two - one
	// The second interval: length, type, source, flags, start delta,
	// duration delta, count, series id, fallback (flags, offset, n, zero
	// count, one count, sum), custom section (count, index, flags, zero
	// count, 9 empty buckets as one run, the count, a run of 29 empty
	// buckets), CRC: no edges.
	want := 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + (1 + 1 + 1 + 1 + 1 + 8) + (1 + 1 + 1 + 1 + 1 + 1 + 1) + 4
	if second != want {
		t.Errorf("second interval takes %d bytes, want %d (edges resent?)", second, want)
	}
}

// TestVersion10ReadersSeeTheFallback: a 1.0 reader ignores the custom
// section and reads the same events, sum and flags on the power-of-two grid,
// each custom bucket in the grid bucket holding its lower edge.
func TestVersion10ReadersSeeTheFallback(t *testing.T) {
	for _, ivs := range [][]stream.Interval{netappTraceIntervals(t), customEdgeCases(t)} {
		rd, err := NewReader(bytes.NewReader(encode(t, ivs)))
		if err != nil {
			t.Fatal(err)
		}
		rd.asVersion10 = true
		for i := 0; ; i++ {
			iv, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("interval %d: %v", i, err)
			}
			for j, s := range iv.Series {
				want := ivs[i].Series[j].Hist
				checkFallback(t, want, s.Hist)
			}
		}
	}
}

func checkFallback(t *testing.T, custom, got *hist.Histogram) {
	t.Helper()
	if got.IsCustom() || got.Scale != 0 {
		t.Fatalf("1.0 view has edges %v scale %d", got.Bounds, got.Scale)
	}
	if !custom.IsCustom() {
		return
	}
	if got.Count() != custom.Count() || got.Sum != custom.Sum || got.SumExact != custom.SumExact || got.TopOpen != custom.TopOpen {
		t.Errorf("1.0 view: count %g sum %g exact %v open %v, want %g %g %v %v", got.Count(), got.Sum, got.SumExact,
			got.TopOpen, custom.Count(), custom.Sum, custom.SumExact, custom.TopOpen)
	}
	// Every custom bucket's count lies in the grid bucket of its lower edge.
	want := map[float64]float64{}
	for _, b := range custom.Buckets() {
		lo := 0.0
		if b.Lower >= math.Ldexp(1, got.ZeroPow) {
			lo = math.Ldexp(1, floorLog2(b.Lower))
		}
		want[lo] += b.Count
	}
	for _, b := range got.Buckets() {
		if b.Count != want[b.Lower] {
			t.Errorf("1.0 view: bucket [%g, %g) holds %g, want %g", b.Lower, b.Upper, b.Count, want[b.Lower])
		}
	}
}

// TestCustomSectionDamage: CRC-valid frames whose custom section breaks a
// rule are damage, and the intervals before them stand.
func TestCustomSectionDamage(t *testing.T) {
	ivs := customEdgeCases(t)[:1]
	good := encode(t, ivs)
	header, ends, _ := frameEnds(t, good)
	last := ends[len(ends)-2] // the interval frame starts here
	n, k := binary.Uvarint(good[last:])
	payload := good[last+k+1 : last+k+1+int(n)]
	// The interval's series list ends where its custom section starts:
	// find it by re-encoding without the section.
	plain := bytes.Clone(payload[:len(payload)-customSectionLen(t, ivs[0])])
	section := payload[len(plain):]
	cases := map[string][]byte{
		"index out of range":       append(bytes.Clone(plain), 1, 5, 0),
		"two entries, same index":  append(bytes.Clone(plain), 2, 0, cEdges|cIntEdges, 2, 1, 1, 0, 2, 0, cEdges|cIntEdges, 2, 1, 1, 0, 2),
		"more entries than series": append(bytes.Clone(plain), 3),
		"unknown flag":             append(bytes.Clone(plain), 1, 0, 0x80),
		"counts before edges":      append(bytes.Clone(plain), 1, 0, 0, 0, 0),
		"one edge":                 append(bytes.Clone(plain), 1, 0, cEdges|cIntEdges, 1, 5, 0, 0),
		"edges not ascending":      append(bytes.Clone(plain), 1, 0, cEdges|cIntEdges, 3, 5, 0, 1, 0, 0, 0),
		"edges overflow":           append(bytes.Clone(plain), 1, 0, cEdges|cIntEdges, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0, 0),
		"edge count beyond data":   append(bytes.Clone(plain), 1, 0, cEdges, 0xff, 0x7f),
		"counts run past the end":  append(bytes.Clone(plain), 1, 0, cEdges|cIntEdges, 2, 1, 1, 0, 3),
	}
	for name, p := range cases {
		data := append(bytes.Clone(good[:last]), rawFrame(frameInterval, p)...)
		got, err := decodeAll(data)
		var de *DamageError
		if !errors.As(err, &de) || de.Offset != int64(last) || len(got) != 0 {
			t.Errorf("%s: %d intervals, %v", name, len(got), err)
		}
	}
	_ = header
	// The untouched section still decodes.
	data := append(bytes.Clone(good[:last]), rawFrame(frameInterval, append(bytes.Clone(plain), section...))...)
	if got, err := decodeAll(data); err != nil || diffIntervals(ivs, got) != nil {
		t.Errorf("reassembled frame: %v", err)
	}
	// Since 1.2 the means section follows the custom section; bytes after
	// it (a later minor version's fields) are ignored.
	data = append(bytes.Clone(good[:last]), rawFrame(frameInterval, append(bytes.Clone(payload), 0, 7, 7, 7))...)
	if got, err := decodeAll(data); err != nil || diffIntervals(ivs, got) != nil {
		t.Errorf("trailing bytes after an empty means section: %v", err)
	}
}

// customSectionLen is the length of the custom section of iv's frame.
func customSectionLen(t *testing.T, iv stream.Interval) int {
	t.Helper()
	w := &Writer{sources: map[string]*writerSource{}, series: map[stream.Key]seriesDef{}}
	wire := make([]wireHist, len(iv.Series))
	n := 0
	for j, s := range iv.Series {
		wire[j] = toWire(s.Hist)
		if wire[j].custom != nil {
			n++
		}
	}
	p, _ := w.appendCustomSection(nil, iv, wire, n)
	return len(p)
}

func TestFallbackOfEdgesFromZero(t *testing.T) {
	// [0, 10) ms has lower edge 0: it goes to the zero bucket [0, 8) ms.
	h := mustCustom(t, hist.Millisecond, []float64{0, 10, 20, 30})
	_ = h.AddCustom(0, 3)
	_ = h.AddCustom(1, 4)
	_ = h.AddCustom(2, 5)
	g := fallback(h)
	if g.ZeroPow != 3 || g.ZeroCount != 3 || g.Offset != 3 || len(g.Counts) != 2 || g.Counts[0] != 4 || g.Counts[1] != 5 {
		t.Errorf("fallback %+v", g)
	}
	if err := g.Validate(); err != nil {
		t.Error(err)
	}
}

func TestWriterRefusesTooManyEdges(t *testing.T) {
	edges := make([]float64, maxEdges+1)
	for i := range edges {
		edges[i] = float64(i)
	}
	h := mustCustom(t, hist.Nanosecond, edges)
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write(stream.Interval{Source: "s", Start: time.Unix(1e9, 0), Duration: time.Second,
		Series: []stream.SeriesHist{{Key: stream.Key{Event: "e"}, Hist: h}}})
	if err == nil || !strings.Contains(err.Error(), "16385 buckets exceed") {
		t.Errorf("error %v", err)
	}
}

// countWaits counts a trace's WAIT lines and their ela sum (µs)
// independently of the interval helpers: by splitting lines, not by regexp.
func countWaits(t testing.TB, rel string) (count, sum float64) {
	t.Helper()
	data, err := os.ReadFile(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "WAIT #") {
			continue
		}
		_, rest, ok := strings.Cut(line, " ela=")
		if !ok {
			t.Fatalf("WAIT line without ela: %q", line)
		}
		fields := strings.Fields(rest)
		ela, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			t.Fatalf("ela in %q: %v", line, err)
		}
		count++
		sum += ela
	}
	return count, sum
}
