package recording

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/latscope/latscope/stream"
)

// appendString appends a uvarint byte length and the bytes of s.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendKey appends a series key: event, instance and source.
func appendKey(b []byte, k stream.Key) []byte {
	return appendString(appendString(appendString(b, k.Event), k.Instance), k.Source)
}

// appendFloat appends the IEEE 754 bits of v, little-endian.
func appendFloat(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// decoder reads the fields of one frame payload. The first error sticks:
// later reads return zero values, so decoding code checks once at the end
// of a block instead of after every field.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) byte(what string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("%s: payload ends early", what)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("%s: bad or truncated varint", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("%s: bad or truncated varint", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// ref reads the id of one of the defined definitions so far; ok is false,
// and the decoder failed, when the id is bad or undefined.
func (d *decoder) ref(what string, defined int) (id uint64, ok bool) {
	id = d.uvarint(what)
	if d.err == nil && id >= uint64(defined) {
		d.fail("undefined %s %d", what, id)
	}
	return id, d.err == nil
}

// key reads a series key: event, instance and source.
func (d *decoder) key() stream.Key {
	return stream.Key{Event: d.string("event"), Instance: d.string("instance"), Source: d.string("key source")}
}

// definition checks a definition frame: read whole, with the next id in
// sequence.
func (d *decoder) definition(what string, id uint64, next int) error {
	if d.err != nil {
		return fmt.Errorf("%s definition: %w", what, d.err)
	}
	if id != uint64(next) {
		return fmt.Errorf("%s definition: id %d out of sequence (expected %d)", what, id, next)
	}
	return nil
}

// bounded reads a signed varint that must lie in [lo, hi].
func (d *decoder) bounded(what string, lo, hi int64) int64 {
	v := d.varint(what)
	if d.err == nil && (v < lo || v > hi) {
		d.fail("%s %d out of range [%d, %d]", what, v, lo, hi)
		return 0
	}
	return v
}

// ubounded reads an unsigned varint that must be at most hi.
func (d *decoder) ubounded(what string, hi uint64) uint64 {
	v := d.uvarint(what)
	if d.err == nil && v > hi {
		d.fail("%s %d exceeds %d", what, v, hi)
		return 0
	}
	return v
}

func (d *decoder) float(what string) float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.fail("%s: payload ends early", what)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) string(what string) string {
	n := d.uvarint(what + " length")
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail("%s: length %d exceeds the %d bytes left", what, n, len(d.b))
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
