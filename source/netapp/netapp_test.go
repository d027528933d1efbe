package netapp

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// No real ONTAP output can be produced here (it needs a filer), so every
// input in this file is SYNTHETIC, built line by line in the form the
// domain notes document for `stats show -r` and that PyLatencyMap's NetApp
// connector parsed: "volume:VOL:COUNTER.<LABEL>:<count>" per bucket, the 36
// labels <20us ... >120s in order, a record closed by .>120s.

const (
	readLat  = "nfs_protocol_read_latency"
	writeLat = "nfs_protocol_write_latency"
)

// The cumulative counters of three iterations of one read and one write
// histogram (slot = label index: 0 "<20us", 1 "<40us", ... 35 ">120s").
var (
	read1 = counts{0: 3, 1: 1500, 2: 220, 5: 40, 9: 12, 10: 7, 16: 2}
	readD = [2]counts{{1: 300, 2: 41, 10: 1, 35: 1}, {0: 1, 1: 280, 6: 9, 24: 1}}
	wrt1  = counts{2: 10, 3: 95, 11: 4}
	wrtD  = [2]counts{{3: 20, 4: 5}, {}} // nothing written in the last interval
)

// sessionInput is a nodeshell session: the command echoed by the cluster
// shell, blank lines between iterations, and a scalar counter (which is not
// a histogram, so chatter) in the first iteration.
func sessionInput() string {
	var b strings.Builder
	b.WriteString(`cluster1::> system node run -node cluster1-01 -command "stats show -r -n 3 -i 5 volume:vol1:nfs_protocol_read_latency volume:vol1:nfs_protocol_write_latency"` + "\n")
	r, w := read1, wrt1
	for i := 0; i < 3; i++ {
		if i > 0 {
			r, w = r.plus(readD[i-1]), w.plus(wrtD[i-1])
			b.WriteString("\n")
		} else {
			b.WriteString("volume:vol1:nfs_read_ops:1766/s\n")
		}
		b.WriteString(block("vol1", readLat, r))
		b.WriteString(block("vol1", writeLat, w))
	}
	b.WriteString("\ncluster1::> \n")
	return b.String()
}

func TestCumulativeIterations(t *testing.T) {
	res := runString(t, sessionInput(), source.Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := res.Malformed(); len(got) > 0 || len(res.Diag.Warnings()) > 0 {
		t.Fatalf("problems %q, warnings %q", got, res.Diag.Warnings())
	}
	if len(res.Intervals) != 2 {
		t.Fatalf("%d intervals, want 2 (3 iterations, the first a baseline)", len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		wantStart := stream.RelativeStart.Add(time.Duration(i) * 5 * time.Second)
		if !iv.Relative || !iv.Start.Equal(wantStart) || iv.Duration != 5*time.Second || iv.Gap {
			t.Errorf("interval %d: start %s, %s, relative %v, gap %v; want %s, 5s (from -i 5), relative",
				i, iv.Start, iv.Duration, iv.Relative, iv.Gap, wantStart)
		}
		if got := slotCounts(series(iv, readLat, "vol1")); got != readD[i] {
			t.Errorf("interval %d read counts %v, want %v", i, got, readD[i])
		}
		w := series(iv, writeLat, "vol1")
		if got := slotCounts(w); got != wrtD[i] {
			t.Errorf("interval %d write counts %v, want %v", i, got, wrtD[i])
		}
		if i == 1 && w != nil {
			t.Errorf("interval 1 has a write series with no writes")
		}
	}
}

// TestBucketEdges checks ONTAP's edges are kept, not re-binned: <40us is
// [20, 40) µs, <1s is [800 ms, 1 s), >120s is the open top read as
// [120 s, 240 s) and flagged.
func TestBucketEdges(t *testing.T) {
	res := runString(t, sessionInput(), source.Options{})
	h := series(res.Intervals[0], readLat, "vol1").Hist
	if !h.IsCustom() || h.Unit != hist.Microsecond {
		t.Fatalf("histogram unit %s custom %v, want µs custom edges", h.Unit, h.IsCustom())
	}
	want := []hist.Bucket{
		{Lower: 20, Upper: 40, Count: 300},
		{Lower: 40, Upper: 60, Count: 41},
		{Lower: 1000, Upper: 2000, Count: 1},
		{Lower: 120e6, Upper: 240e6, Count: 1, Capped: true},
	}
	got := h.Buckets()
	if len(got) != len(want) {
		t.Fatalf("buckets %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bucket %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !h.TopOpen {
		t.Error("the >120s bucket must make the top open")
	}
	// Every label maps to the edges its name says: check the whole table
	// against the labels' own text.
	for i, label := range bucketLabels[:lastLabel] {
		upper := bucketEdges[i]
		if got := labelValue(t, label[1:]); got != upper {
			t.Errorf("label %s has upper edge %g µs, its name says %g", label, upper, got)
		}
	}
	if len(bucketLabels) != 36 || len(bucketEdges) != 36 || !math.IsInf(bucketEdges[35], 1) {
		t.Errorf("%d labels and %d edges, want 36 each ending in +Inf", len(bucketLabels), len(bucketEdges))
	}
}

// labelValue reads "20us", "1ms", "30s" as µs.
func labelValue(t *testing.T, s string) float64 {
	t.Helper()
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			var n float64
			for _, c := range v {
				n = n*10 + float64(c-'0')
			}
			return n * u.mult
		}
	}
	t.Fatalf("label %q has no unit", s)
	return 0
}

// TestTotalsIndependent checks the summed intervals against the last
// iteration minus the first, computed from the fixture's numbers directly.
func TestTotalsIndependent(t *testing.T) {
	res := runString(t, sessionInput(), source.Options{})
	var events, sum float64
	for _, iv := range res.Intervals {
		for _, s := range iv.Series {
			events += s.Hist.Count()
			sum += s.Hist.Sum
		}
	}
	var wantEvents, wantSum float64
	for _, d := range append(readD[:], wrtD[:]...) {
		for slot, n := range d {
			wantEvents += n
			lo, hi := 0.0, bucketEdges[0]
			if slot > 0 {
				lo, hi = bucketEdges[slot-1], bucketEdges[slot]
			}
			if math.IsInf(hi, 1) {
				hi = 2 * lo
			}
			wantSum += n * (lo + hi) / 2
		}
	}
	if events != wantEvents || events != 659 {
		t.Errorf("%g events, want %g (659)", events, wantEvents)
	}
	if math.Abs(sum-wantSum) > 1e-6 {
		t.Errorf("sum %g µs, want %g (bucket midpoints)", sum, wantSum)
	}
}

// TestIntervalCounts reads the same input as per-interval counts: three
// intervals holding each iteration's raw numbers.
func TestIntervalCounts(t *testing.T) {
	res := runString(t, sessionInput(), source.Options{Counts: source.CountsInterval})
	if len(res.Intervals) != 3 {
		t.Fatalf("%d intervals, want 3", len(res.Intervals))
	}
	want := read1
	for i, iv := range res.Intervals {
		if i > 0 {
			want = want.plus(readD[i-1])
		}
		if got := slotCounts(series(iv, readLat, "vol1")); got != want {
			t.Errorf("interval %d read counts %v, want %v", i, got, want)
		}
		if !iv.Start.Equal(stream.RelativeStart.Add(time.Duration(i) * 5 * time.Second)) {
			t.Errorf("interval %d starts %s", i, iv.Start)
		}
	}
}

// TestNoCommandLine: without an echoed command the interval comes from
// --interval (else 1 s) with one warning.
func TestNoCommandLine(t *testing.T) {
	in := block("vol1", readLat, read1) + block("vol1", readLat, read1.plus(readD[0]))
	for _, c := range []struct {
		opt, want time.Duration
	}{{0, time.Second}, {10 * time.Second, 10 * time.Second}} {
		res := runString(t, in, source.Options{Interval: c.opt})
		if len(res.Intervals) != 1 || res.Intervals[0].Duration != c.want {
			t.Fatalf("--interval %s: %d intervals, want 1 of %s", c.opt, len(res.Intervals), c.want)
		}
		w := res.Diag.Warnings()
		if len(w) != 1 || !strings.Contains(w[0], "assuming "+c.want.String()) {
			t.Errorf("warnings %q", w)
		}
	}
}

// TestSeveralVolumes: an iteration is complete once it holds every counter
// the previous ones had, in any order.
func TestSeveralVolumes(t *testing.T) {
	a, b := counts{1: 5}, counts{2: 7}
	in := block("vol1", readLat, a) + block("vol2", readLat, b) +
		block("vol2", readLat, b.plus(counts{2: 1})) + block("vol1", readLat, a.plus(counts{1: 2}))
	res := runString(t, in, source.Options{Interval: time.Second})
	if len(res.Intervals) != 1 {
		t.Fatalf("%d intervals, want 1", len(res.Intervals))
	}
	iv := res.Intervals[0]
	if slotCounts(series(iv, readLat, "vol1")) != (counts{1: 2}) || slotCounts(series(iv, readLat, "vol2")) != (counts{2: 1}) {
		t.Errorf("series %+v", iv.Series)
	}
}

// TestCounterReset: counters going backwards (a takeover, a reboot) give a
// gap and a new baseline, never negative counts.
func TestCounterReset(t *testing.T) {
	in := block("vol1", readLat, read1) + block("vol1", readLat, counts{1: 4}) + block("vol1", readLat, counts{1: 10})
	res := runString(t, in, source.Options{Interval: time.Second})
	if len(res.Intervals) != 2 || !res.Intervals[0].Gap || res.Intervals[1].Gap {
		t.Fatalf("intervals %+v, want a gap then data", res.Intervals)
	}
	if got := slotCounts(series(res.Intervals[1], readLat, "vol1")); got != (counts{1: 6}) {
		t.Errorf("after the reset %v, want 6 in <40us", got)
	}
}

func TestEventFilter(t *testing.T) {
	res := runString(t, sessionInput(), source.Options{Events: []string{writeLat}})
	for _, iv := range res.Intervals {
		for _, s := range iv.Series {
			if s.Key.Event != writeLat {
				t.Errorf("series %s passed --event %s", s.Key, writeLat)
			}
		}
	}
	if len(res.Intervals) != 2 {
		t.Errorf("%d intervals, want 2", len(res.Intervals))
	}
}

// TestMalformed: bad lines are skipped and reported with their line
// numbers; records that lost buckets are dropped; the good data stays.
func TestMalformed(t *testing.T) {
	good2 := block("vol1", readLat, read1.plus(readD[0]))
	lines := strings.Split(strings.TrimSuffix(block("vol1", readLat, read1), "\n"), "\n")
	lines[3] = "volume:vol1:nfs_protocol_read_latency.<30us:5"     // unknown label
	lines[4] = "volume:vol1:nfs_protocol_read_latency.<100us:many" // bad count
	in := strings.Join(lines, "\n") + "\n" +
		good2 +
		strings.Join(strings.Split(good2, "\n")[:10], "\n") + "\n" + // cut short by the next record
		block("vol1", readLat, read1.plus(readD[0]).plus(readD[1])) +
		"volume:vol1:nfs_protocol_read_latency.<20us:1\n" // truncated at the end
	res := runString(t, in, source.Options{Interval: time.Second})
	want := []string{
		`4: unknown bucket label "<30us"`,
		`5: count "many" is not a non-negative number`,
		"73: nfs_protocol_read_latency record has no >120s bucket before line 83 starts the next; dropped",
		"119: nfs_protocol_read_latency record is not closed by its >120s bucket at the end of the input; dropped",
	}
	if got := res.Malformed(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Intervals) != 2 {
		t.Fatalf("%d intervals, want 2", len(res.Intervals))
	}
	// The first record lost slots 3 and 4 (both 0 in read1): its deltas
	// are still exact.
	if got := slotCounts(series(res.Intervals[0], readLat, "vol1")); got != readD[0] {
		t.Errorf("first interval %v, want %v", got, readD[0])
	}
	if got := slotCounts(series(res.Intervals[1], readLat, "vol1")); got != readD[1] {
		t.Errorf("second interval %v, want %v", got, readD[1])
	}
}

func TestEmptyAndChatter(t *testing.T) {
	for _, in := range []string{"", "\n\n", "cluster1::> stats show -i 5\nError: command failed\n"} {
		res := runString(t, in, source.Options{})
		if res.Err != nil || len(res.Intervals) != 0 || len(res.Malformed()) != 0 {
			t.Errorf("%q: err %v, %d intervals, problems %q", in, res.Err, len(res.Intervals), res.Malformed())
		}
	}
}

func TestDetect(t *testing.T) {
	in := sessionInput()
	if got := Detect([]byte(in)); got != input.Yes {
		t.Errorf("Detect(session) = %v, want Yes", got)
	}
	firstBucket := strings.Index(in, "volume:vol1:nfs_protocol_read_latency.<20us:")
	if got := Detect([]byte(in[:firstBucket+45])); got != input.NeedMore {
		t.Errorf("Detect(up to a cut line) = %v, want NeedMore", got)
	}
	crlf := strings.ReplaceAll(in[:firstBucket], "\n", "\r\n") + strings.Repeat("\r\n", 50)
	if got := Detect([]byte(crlf + "volume:vol1:nfs_protocol_read_latency.<20us:1")); got != input.NeedMore {
		t.Errorf("Detect(CRLF lines, then a cut line) = %v, want NeedMore", got)
	}
	if got := Detect([]byte(strings.Repeat("some other text\n", 1000))); got != input.NeedMore {
		t.Errorf("Detect(16 KiB of text) = %v, want NeedMore (counters may follow banners)", got)
	}
	if got := Detect([]byte(strings.Repeat("some other text\n", input.DetectLimit/16))); got != input.No {
		t.Errorf("Detect(64 KiB of text) = %v, want No", got)
	}
	long := strings.Repeat("x", 8<<10) + "\n" + in
	if got := Detect([]byte(long)); got != input.No {
		t.Errorf("Detect(a line of 8 KiB first) = %v, want No", got)
	}
	// Real files of the other formats must not be claimed.
	for _, rel := range []string{
		"pylatencymap/example_latency_data.txt", "pylatencymap/test_DTrace_data.txt",
		"pylatencymap/test_SystemTap_data.txt", "pylatencymap/calibration_data.txt",
	} {
		data, err := os.ReadFile(testenv.DataFile(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		if got := Detect(data[:min(len(data), 64<<10)]); got == input.Yes {
			t.Errorf("Detect(%s) = Yes", rel)
		}
	}
	for _, rel := range testenv.DataFiles(t, "trc10046/*/*.trc") {
		p := testenv.DataFile(t, rel)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := Detect(data[:min(len(data), 64<<10)]); got == input.Yes {
			t.Errorf("Detect(%s) = Yes", p)
		}
	}
}

func TestIntervalFromCommand(t *testing.T) {
	for line, want := range map[string]int{
		"stats show -r -n 10 -i 5 volume:v:nfs_protocol_read_latency":              5,
		`node run -node n1 -command "stats show -i30 volume:v:x"`:                  30,
		"statistics show -object volume -interval 10":                              10,
		"stats show -r -n 10 volume:v:nfs_protocol_read_latency":                   0,
		"volume:vol1:nfs_protocol_read_latency.<20us:5":                            0,
		"stats show -i 0 volume:v:nfs_protocol_read_latency":                       0,
		"stats show -i 99999999999999999999999 volume:v:nfs_protocol_read_latency": 0,
	} {
		got, ok := intervalFromCommand(line)
		if got != want || ok != (want > 0) {
			t.Errorf("intervalFromCommand(%q) = %d, %v; want %d", line, got, ok, want)
		}
	}
}
