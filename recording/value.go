package recording

import (
	"fmt"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Standalone values: one histogram or one mean series entry encoded on its
// own, outside any frame, for stores that keep the series key and the time
// elsewhere (the archive keeps them in indexed columns). They reuse the
// frame encodings exactly (docs/recording-format.md, section 13):
//
//   - a histogram is a section-8 histogram that always carries its own grid
//     (flag GRID), followed for a custom-edge histogram by one section-8.1
//     custom entry (index 0) that always carries its edges;
//   - a mean is a section-8.2 entry without the series id that always
//     carries its unit.
//
// Values carry no CRC: the store checks its own pages.

// AppendHistogram appends the standalone encoding of h to b. h must pass
// h.Validate and the format's limits (CheckHistogram).
func AppendHistogram(b []byte, h *hist.Histogram) []byte {
	w := toWire(h)
	b = appendHist(b, w.main, grid{}) // the zero grid is never valid: GRID is always set
	if w.custom != nil {
		b = appendCustom(b, 0, w.custom, nil)
	}
	return b
}

// CheckHistogram applies the recording format's limits to a valid histogram.
func CheckHistogram(h *hist.Histogram) error { return checkHist(h) }

// DecodeHistogram reads a histogram written by AppendHistogram.
func DecodeHistogram(b []byte) (*hist.Histogram, error) {
	return decodeHistogram(b, nil)
}

func decodeHistogram(b []byte, alloc *slab) (*hist.Histogram, error) {
	d := decoder{b: b}
	h := decodeHist(&d, grid{}, alloc)
	if d.err == nil {
		if err := checkGrid(gridOf(h)); err != nil {
			return nil, fmt.Errorf("histogram value: %w", err)
		}
	}
	if d.err == nil && len(d.b) > 0 {
		if idx := d.uvarint("custom histogram index"); d.err == nil && idx != 0 {
			d.fail("custom histogram index %d in a standalone value", idx)
		}
		var s readerSeries
		h = decodeCustom(&d, &s, h)
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes after the histogram", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("histogram value: %w", d.err)
	}
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("histogram value: %w", err)
	}
	return h, nil
}

// AppendMean appends the standalone encoding of a mean's count, sum, unit
// and, for a series that is not a latency, quantity (its key is kept by the
// caller).
func AppendMean(b []byte, m stream.SeriesMean) []byte {
	b = appendMeanEntry(b, m, 0) // no unit is 0: the unit is always written
	if !m.Quantity.IsLatency() {
		b = appendString(b, string(m.Quantity))
	}
	return b
}

// DecodeMean reads a mean written by AppendMean into a SeriesMean of key.
func DecodeMean(b []byte, key stream.Key) (stream.SeriesMean, error) {
	d := decoder{b: b}
	m := stream.SeriesMean{Key: key}
	flags := decodeMeanEntry(&d, &m)
	if d.err == nil && flags&mUnit == 0 {
		d.fail("mean value without its unit")
	}
	if d.err == nil && len(d.b) > 0 {
		m.Quantity = stream.Quantity(d.string("quantity"))
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes after the mean", len(d.b))
	}
	if d.err != nil {
		return stream.SeriesMean{}, fmt.Errorf("mean value: %w", d.err)
	}
	if err := m.Validate(); err != nil {
		return stream.SeriesMean{}, fmt.Errorf("mean value: %w", err)
	}
	return m, nil
}
