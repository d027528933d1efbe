package recording

import (
	"encoding/binary"
	"math"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Custom bucket edges (format 1.1). A histogram with explicit edges
// (hist.NewCustom: NetApp, Prometheus le, fio bins) is written twice:
//
//   - in the series list, as its "fallback": the same events, sum and flags
//     on the power-of-two grid, each custom bucket counted whole in the
//     grid bucket holding its lower edge. A 1.0 reader, which ignores
//     trailing payload bytes, reads this approximation;
//   - in the custom section appended to the interval payload, as its exact
//     custom counts, which a 1.1 reader puts in place of the fallback.
//
// Edges are sent once per series and again only when they change.

// Custom histogram flags.
const (
	cEdges    byte = 1 << 0 // the series' new edges follow
	cFloat    byte = 1 << 1 // counts as float64 bits instead of uvarints
	cIntEdges byte = 1 << 2 // with cEdges: edges as uvarint first value and deltas
	cOpenTop  byte = 1 << 3 // with cEdges: a last edge +Inf follows the stored ones
	cKnown         = cEdges | cFloat | cIntEdges | cOpenTop
)

// maxEdges bounds the edges of one histogram: its buckets stay within
// maxBuckets (checkHist refuses more counts).
const maxEdges = maxBuckets + 1

// wireHist is a histogram as the series list carries it (main) with, for a
// custom-edge histogram, the exact histogram of the custom section.
type wireHist struct {
	main   *hist.Histogram
	custom *hist.Histogram
}

func toWire(h *hist.Histogram) wireHist {
	if !h.IsCustom() {
		return wireHist{main: h}
	}
	return wireHist{main: fallback(h), custom: h}
}

// fallback moves a custom-edge histogram onto the scale-0 grid of its unit
// without splitting buckets: a custom bucket [lo, hi) counts whole in the
// grid bucket holding lo, so counts stay whole numbers. The zero bucket ends
// at the largest power of two not above the first positive edge. Sum and
// flags are kept exactly: the custom section takes them from here.
func fallback(h *hist.Histogram) *hist.Histogram {
	zp := fallbackZeroPow(h.Bounds)
	g := &hist.Histogram{Unit: h.Unit, ZeroPow: zp, ZeroCount: h.ZeroCount,
		Sum: h.Sum, SumExact: h.SumExact, TopOpen: h.TopOpen}
	first, last := math.MaxInt, math.MinInt
	for i, c := range h.Counts {
		if c == 0 || h.Bounds[i] < math.Ldexp(1, zp) {
			continue
		}
		k := floorLog2(h.Bounds[i])
		first, last = min(first, k), max(last, k)
	}
	if first <= last {
		g.Offset = first
		g.Counts = make([]float64, last-first+1)
	}
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		if lo := h.Bounds[i]; lo < math.Ldexp(1, zp) {
			g.ZeroCount += c
		} else {
			g.Counts[floorLog2(lo)-first] += c
		}
	}
	return g
}

// fallbackZeroPow is floor(log2) of the first positive finite edge (0 when
// there is none, as for [0, +Inf)).
func fallbackZeroPow(bounds []float64) int {
	for _, b := range bounds {
		if b > 0 && !math.IsInf(b, 1) {
			return floorLog2(b)
		}
	}
	return 0
}

// floorLog2 returns floor(log2(v)) exactly for a finite v > 0.
func floorLog2(v float64) int {
	_, exp := math.Frexp(v) // v = frac·2^exp, frac in [0.5, 1)
	return exp - 1
}

// sameEdges compares edges bit for bit (so -0 and 0 differ).
func sameEdges(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// appendCustom appends one entry of the custom section: the histogram's
// position in the interval's series list, flags, its edges when they differ
// from the series' current ones (prev), then its counts.
func appendCustom(b []byte, index int, h *hist.Histogram, prev []float64) []byte {
	var flags byte
	sendEdges := !sameEdges(h.Bounds, prev)
	stored := h.Bounds
	if sendEdges {
		flags |= cEdges
		if math.IsInf(stored[len(stored)-1], 1) {
			flags |= cOpenTop
			stored = stored[:len(stored)-1]
		}
		if integralEdges(stored) {
			flags |= cIntEdges
		}
	}
	whole := integralCounts(h)
	if !whole {
		flags |= cFloat
	}
	b = binary.AppendUvarint(b, uint64(index))
	b = append(b, flags)
	if sendEdges {
		b = appendEdges(b, stored, flags&cIntEdges != 0)
	}
	if whole {
		b = binary.AppendUvarint(b, uint64(h.ZeroCount))
		return appendCountTokens(b, h.Counts)
	}
	b = appendFloat(b, h.ZeroCount)
	for _, c := range h.Counts {
		b = appendFloat(b, c)
	}
	return b
}

// integralEdges reports whether every stored edge is written exactly as a
// uvarint (whole, in [0, 2^63), not -0).
func integralEdges(edges []float64) bool {
	for _, e := range edges {
		if !integral(e) {
			return false
		}
	}
	return true
}

// appendEdges writes the number of stored edges, then either the first edge
// and the differences to the next ones as uvarints, or every edge as f64.
func appendEdges(b []byte, stored []float64, whole bool) []byte {
	b = binary.AppendUvarint(b, uint64(len(stored)))
	if !whole {
		for _, e := range stored {
			b = appendFloat(b, e)
		}
		return b
	}
	prev := uint64(0)
	for _, e := range stored {
		u := uint64(e)
		b = binary.AppendUvarint(b, u-prev)
		prev = u
	}
	return b
}

// decodeCustomSection reads the custom section that follows the series list
// (if any bytes remain) and replaces the fallbacks in out by the exact
// custom-edge histograms. ids are the series ids of out.
func (r *Reader) decodeCustomSection(d *decoder, ids []uint64, out []stream.SeriesHist) {
	if d.err != nil || len(d.b) == 0 {
		return
	}
	n := d.uvarint("custom histogram count")
	if d.err == nil && n > uint64(len(out)) {
		d.fail("%d custom histograms for %d series", n, len(out))
	}
	next := uint64(0)
	for k := uint64(0); k < n && d.err == nil; k++ {
		idx := d.uvarint("custom histogram index")
		if d.err == nil && (idx < next || idx >= uint64(len(out))) {
			d.fail("custom histogram index %d out of order or beyond the %d series", idx, len(out))
		}
		if d.err != nil {
			return
		}
		next = idx + 1
		s := &r.series[ids[idx]]
		h := decodeCustom(d, s, out[idx].Hist)
		if d.err == nil {
			out[idx].Hist = h
		}
	}
}

// decodeCustom reads one custom entry (after its index) for series s whose
// fallback is main.
func decodeCustom(d *decoder, s *readerSeries, main *hist.Histogram) *hist.Histogram {
	flags := d.byte("custom histogram flags")
	if d.err == nil && flags&^cKnown != 0 {
		d.fail("unknown custom histogram flags %#02x", flags&^cKnown)
	}
	if flags&cEdges != 0 {
		edges := decodeEdges(d, flags)
		if d.err != nil {
			return nil
		}
		s.edges = edges
	} else if d.err == nil && s.edges == nil {
		d.fail("custom histogram of series %s before its edges", s.key)
	}
	if d.err != nil {
		return nil
	}
	h, err := hist.NewCustom(main.Unit, s.edges)
	if err != nil {
		d.fail("custom edges: %v", err)
		return nil
	}
	n := len(s.edges) - 1
	if flags&cFloat != 0 {
		var counts []float64
		h.ZeroCount, counts = decodeFloatCounts(d, n, nil)
		copy(h.Counts, counts)
	} else {
		h.ZeroCount = float64(d.uvarint("zero count"))
		copy(h.Counts, decodeCountTokens(d, n, nil))
	}
	h.Sum, h.SumExact, h.TopOpen = main.Sum, main.SumExact, main.TopOpen
	return h
}

// decodeEdges reads an edge list and checks it as hist.NewCustom does.
func decodeEdges(d *decoder, flags byte) []float64 {
	n := d.ubounded("edge count", maxEdges)
	if d.err != nil {
		return nil
	}
	open := flags&cOpenTop != 0
	if total := n + boolToUint(open); total < 2 || total > maxEdges {
		d.fail("%d bucket edges (want 2 to %d)", total, maxEdges)
		return nil
	}
	whole := flags&cIntEdges != 0
	per := uint64(8) // bytes per edge at least
	if whole {
		per = 1
	}
	if n*per > uint64(len(d.b)) {
		d.fail("%d edges cannot fit in %d bytes", n, len(d.b))
		return nil
	}
	edges := make([]float64, 0, n+boolToUint(open))
	sum := uint64(0)
	for i := uint64(0); i < n && d.err == nil; i++ {
		if !whole {
			edges = append(edges, d.float("edge"))
			continue
		}
		delta := d.uvarint("edge")
		if d.err == nil && delta > math.MaxUint64-sum {
			d.fail("edge overflows 64 bits")
		}
		sum += delta
		edges = append(edges, float64(sum))
	}
	if open {
		edges = append(edges, math.Inf(1))
	}
	return edges
}

func boolToUint(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
