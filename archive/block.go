package archive

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A block packs the entries of one source's windows, or of one series'
// points, over one blockSpan of one resolution into a single row: once an
// hour is finished its 3 600 one-second rows become one, so a day reads as
// 24 rows per series instead of 86 400 (docs/archive.md, "Blocks").
//
// Encoding: entries in time order, each
//
//	varint  start − previous start (the first: − the block's start), zigzag
//	uvarint length of the payload
//	        payload
//
// A point's payload is the recording codec's standalone value (as in a
// points row); a window's is encodeWindow's.
const blockSpan = int64(3600e9) // one hour in nanoseconds

// blockOf returns the start of the block holding start.
func blockOf(start int64) int64 { return floorTo(start, blockSpan) }

// firstBlock returns the start of the first block that can hold entries
// from from on, without overflowing at the bottom of the int64 range.
func firstBlock(from int64) int64 {
	if from < math.MinInt64+blockSpan {
		return math.MinInt64
	}
	return blockOf(from)
}

var errBadBlock = errors.New("damaged block")

// appendEntry appends one entry to a block being built.
func appendEntry(b []byte, prev, start int64, payload []byte) []byte {
	b = binary.AppendVarint(b, start-prev)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// eachEntry calls f for every entry of a block starting in [from, to),
// with the payload as a slice of data. Entries outside the range are
// skipped without decoding their payload.
func eachEntry(blockStart int64, data []byte, from, to int64, f func(start int64, payload []byte) error) error {
	start := blockStart
	for len(data) > 0 {
		delta, n := binary.Varint(data)
		if n <= 0 {
			return fmt.Errorf("%w at %d: bad start", errBadBlock, blockStart)
		}
		size, m := binary.Uvarint(data[n:])
		if m <= 0 || size > uint64(len(data)-n-m) {
			return fmt.Errorf("%w at %d: bad length", errBadBlock, blockStart)
		}
		start += delta
		payload := data[n+m : n+m+int(size)]
		data = data[n+m+int(size):]
		if start < from || start >= to {
			continue
		}
		if err := f(start, payload); err != nil {
			return err
		}
	}
	return nil
}

// encodeWindow appends a window's payload: duration, flags and zone
// offset as varints, then the zone name.
func encodeWindow(b []byte, w window) []byte {
	b = binary.AppendVarint(b, w.dur)
	b = binary.AppendUvarint(b, uint64(w.flags))
	b = binary.AppendVarint(b, int64(w.zoneOff))
	return append(b, w.zoneName...)
}

// decodeWindow reads encodeWindow's payload; the name is interned in
// last (the previous window's) to spare an allocation per window.
func decodeWindow(start int64, p []byte, last string) (window, error) {
	w := window{start: start}
	dur, n := binary.Varint(p)
	flags, m := binary.Uvarint(p[max(n, 0):])
	if n <= 0 || m <= 0 {
		return w, fmt.Errorf("%w: bad window at %d", errBadBlock, start)
	}
	off, k := binary.Varint(p[n+m:])
	if k <= 0 || flags > math.MaxInt32 || off < math.MinInt32 || off > math.MaxInt32 {
		return w, fmt.Errorf("%w: bad window at %d", errBadBlock, start)
	}
	w.dur, w.flags, w.zoneOff = dur, int(flags), int(off)
	if name := p[n+m+k:]; string(name) == last {
		w.zoneName = last
	} else {
		w.zoneName = string(name)
	}
	return w, nil
}
