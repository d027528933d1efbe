package recording

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// valueSeeds are the standalone encodings of every histogram and mean of
// the edge cases, custom edges, real samples and means.
func valueSeeds(f testing.TB) (hists, means [][]byte) {
	var ivs []stream.Interval
	ivs = append(ivs, exampleIntervals(f, true)[:4]...)
	ivs = append(ivs, edgeCaseIntervals(f)...)
	ivs = append(ivs, customEdgeCases(f)...)
	ivs = append(ivs, meanEdgeCases(f)...)
	for _, iv := range ivs {
		for _, s := range iv.Series {
			if checkHist(s.Hist) == nil {
				hists = append(hists, AppendHistogram(nil, s.Hist))
			}
		}
		for _, m := range iv.Means {
			means = append(means, AppendMean(nil, m))
		}
	}
	return hists, means
}

func TestValueRoundTrip(t *testing.T) {
	var ivs []stream.Interval
	ivs = append(ivs, exampleIntervals(t, true)...)
	ivs = append(ivs, edgeCaseIntervals(t)...)
	ivs = append(ivs, customEdgeCases(t)...)
	ivs = append(ivs, meanEdgeCases(t)...)
	n := 0
	for _, iv := range ivs {
		for _, s := range iv.Series {
			if checkHist(s.Hist) != nil {
				continue
			}
			got, err := DecodeHistogram(AppendHistogram(nil, s.Hist))
			if err != nil {
				t.Fatalf("%s: %v", s.Key, err)
			}
			if !sameHist(got, s.Hist) {
				t.Fatalf("%s:\n got %+v\nwant %+v", s.Key, got, s.Hist)
			}
			n++
		}
		for _, m := range iv.Means {
			got, err := DecodeMean(AppendMean(nil, m), m.Key)
			if err != nil || !reflect.DeepEqual(got, m) && !(math.IsNaN(m.Sum)) {
				t.Fatalf("%s: %+v, %v; want %+v", m.Key, got, err, m)
			}
		}
	}
	if n == 0 {
		t.Fatal("no histograms tried")
	}
	// The value reuses the frame encoding: a 1-bucket ms histogram is
	// flags, grid, offset, n, zero count, one count token, sum.
	h := &hist.Histogram{Unit: hist.Millisecond, Offset: 3, Counts: []float64{5}, Sum: 60}
	want := []byte{hGrid, 0xc0, 0x84, 0x3d, 0, 0, 6, 1, 0, 10, 0, 0, 0, 0, 0, 0, 0x4e, 0x40}
	if got := AppendHistogram(nil, h); !bytes.Equal(got, want) {
		t.Fatalf("encoding % x, want % x", got, want)
	}
}

// sameHist compares histograms bit for bit, empty and nil counts alike.
func sameHist(a, b *hist.Histogram) bool {
	a, b = a.Clone(), b.Clone()
	for _, h := range []*hist.Histogram{a, b} {
		if len(h.Counts) == 0 {
			h.Counts = nil
		}
		if h.IsCustom() {
			h.Scale, h.ZeroPow, h.Offset = 0, 0, 0
		}
	}
	return reflect.DeepEqual(a, b) || math.IsNaN(a.Sum)
}

// FuzzDecodeHistogram: arbitrary bytes never panic; what decodes
// re-encodes to a value that decodes the same.
func FuzzDecodeHistogram(f *testing.F) {
	hists, _ := valueSeeds(f)
	for _, s := range hists {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHistogram(b)
		if err != nil {
			return
		}
		again, err := DecodeHistogram(AppendHistogram(nil, h))
		if err != nil || !sameHist(again, h) {
			t.Fatalf("re-encoding %+v: %+v, %v", h, again, err)
		}
	})
}

// FuzzDecodeMean: arbitrary bytes never panic; what decodes re-encodes to
// the same mean.
func FuzzDecodeMean(f *testing.F) {
	_, means := valueSeeds(f)
	for _, s := range means {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMean(b, stream.Key{Event: "e"})
		if err != nil {
			return
		}
		again, err := DecodeMean(AppendMean(nil, m), m.Key)
		if err != nil || math.Float64bits(again.Count) != math.Float64bits(m.Count) || math.Float64bits(again.Sum) != math.Float64bits(m.Sum) || again.Unit != m.Unit {
			t.Fatalf("re-encoding %+v: %+v, %v", m, again, err)
		}
	})
}
