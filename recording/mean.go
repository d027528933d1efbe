package recording

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Mean series (format 1.2). A series the source reports only as a count and
// a total per window (stream.SeriesMean: pg_stat_statements calls and
// total_exec_time) has no histogram, so it gets its own definitions and its
// own section in the interval frame:
//
//   - a mean series definition is an ancillary frame (type 0x42): its key and
//     unit, with ids counted apart from histogram series, so a key may be
//     both a histogram series and a mean series. A 1.0 or 1.1 reader skips
//     the frame;
//   - the means section follows the custom section of the interval payload
//     (an interval with means but no custom histogram writes custom_count 0
//     first). Older readers ignore trailing payload bytes, so they read the
//     interval's histograms exactly as before and simply see no means.

// frameMeanSeries defines a mean series. It has the ancillary bit: readers
// before 1.2 skip it.
const frameMeanSeries byte = 0x42

// Mean entry flags.
const (
	mFloat byte = 1 << 0 // count as float64 bits instead of a uvarint
	mUnit  byte = 1 << 1 // the entry's own unit follows; else the series' unit
	mKnown      = mFloat | mUnit
)

// Quantities (still format 1.2). A mean series that is not a latency (a
// host figure: r/s, %util, kB used; stream.Quantity) appends its quantity
// name to its definition: trailing payload, which readers written before it
// ignore, reading the series as a latency in ns (stream.QuantityUnit) with
// the same counts and sums. The minor version stays 2 so that recordings
// without quantities keep their bytes. A standalone mean value appends the
// quantity after the sum.

type meanDef struct {
	id   uint64
	unit hist.Unit
}

// defineMean defines a mean series with the unit and quantity of its first
// report.
func (w *Writer) defineMean(m stream.SeriesMean) {
	def := meanDef{id: uint64(len(w.means)), unit: m.Unit}
	w.means[m.Key] = def
	p := binary.AppendUvarint(w.payload[:0], def.id)
	p = appendKey(p, m.Key)
	p = binary.AppendUvarint(p, uint64(def.unit))
	if !m.Quantity.IsLatency() {
		p = appendString(p, string(m.Quantity))
	}
	w.appendFrame(frameMeanSeries, p)
}

// appendMeans appends the means section: the entry count, then per entry
// the mean series id, flags, [unit], count and sum.
func (w *Writer) appendMeans(p []byte, means []stream.SeriesMean) []byte {
	p = binary.AppendUvarint(p, uint64(len(means)))
	for _, m := range means {
		def := w.means[m.Key]
		p = binary.AppendUvarint(p, def.id)
		p = appendMeanEntry(p, m, def.unit)
	}
	return p
}

// appendMeanEntry appends a mean entry after its series id: flags, the
// unit when it is not seriesUnit, count and sum.
func appendMeanEntry(p []byte, m stream.SeriesMean, seriesUnit hist.Unit) []byte {
	var flags byte
	whole := integral(m.Count)
	if !whole {
		flags |= mFloat
	}
	if m.Unit != seriesUnit {
		flags |= mUnit
	}
	p = append(p, flags)
	if flags&mUnit != 0 {
		p = binary.AppendUvarint(p, uint64(m.Unit))
	}
	if whole {
		p = binary.AppendUvarint(p, uint64(m.Count))
	} else {
		p = appendFloat(p, m.Count)
	}
	return appendFloat(p, m.Sum)
}

type readerMean struct {
	key      stream.Key
	unit     hist.Unit
	quantity stream.Quantity
}

func (r *Reader) defineMean(payload []byte) error {
	d := decoder{b: payload}
	id := d.uvarint("mean series id")
	m := readerMean{key: d.key()}
	m.unit = hist.Unit(d.ubounded("unit", math.MaxInt64))
	if d.err == nil && len(d.b) > 0 && !r.ignoreQuantities {
		m.quantity = stream.Quantity(d.string("quantity"))
	}
	if err := d.definition("mean series", id, len(r.means)); err != nil {
		return err
	}
	if !m.unit.Valid() {
		return fmt.Errorf("mean series definition %d (%s): %w: %d", id, m.key, hist.ErrBadUnit, int64(m.unit))
	}
	if err := checkQuantity(m.quantity, m.unit); err != nil {
		return fmt.Errorf("mean series definition %d (%s): %w", id, m.key, err)
	}
	r.means = append(r.means, m)
	return nil
}

// decodeMeans reads the means section, if any bytes remain after the
// custom section.
func (r *Reader) decodeMeans(d *decoder) []stream.SeriesMean {
	if d.err != nil || len(d.b) == 0 {
		return nil
	}
	n := d.uvarint("mean entry count")
	// No preallocation from n: a damaged count fails at the first entry
	// the payload cannot hold.
	var out []stream.SeriesMean
	for i := uint64(0); i < n && d.err == nil; i++ {
		id, ok := d.ref("mean series id", len(r.means))
		if !ok {
			break
		}
		def := r.means[id]
		m := stream.SeriesMean{Key: def.key, Unit: def.unit, Quantity: def.quantity}
		decodeMeanEntry(d, &m)
		out = append(out, m)
	}
	if d.err != nil {
		return nil
	}
	return out
}

// decodeMeanEntry reads a mean entry after its series id into m, whose
// Unit is the series' unit unless the entry carries its own. It returns
// the entry's flags.
func decodeMeanEntry(d *decoder, m *stream.SeriesMean) byte {
	flags := d.byte("mean flags")
	if d.err == nil && flags&^mKnown != 0 {
		d.fail("unknown mean flags %#02x", flags&^mKnown)
	}
	if flags&mUnit != 0 {
		m.Unit = hist.Unit(d.ubounded("mean unit", math.MaxInt64))
	}
	if flags&mFloat != 0 {
		m.Count = d.float("mean count")
	} else {
		m.Count = float64(d.uvarint("mean count"))
	}
	m.Sum = d.float("mean sum")
	return flags
}

// checkQuantity refuses an unknown quantity, or a quantity whose unit is
// not stream.QuantityUnit.
func checkQuantity(q stream.Quantity, u hist.Unit) error {
	if !q.Valid() {
		return fmt.Errorf("unknown quantity %q", q)
	}
	if !q.IsLatency() && u != stream.QuantityUnit {
		return fmt.Errorf("quantity %s with unit %s (must be %s)", q, u, stream.QuantityUnit)
	}
	return nil
}
