package pcp

import (
	"fmt"
	"time"
)

// Result is one pmResult record of a data volume: the values of one fetch.
// A record without metrics is a mark: logging was interrupted.
type Result struct {
	At   time.Time
	Sets []ValueSet
}

// Mark reports whether the record marks an interruption.
func (r Result) Mark() bool { return len(r.Sets) == 0 }

// ValueSet holds one metric's values at one time. Err is PCP's error code
// when the fetch of that metric failed (then there are no values).
type ValueSet struct {
	PMID   uint32
	Err    int32
	Values []Value
}

// Value is one instance's value. Raw keeps integers exact (counters up to
// 2^64); Float is the value as a number.
type Value struct {
	Inst int32
	// Raw is the integer value of integer types (two's complement for the
	// signed ones).
	Raw   uint64
	Float float64
}

// decodeResult decodes a pmResult record (the payload after the length
// word). Values of metrics without a description, or of types latscope
// does not use (strings, aggregates, events), are skipped.
func decodeResult(rec []byte, version int, meta *Meta) (Result, error) {
	d := &decoder{b: rec}
	r := Result{At: d.stamp(version)}
	n := d.u32()
	if d.err != nil {
		return r, d.err
	}
	if uint64(n)*12 > uint64(len(rec)) {
		return r, fmt.Errorf("%d metrics cannot fit in a %d-byte record", n, len(rec))
	}
	r.Sets = make([]ValueSet, 0, n)
	for i := 0; i < int(n); i++ {
		set, err := decodeValueSet(d, meta)
		if err != nil {
			return r, err
		}
		r.Sets = append(r.Sets, set)
	}
	return r, nil
}

func decodeValueSet(d *decoder, meta *Meta) (ValueSet, error) {
	set := ValueSet{PMID: d.u32()}
	numval := d.i32()
	if numval < 0 {
		set.Err = numval
		return set, d.err
	}
	format := d.u32()
	if d.err == nil && uint64(numval)*8 > uint64(len(d.b)-d.pos) {
		return set, fmt.Errorf("metric %s: %d values cannot fit in the record", pmidString(set.PMID), numval)
	}
	desc, known := meta.Desc(set.PMID)
	for j := 0; j < int(numval); j++ {
		inst, word := d.i32(), d.u32()
		if d.err != nil {
			return set, d.err
		}
		if !known {
			continue
		}
		v, ok, err := decodeValue(d.b, format, word, desc.Type)
		if err != nil {
			return set, fmt.Errorf("metric %s instance %d: %w", pmidString(set.PMID), inst, err)
		}
		if ok {
			v.Inst = inst
			set.Values = append(set.Values, v)
		}
	}
	return set, d.err
}

// decodeValue reads one value: in the pmValue word itself (insitu, 32-bit
// types) or in a pmValueBlock: type byte, 24-bit length (header included),
// the bytes. The block's offset is in 4-byte words of the PDU that
// pmlogger fetched, whose 3-word header the record's one length word
// replaced: the block starts 4*word-12 bytes into the payload.
func decodeValue(rec []byte, format, word uint32, typ int32) (Value, bool, error) {
	switch format {
	case valInsitu:
		return numeric(typ, uint64(word), 4)
	case valDptr:
		off := uint64(word)*4 - pduHeaderSkip
		if uint64(word)*4 < pduHeaderSkip || off+4 > uint64(len(rec)) {
			return Value{}, false, fmt.Errorf("value block offset %d outside the %d-byte record", off, len(rec))
		}
		head := be32(rec[off:])
		size := uint64(head & 0xffffff)
		if size < 4 || off+size > uint64(len(rec)) {
			return Value{}, false, fmt.Errorf("value block of %d bytes at offset %d overruns the record", size, off)
		}
		body := rec[off+4 : off+size]
		switch len(body) {
		case 4:
			return numeric(typ, uint64(be32(body)), 4)
		case 8:
			return numeric(typ, be64(body), 8)
		}
		return Value{}, false, nil
	}
	return Value{}, false, fmt.Errorf("unknown value format %d", format)
}

// pduHeaderSkip is how much longer a result PDU's header is than the
// archive record's length word.
const pduHeaderSkip = 12

// numeric interprets raw bits of width bytes as typ.
func numeric(typ int32, bits uint64, width int) (Value, bool, error) {
	switch {
	case typ == type32 && width == 4:
		return Value{Raw: uint64(int64(int32(bits))), Float: float64(int32(bits))}, true, nil
	case typ == typeU32 && width == 4:
		return Value{Raw: bits, Float: float64(uint32(bits))}, true, nil
	case typ == type64 && width == 8:
		return Value{Raw: bits, Float: float64(int64(bits))}, true, nil
	case typ == typeU64 && width == 8:
		return Value{Raw: bits, Float: float64(bits)}, true, nil
	case typ == typeFloat && width == 4:
		return Value{Float: float32From(uint32(bits))}, true, nil
	case typ == typeDouble && width == 8:
		return Value{Float: float64From(bits)}, true, nil
	case typ >= type32 && typ <= typeDouble:
		return Value{}, false, fmt.Errorf("a %d-byte value for type %d", width, typ)
	}
	return Value{}, false, nil
}
