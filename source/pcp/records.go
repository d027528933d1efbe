package pcp

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// The archive's on-disk constants (LOGARCHIVE(5), pmapi.h).
const (
	magicV2 uint32 = 0x50052602 // PM_LOG_MAGIC | PM_LOG_VERS02
	magicV3 uint32 = 0x50052603 // PM_LOG_MAGIC | PM_LOG_VERS03

	// labelLenV2 and labelLenV3 are the framed sizes of the archive label.
	labelLenV2 = 132
	labelLenV3 = 808

	// maxRecord bounds one record, so that a corrupted length cannot make
	// the reader allocate gigabytes (pmlogger's records are kilobytes).
	maxRecord = 64 << 20
)

// Meta record types.
const (
	typeDesc       = 1
	typeIndomV2    = 2
	typeLabelV2    = 3
	typeText       = 4
	typeIndom      = 5
	typeIndomDelta = 6
	typeLabel      = 7
)

// Value types (PM_TYPE_*) and semantics (PM_SEM_*).
const (
	type32     = 0
	typeU32    = 1
	type64     = 2
	typeU64    = 3
	typeFloat  = 4
	typeDouble = 5

	semCounter  = 1
	semInstant  = 3
	semDiscrete = 4
)

// Value formats of a pmValueSet.
const (
	valInsitu = 0
	valDptr   = 1
)

// nullInst is PM_IN_NULL, the instance of a singular metric.
const nullInst = -1

// Label is an archive label: the header of every file of an archive.
type Label struct {
	Version int
	PID     uint32
	Start   time.Time
	// Volume is the volume number (-1 for .meta, -2 for .index).
	Volume int32
	Host   string
	TZ     string
	// Zoneinfo is the collection host's zone name (version 3 only).
	Zoneinfo string
}

// ErrNotArchive says a file does not start with a PCP archive label.
var ErrNotArchive = errors.New("not a PCP archive file (no v2 or v3 archive label)")

// versionOf returns the archive version a file starts with (0 if none):
// the first word is the label's record length, the second its magic.
func versionOf(head []byte) int {
	if len(head) < 8 {
		return 0
	}
	return labelVersion(be32(head), be32(head[4:]))
}

func labelVersion(size, magic uint32) int {
	switch {
	case magic == magicV2 && size == labelLenV2:
		return 2
	case magic == magicV3 && size == labelLenV3:
		return 3
	}
	return 0
}

// decodeLabel decodes an archive label's payload (the record without its
// length words).
func decodeLabel(p []byte) (Label, error) {
	if len(p) < 4 {
		return Label{}, ErrNotArchive
	}
	v := labelVersion(uint32(len(p)+8), be32(p))
	if v == 0 {
		return Label{}, ErrNotArchive
	}
	var l Label
	l.Version = v
	l.PID = be32(p[4:])
	if v == 2 {
		l.Start = time.Unix(int64(be32(p[8:])), int64(be32(p[12:]))*1000).UTC()
		l.Volume = int32(be32(p[16:]))
		l.Host = cString(p[20:84])
		l.TZ = cString(p[84:124])
		return l, nil
	}
	l.Start = time.Unix(int64(seconds64(be32(p[8:]), be32(p[12:]))), int64(be32(p[16:]))).UTC()
	l.Volume = int32(be32(p[20:]))
	l.Host = cString(p[32:288])
	l.TZ = cString(p[288:544])
	l.Zoneinfo = cString(p[544:800])
	return l, nil
}

// recordReader reads the framed records of a volume or .meta file:
// length, payload, the same length again.
type recordReader struct {
	name string
	r    *bufio.Reader
	off  int64
}

// FormatError is a malformed record: which file, at which byte offset.
type FormatError struct {
	File   string
	Offset int64
	Err    error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// errTruncated says a file ends inside a record.
var errTruncated = errors.New("truncated record (file ends inside it)")

// next returns the payload of the next record and its offset; io.EOF at a
// clean end of file, a *FormatError otherwise.
func (rr *recordReader) next() ([]byte, int64, error) {
	at := rr.off
	var head [4]byte
	n, err := io.ReadFull(rr.r, head[:])
	if err == io.EOF {
		return nil, at, io.EOF
	}
	if err != nil {
		return nil, at, rr.fail(at, errTruncated)
	}
	size := be32(head[:])
	if size < 12 || size > maxRecord {
		return nil, at, rr.fail(at, fmt.Errorf("record length %d out of range", size))
	}
	// Read what is there rather than allocate what the length claims: a
	// corrupted length in a short file costs the file, not 64 MiB.
	var buf bytes.Buffer
	got, err := io.CopyN(&buf, rr.r, int64(size-4))
	rr.off += int64(n) + got
	if err != nil {
		return nil, at, rr.fail(at, errTruncated)
	}
	rec := buf.Bytes()
	if tail := be32(rec[len(rec)-4:]); tail != size {
		return nil, at, rr.fail(at, fmt.Errorf("record length %d does not match its trailer %d", size, tail))
	}
	return rec[:len(rec)-4], at, nil
}

func (rr *recordReader) fail(at int64, err error) error {
	return &FormatError{File: rr.name, Offset: at, Err: err}
}

// decoder reads big-endian fields from a record payload, remembering the
// first overrun instead of panicking.
type decoder struct {
	b   []byte
	pos int
	err error
}

func (d *decoder) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || d.pos+n > len(d.b) {
		d.err = fmt.Errorf("field at byte %d overruns the record (%d bytes)", d.pos, len(d.b))
		return false
	}
	return true
}

func (d *decoder) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return be32(b)
	}
	return 0
}

func (d *decoder) i32() int32 { return int32(d.u32()) }

func (d *decoder) u64() uint64 {
	if b := d.bytes(8); b != nil {
		return be64(b)
	}
	return 0
}

func (d *decoder) bytes(n int) []byte {
	if !d.need(n) {
		return nil
	}
	v := d.b[d.pos : d.pos+n]
	d.pos += n
	return v
}

// stamp reads a timestamp: seconds and microseconds (v2), or 64-bit
// seconds and nanoseconds (v3).
func (d *decoder) stamp(version int) time.Time {
	if version == 2 {
		sec, usec := d.u32(), d.u32()
		return time.Unix(int64(int32(sec)), int64(usec)*1000).UTC()
	}
	return time.Unix(int64(seconds64(d.u32(), d.u32())), int64(d.u32())).UTC()
}

// seconds64 reads the 64-bit seconds of a version 3 timestamp from its two
// words. LOGARCHIVE(5) says big-endian, but pmlogger 6.0 on a little-endian
// host writes the low word first (6b07b80d 00000000 for 2026): for any time
// before 2106 one word is zero, which tells the order.
func seconds64(w0, w1 uint32) uint64 {
	if w1 == 0 {
		return uint64(w0)
	}
	return uint64(w0)<<32 | uint64(w1)
}

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// cString returns the NUL-terminated string at the start of b.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// float32From and float64From read IEEE floats from raw bits.
func float32From(bits uint32) float64 { return float64(math.Float32frombits(bits)) }
func float64From(bits uint64) float64 { return math.Float64frombits(bits) }
