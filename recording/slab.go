package recording

import "github.com/latscope/latscope/hist"

// HistogramDecoder decodes standalone histogram values (DecodeHistogram's)
// many at a time, carving the histograms and their counts out of shared
// arrays instead of allocating two objects per value: reading a day of
// one-second intervals decodes 86 400 of them. The histograms it returns
// are independent values (each Counts slice is capped at its length, so an
// append reallocates rather than overrun a neighbour), but one kept alive
// keeps its array alive (some 60 KiB): meant for readers that consume the
// histograms as they come, or keep most of them. The zero value is ready
// to use; it is not safe for concurrent use.
type HistogramDecoder struct {
	s slab
}

// Decode reads a histogram written by AppendHistogram.
func (hd *HistogramDecoder) Decode(b []byte) (*hist.Histogram, error) {
	return decodeHistogram(b, &hd.s)
}

// slab hands out histograms and count slices from arrays allocated
// slabHists and slabCounts at a time. A nil *slab allocates each one.
type slab struct {
	hists  []hist.Histogram
	counts []float64
}

const (
	slabHists  = 256
	slabCounts = 4096
)

func (s *slab) histogram() *hist.Histogram {
	if s == nil {
		return new(hist.Histogram)
	}
	if len(s.hists) == 0 {
		s.hists = make([]hist.Histogram, slabHists)
	}
	h := &s.hists[0]
	s.hists = s.hists[1:]
	return h
}

func (s *slab) floats(n int) []float64 {
	if s == nil || n > slabCounts/4 {
		return make([]float64, n)
	}
	if n > len(s.counts) {
		s.counts = make([]float64, slabCounts)
	}
	c := s.counts[:n:n]
	s.counts = s.counts[n:]
	return c
}
