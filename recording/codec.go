package recording

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/latscope/latscope/hist"
)

// grid is the bucket layout of a histogram; a series definition carries the
// grid of the series' first histogram so later ones need not repeat it.
type grid struct {
	unit    hist.Unit
	scale   int
	zeroPow int
}

func gridOf(h *hist.Histogram) grid {
	return grid{unit: h.Unit, scale: h.Scale, zeroPow: h.ZeroPow}
}

// checkGrid applies the format's limits to a grid.
func checkGrid(g grid) error {
	if !g.unit.Valid() {
		return fmt.Errorf("%w: %d", hist.ErrBadUnit, int64(g.unit))
	}
	if g.scale < 0 || g.scale > hist.MaxScale {
		return fmt.Errorf("%w: %d", hist.ErrBadScale, g.scale)
	}
	if g.zeroPow < -maxPow || g.zeroPow > maxPow {
		return fmt.Errorf("zero bucket edge 2^%d beyond the format's limit 2^±%d", g.zeroPow, maxPow)
	}
	return nil
}

// checkHist applies the format's limits to a histogram (Validate has been
// called: counts are finite and not negative).
func checkHist(h *hist.Histogram) error {
	if err := checkGrid(gridOf(h)); err != nil {
		return err
	}
	if h.Offset < -maxIndex || h.Offset > maxIndex {
		return fmt.Errorf("bucket offset %d beyond the format's limit ±%d", h.Offset, maxIndex)
	}
	if len(h.Counts) > maxBuckets {
		return fmt.Errorf("%d buckets exceed the format's limit of %d", len(h.Counts), maxBuckets)
	}
	return nil
}

// integral reports whether c is written exactly as a uvarint: a whole
// number in [0, 2^63) that is not negative zero.
func integral(c float64) bool {
	switch {
	case !(c >= 0 && c < maxIntegral): // also NaN
		return false
	case c == 0:
		return !math.Signbit(c)
	}
	return float64(uint64(c)) == c
}

func integralCounts(h *hist.Histogram) bool {
	if !integral(h.ZeroCount) {
		return false
	}
	for _, c := range h.Counts {
		if !integral(c) {
			return false
		}
	}
	return true
}

// appendHist appends the encoding of h; def is the grid of its series.
func appendHist(b []byte, h *hist.Histogram, def grid) []byte {
	var flags byte
	if h.SumExact {
		flags |= hSumExact
	}
	if h.TopOpen {
		flags |= hTopOpen
	}
	whole := integralCounts(h)
	if !whole {
		flags |= hFloat
	}
	own := gridOf(h) != def
	if own {
		flags |= hGrid
	}
	b = append(b, flags)
	if own {
		b = appendGrid(b, gridOf(h))
	}
	b = binary.AppendVarint(b, int64(h.Offset))
	b = binary.AppendUvarint(b, uint64(len(h.Counts)))
	if whole {
		b = binary.AppendUvarint(b, uint64(h.ZeroCount))
		b = appendCountTokens(b, h.Counts)
	} else {
		b = appendFloat(b, h.ZeroCount)
		for _, c := range h.Counts {
			b = appendFloat(b, c)
		}
	}
	return appendFloat(b, h.Sum)
}

func appendGrid(b []byte, g grid) []byte {
	b = binary.AppendUvarint(b, uint64(g.unit))
	b = binary.AppendUvarint(b, uint64(g.scale))
	return binary.AppendVarint(b, int64(g.zeroPow))
}

// appendCountTokens writes integral counts as uvarint tokens: count<<1 for
// a non-zero bucket, (run-1)<<1 | 1 for a run of empty buckets.
func appendCountTokens(b []byte, counts []float64) []byte {
	for i := 0; i < len(counts); {
		if counts[i] != 0 {
			b = binary.AppendUvarint(b, uint64(counts[i])<<1)
			i++
			continue
		}
		j := i + 1
		for j < len(counts) && counts[j] == 0 {
			j++
		}
		b = binary.AppendUvarint(b, uint64(j-i-1)<<1|1)
		i = j
	}
	return b
}

func decodeGrid(d *decoder) grid {
	unit := d.ubounded("unit", math.MaxInt64)
	scale := d.ubounded("scale", hist.MaxScale)
	zeroPow := d.bounded("zero pow", -maxPow, maxPow)
	return grid{unit: hist.Unit(unit), scale: int(scale), zeroPow: int(zeroPow)}
}

// decodeHist reads one histogram whose series has grid def; its memory
// comes from alloc (nil: its own).
func decodeHist(d *decoder, def grid, alloc *slab) *hist.Histogram {
	flags := d.byte("histogram flags")
	if d.err == nil && flags&^hKnown != 0 {
		d.fail("unknown histogram flags %#02x", flags&^hKnown)
	}
	g := def
	if flags&hGrid != 0 {
		g = decodeGrid(d)
	}
	h := alloc.histogram() // zero: set field by field, sparing the GC's write barriers on a struct copy
	h.Unit, h.Scale, h.ZeroPow = g.unit, g.scale, g.zeroPow
	h.SumExact, h.TopOpen = flags&hSumExact != 0, flags&hTopOpen != 0
	h.Offset = int(d.bounded("bucket offset", -maxIndex, maxIndex))
	n := int(d.ubounded("bucket count", maxBuckets))
	if flags&hFloat != 0 {
		h.ZeroCount, h.Counts = decodeFloatCounts(d, n, alloc)
	} else {
		h.ZeroCount = float64(d.uvarint("zero count"))
		h.Counts = decodeCountTokens(d, n, alloc)
	}
	h.Sum = d.float("sum")
	if d.err != nil {
		return nil
	}
	return h
}

func decodeFloatCounts(d *decoder, n int, alloc *slab) (zero float64, counts []float64) {
	zero = d.float("zero count")
	if d.err != nil || n == 0 {
		return zero, nil
	}
	if n*8 > len(d.b) {
		d.fail("%d float counts need %d bytes, %d left", n, n*8, len(d.b))
		return 0, nil
	}
	counts = alloc.floats(n)
	for i := range counts {
		counts[i] = d.float("bucket count")
	}
	return zero, counts
}

func decodeCountTokens(d *decoder, n int, alloc *slab) []float64 {
	if d.err != nil || n == 0 {
		return nil
	}
	counts := alloc.floats(n)
	b := d.b // a local slice and one-byte tokens inline: the hot loop of reading an archive
	for i := 0; i < n; {
		var t uint64
		if len(b) > 0 && b[0] < 0x80 {
			t, b = uint64(b[0]), b[1:]
		} else {
			v, k := binary.Uvarint(b)
			if k <= 0 {
				d.fail("bucket count: bad or truncated varint")
				return counts
			}
			t, b = v, b[k:]
		}
		if t&1 == 0 {
			counts[i] = float64(t >> 1)
			i++
			continue
		}
		run := t>>1 + 1
		if run > uint64(n-i) {
			d.fail("run of %d empty buckets overruns the %d buckets left", run, n-i)
			return counts
		}
		i += int(run)
	}
	d.b = b
	return counts
}

// clock is the per-source time state writer and reader both keep: starts
// are written as a delta from the end of the source's previous interval,
// durations as a delta from its previous duration, and the zone only when it
// changes.
type clock struct {
	hasPrev  bool
	prevEnd  time.Time
	prevDur  time.Duration
	zoneName string
	zoneOff  int
	loc      *time.Location // reader only: the location of zoneName/zoneOff
}

func newClock() clock {
	return clock{zoneName: "UTC", loc: time.UTC}
}

func (c *clock) advance(start time.Time, d time.Duration) {
	c.hasPrev = true
	c.prevEnd = start.Add(d)
	c.prevDur = d
}

// location returns the zone to decode times in: UTC itself when the zone is
// UTC, else a fixed zone with the recorded name and offset, which formats
// exactly like the original location did at that instant.
func location(name string, offset int) *time.Location {
	if offset == 0 && name == "UTC" {
		return time.UTC
	}
	return time.FixedZone(name, offset)
}
