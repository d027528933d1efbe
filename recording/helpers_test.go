package recording

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
)

const exampleData = "pylatencymap/example_latency_data.txt"

// realTrace is a real Oracle 12.2 trace of the repository: 40 waits of 13
// events from 1 µs to 0.5 s over 5.5 s.
const realTrace = "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc"

// exampleIntervals reads PyLatencyMap's example_latency_data.txt (cumulative
// gv$event_histogram records, ms, Oracle upper-bound buckets, two RAC
// instances) into intervals through stream.Differ. With perInstance the
// instances' bucket runs become separate series, otherwise they are summed
// as PyLatencyMap does.
func exampleIntervals(t testing.TB, perInstance bool) []stream.Interval {
	t.Helper()
	path := testenv.DataFile(t, exampleData)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	differ := stream.NewDiffer(filepath.Base(path))
	var out []stream.Interval
	var prev time.Time
	var snap map[string]*hist.Histogram
	var at time.Time
	instance, lastBucket := 1, 0.0
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		fields := strings.Split(text, ",")
		switch {
		case text == "<begin record>":
			snap, instance, lastBucket = map[string]*hist.Histogram{}, 1, 0
		case text == "<end record>":
			iv, ok, err := differ.Next(at, at.Sub(prev), false, snapshot(snap))
			if err != nil {
				t.Fatalf("%s:%d: %v", path, line, err)
			}
			if ok {
				out = append(out, iv)
			}
			prev, snap = at, nil
		case snap == nil:
		case fields[0] == "timestamp" && len(fields) == 4:
			at, err = time.Parse("02-Jan-06 03.04.05.000000 PM -07:00", strings.TrimSpace(fields[3]))
			if err != nil {
				t.Fatalf("%s:%d: %v", path, line, err)
			}
		case len(fields) == 2 && fields[0] != "label" && fields[0] != "latencyunit":
			bucket, err1 := strconv.ParseFloat(strings.TrimSpace(fields[0]), 64)
			count, err2 := strconv.ParseFloat(strings.TrimSpace(fields[1]), 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s:%d: bad bucket line %q", path, line, text)
			}
			if bucket <= lastBucket && perInstance {
				instance++
			}
			lastBucket = bucket
			name := "1"
			if perInstance {
				name = strconv.Itoa(instance)
			}
			h := snap[name]
			if h == nil {
				h = hist.NewBuckets(hist.Millisecond)
				snap[name] = h
			}
			if err := h.AddBound(hist.UpperBound, bucket, count); err != nil {
				t.Fatalf("%s:%d: %v", path, line, err)
			}
		}
	}
	if len(out) < 60 {
		t.Fatalf("%s: only %d intervals", path, len(out))
	}
	return out
}

func snapshot(byInstance map[string]*hist.Histogram) []stream.SeriesHist {
	var out []stream.SeriesHist
	for _, inst := range []string{"1", "2", "3"} {
		if h := byInstance[inst]; h != nil {
			key := stream.Key{Event: "db file sequential read"}
			if len(byInstance) > 1 {
				key.Instance = inst
			}
			out = append(out, stream.SeriesHist{Key: key, Hist: h})
		}
	}
	return out
}

var waitLine = regexp.MustCompile(`^WAIT #\d+: nam='([^']*)' ela= ?(\d+) .*tim=(\d+)`)

// traceIntervals bins the WAIT lines of a real 10046 trace into windows of
// the tim clock (µs, no wall-clock meaning: relative intervals), one exact
// histogram per event, empty windows included.
func traceIntervals(t testing.TB, rel string, window time.Duration) []stream.Interval {
	t.Helper()
	return traceIntervalsInto(t, rel, window, func() *hist.Histogram { return hist.NewExact(hist.Microsecond, 0) })
}

// traceIntervalsInto is traceIntervals with the histogram layout newHist
// returns (an exact grid, or custom edges in µs).
func traceIntervalsInto(t testing.TB, rel string, window time.Duration, newHist func() *hist.Histogram) []stream.Interval {
	t.Helper()
	path := testenv.DataFile(t, rel)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type wait struct {
		event string
		ela   float64
		tim   int64
	}
	var waits []wait
	for _, line := range strings.Split(string(data), "\n") {
		m := waitLine.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		ela, _ := strconv.ParseFloat(m[2], 64)
		tim, _ := strconv.ParseInt(m[3], 10, 64)
		waits = append(waits, wait{m[1], ela, tim})
	}
	if len(waits) == 0 {
		t.Fatalf("%s: no WAIT lines", path)
	}
	win := window.Microseconds()
	first := waits[0].tim - waits[0].tim%win
	var out []stream.Interval
	for _, w := range waits {
		idx := int((w.tim - first) / win)
		if idx < 0 {
			idx = 0 // tim is not monotonic across cursors
		}
		for len(out) <= idx {
			start := stream.RelativeStart.Add(time.Duration(len(out)) * window)
			out = append(out, stream.Interval{Source: filepath.Base(path), Start: start, Duration: window, Relative: true})
		}
		iv := &out[idx]
		h := seriesHist(iv, stream.Key{Event: w.event}, newHist)
		if err := h.Record(w.ela); err != nil {
			t.Fatalf("%s: ela=%g: %v", path, w.ela, err)
		}
	}
	return out
}

func seriesHist(iv *stream.Interval, key stream.Key, newHist func() *hist.Histogram) *hist.Histogram {
	for _, s := range iv.Series {
		if s.Key == key {
			return s.Hist
		}
	}
	h := newHist()
	iv.Series = append(iv.Series, stream.SeriesHist{Key: key, Hist: h})
	return h
}

// encode writes the intervals to a recording in memory.
func encode(t testing.TB, ivs []stream.Interval) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, iv := range ivs {
		if err := w.Write(iv); err != nil {
			t.Fatalf("interval %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeAll reads every interval of a recording; err is the error that
// ended it (nil for a clean end).
func decodeAll(data []byte) ([]stream.Interval, error) {
	rd, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []stream.Interval
	for {
		iv, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, iv)
	}
}

// diffIntervals describes the first difference between two interval
// lists: every field, floats bit for bit, times by instant, zone name and
// offset. nil and empty slices are equal.
func diffIntervals(want, got []stream.Interval) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d intervals, want %d", len(got), len(want))
	}
	for i := range want {
		if err := diffInterval(want[i], got[i]); err != nil {
			return fmt.Errorf("interval %d: %w", i, err)
		}
	}
	return nil
}

func diffInterval(a, b stream.Interval) error {
	an, ao := a.Start.Zone()
	bn, bo := b.Start.Zone()
	switch {
	case a.Source != b.Source:
		return fmt.Errorf("source %q, want %q", b.Source, a.Source)
	case !a.Start.Equal(b.Start) || ao != bo || an != bn:
		return fmt.Errorf("start %s (%s), want %s (%s)", b.Start, bn, a.Start, an)
	case a.Start.Format(time.RFC3339Nano) != b.Start.Format(time.RFC3339Nano):
		return fmt.Errorf("start prints %s, want %s", b.Start.Format(time.RFC3339Nano), a.Start.Format(time.RFC3339Nano))
	case a.Duration != b.Duration || a.Relative != b.Relative || a.Gap != b.Gap:
		return fmt.Errorf("duration/relative/gap %v/%v/%v, want %v/%v/%v", b.Duration, b.Relative, b.Gap, a.Duration, a.Relative, a.Gap)
	case len(a.Series) != len(b.Series):
		return fmt.Errorf("%d series, want %d", len(b.Series), len(a.Series))
	case len(a.Means) != len(b.Means):
		return fmt.Errorf("%d mean series, want %d", len(b.Means), len(a.Means))
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	for j, am := range a.Means {
		bm := b.Means[j]
		if am.Key != bm.Key || am.Unit != bm.Unit || am.Quantity != bm.Quantity || !same(am.Count, bm.Count) || !same(am.Sum, bm.Sum) {
			return fmt.Errorf("mean %d: %+v, want %+v", j, bm, am)
		}
	}
	for j := range a.Series {
		if a.Series[j].Key != b.Series[j].Key {
			return fmt.Errorf("series %d key %+v, want %+v", j, b.Series[j].Key, a.Series[j].Key)
		}
		if err := diffHist(a.Series[j].Hist, b.Series[j].Hist); err != nil {
			return fmt.Errorf("series %s: %w", a.Series[j].Key, err)
		}
	}
	return nil
}

func diffHist(a, b *hist.Histogram) error {
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	switch {
	case a.Unit != b.Unit || a.Scale != b.Scale || a.ZeroPow != b.ZeroPow || a.Offset != b.Offset:
		return fmt.Errorf("grid %v/%d/%d offset %d, want %v/%d/%d offset %d",
			b.Unit, b.Scale, b.ZeroPow, b.Offset, a.Unit, a.Scale, a.ZeroPow, a.Offset)
	case !same(a.ZeroCount, b.ZeroCount) || !same(a.Sum, b.Sum):
		return fmt.Errorf("zero count %g sum %g, want %g and %g", b.ZeroCount, b.Sum, a.ZeroCount, a.Sum)
	case a.SumExact != b.SumExact || a.TopOpen != b.TopOpen:
		return fmt.Errorf("flags exact=%v open=%v, want %v %v", b.SumExact, b.TopOpen, a.SumExact, a.TopOpen)
	case len(a.Counts) != len(b.Counts):
		return fmt.Errorf("%d counts, want %d", len(b.Counts), len(a.Counts))
	case a.IsCustom() != b.IsCustom() || !sameEdges(a.Bounds, b.Bounds):
		return fmt.Errorf("edges %v, want %v", b.Bounds, a.Bounds)
	}
	for i := range a.Counts {
		if !same(a.Counts[i], b.Counts[i]) {
			return fmt.Errorf("bucket %d: %g, want %g", a.Offset+i, b.Counts[i], a.Counts[i])
		}
	}
	return nil
}

// frameEnds scans a recording independently of Reader: the offset where the
// header ends, the end offset of every frame, and which frames are
// intervals.
func frameEnds(t testing.TB, data []byte) (header int, ends []int, interval []bool) {
	t.Helper()
	pos := len(Magic)
	for range 2 {
		_, k := binary.Uvarint(data[pos:])
		pos += k
	}
	header = pos
	for pos < len(data) {
		n, k := binary.Uvarint(data[pos:])
		if k <= 0 {
			t.Fatalf("bad frame length at %d", pos)
		}
		interval = append(interval, data[pos+k] == frameInterval)
		pos += k + 1 + int(n) + 4
		ends = append(ends, pos)
	}
	if pos != len(data) {
		t.Fatalf("frames end at %d, data at %d", pos, len(data))
	}
	return header, ends, interval
}
