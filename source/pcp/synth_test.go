package pcp

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A small archive writer for what real archives rarely show: counters
// that wrap or reset, mark records, instance domains that change (v3
// deltas). It follows LOGARCHIVE(5) and what pmlogger 6.0 writes (the
// layouts the real archives in testdata/pcp confirm).

type enc []byte

func (e enc) u32(v uint32) enc { return binary.BigEndian.AppendUint32(e, v) }
func (e enc) i32(v int32) enc  { return e.u32(uint32(v)) }

// stamp writes a timestamp as pmlogger does: v2 seconds and
// microseconds; v3 64-bit seconds (low word first) and nanoseconds.
func (e enc) stamp(version int, t time.Time) enc {
	if version == 2 {
		return e.u32(uint32(t.Unix())).u32(uint32(t.Nanosecond() / 1000))
	}
	return e.u32(uint32(t.Unix())).u32(0).u32(uint32(t.Nanosecond()))
}

func frame(payload enc) []byte {
	n := uint32(len(payload) + 8)
	return enc(nil).u32(n).append(payload).u32(n)
}

func (e enc) append(b []byte) enc { return append(e, b...) }

func label(version int, vol int32, start time.Time) []byte {
	var e enc
	if version == 2 {
		e = e.u32(magicV2).u32(42).stamp(2, start).i32(vol)
		e = e.append(padded("synth", 64)).append(padded("UTC", 40))
	} else {
		e = e.u32(magicV3).u32(42).stamp(3, start).i32(vol).u32(0).u32(0)
		e = e.append(padded("synth", 256)).append(padded("UTC", 256)).append(padded(":UTC", 256))
	}
	return frame(e)
}

func padded(s string, n int) []byte {
	b := make([]byte, n)
	copy(b, s)
	return b
}

func pmid(cluster, item uint32) uint32 { return 60<<22 | cluster<<10 | item }

const (
	indomNull = 0xffffffff
	indomDisk = 60<<22 | 1
	unitsMS   = 1<<24 | 2<<12 // time, millisec
	unitsKB   = 1<<28 | 1<<16 // space, Kbyte
	unitsOne  = 1 << 20       // count
)

func desc(id uint32, typ int32, indom uint32, sem int32, units uint32, name string) []byte {
	e := enc(nil).u32(typeDesc).u32(id).i32(typ).u32(indom).i32(sem).u32(units).u32(1)
	return frame(e.u32(uint32(len(name))).append([]byte(name)))
}

// indomRecord writes a full or delta instance domain; a name "" is a
// deleted instance (deltas only).
func indomRecord(version int, tag uint32, at time.Time, indom uint32, insts []int32, names []string) []byte {
	e := enc(nil).u32(tag).stamp(version, at).u32(indom).u32(uint32(len(insts)))
	for _, i := range insts {
		e = e.i32(i)
	}
	var strtab []byte
	for _, n := range names {
		if n == "" {
			e = e.i32(-1)
			continue
		}
		e = e.i32(int32(len(strtab)))
		strtab = append(append(strtab, n...), 0)
	}
	return frame(e.append(strtab))
}

// value is one instance's value of a set in a synthetic result.
type value struct {
	inst int32
	raw  uint64
}

type valueSet struct {
	pmid   uint32
	typ    int32
	values []value
}

// result writes a pmResult: 32-bit types in situ, 64-bit ones in value
// blocks after the sets, at word offsets counted as pmlogger counts them.
func result(version int, at time.Time, sets ...valueSet) []byte {
	head := enc(nil).stamp(version, at).u32(uint32(len(sets)))
	size := len(head)
	for _, s := range sets {
		size += 12 + 8*len(s.values)
	}
	var body, blocks enc
	for _, s := range sets {
		format := uint32(valInsitu)
		if s.typ == typeU64 {
			format = valDptr
		}
		body = body.u32(s.pmid).u32(uint32(len(s.values))).u32(format)
		for _, v := range s.values {
			if format == valInsitu {
				body = body.i32(v.inst).u32(uint32(v.raw))
				continue
			}
			off := uint32((size+len(blocks))/4 + pduHeaderSkip/4)
			body = body.i32(v.inst).u32(off)
			blocks = binary.BigEndian.AppendUint64(blocks.u32(uint32(typeU64)<<24|12), v.raw)
		}
	}
	return frame(head.append(body).append(blocks))
}

// synthArchive writes BASE.meta and one volume per element of volumes.
func synthArchive(t *testing.T, version int, meta [][]byte, volumes ...[][]byte) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "synth")
	start := time.Unix(1_800_000_000, 0)
	write := func(path string, vol int32, recs [][]byte) {
		data := label(version, vol, start)
		for _, r := range recs {
			data = append(data, r...)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(base+".meta", -1, meta)
	for i, recs := range volumes {
		write(base+"."+string(rune('0'+i)), int32(i), recs)
	}
	return base
}
