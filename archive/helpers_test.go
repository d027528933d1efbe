package archive

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// exampleData is PyLatencyMap's real sample: gv$event_histogram deltas
// (ms, Oracle upper-bound buckets) every ~3 s.
const exampleData = "pylatencymap/example_latency_data.txt"

// realIntervals reads the real sample as its source emits it.
func realIntervals(t testing.TB) []stream.Interval {
	t.Helper()
	return sourcetest.ReadShared(t, pylatencymap.Format(), exampleData, source.Options{})
}

// realHistograms returns the real sample's non-empty histograms, to replay
// as realistic per-second data.
func realHistograms(t testing.TB) []*hist.Histogram {
	t.Helper()
	var out []*hist.Histogram
	for _, iv := range realIntervals(t) {
		for _, s := range iv.Series {
			if s.Hist.Count() > 0 {
				out = append(out, s.Hist)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no histograms in the real sample")
	}
	return out
}

// synthetic returns n one-second intervals of one source from start, with
// series histograms taken in turn from hs.
func synthetic(source string, start time.Time, n, series int, hs []*hist.Histogram) []stream.Interval {
	out := make([]stream.Interval, n)
	for i := range out {
		iv := stream.Interval{Source: source, Start: start.Add(time.Duration(i) * time.Second), Duration: time.Second}
		for s := 0; s < series; s++ {
			iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: eventName(s)}, Hist: hs[(i*series+s)%len(hs)]})
		}
		out[i] = iv
	}
	return out
}

func eventName(i int) string {
	return "event " + string(rune('A'+i%26)) + string(rune('a'+i/26%26))
}

func openTemp(t testing.TB, opts Options) (*Archive, string) {
	t.Helper()
	dir := t.TempDir()
	a, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, dir
}

func readAll(t testing.TB, a *Archive, q Query) []stream.Interval {
	t.Helper()
	var out []stream.Interval
	if err := a.Read(context.Background(), q, func(iv stream.Interval) error {
		out = append(out, iv)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameIntervals compares intervals field by field (instants with Equal,
// zones by name and offset).
func sameIntervals(t testing.TB, got, want []stream.Interval) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d intervals, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		gn, go_ := g.Start.Zone()
		wn, wo := w.Start.Zone()
		if !g.Start.Equal(w.Start) || gn != wn || go_ != wo {
			t.Fatalf("interval %d: start %s, want %s", i, g.Start, w.Start)
		}
		g.Start, w.Start = time.Time{}, time.Time{}
		normalise(&g)
		normalise(&w)
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("interval %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// normalise makes empty and nil slices alike, as the codec does.
func normalise(iv *stream.Interval) {
	if len(iv.Series) == 0 {
		iv.Series = nil
	}
	if len(iv.Means) == 0 {
		iv.Means = nil
	}
	for j, s := range iv.Series {
		h := s.Hist.Clone()
		if len(h.Counts) == 0 {
			h.Counts = nil
		}
		iv.Series[j].Hist = h
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
