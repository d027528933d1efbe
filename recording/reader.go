package recording

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/latscope/latscope/stream"
)

// Reader reads the intervals of a recording in file order.
type Reader struct {
	br           *bufio.Reader
	off          int64 // bytes consumed from the input
	major, minor uint64
	sources      []readerSource
	series       []readerSeries
	means        []readerMean // mean series (format 1.2)
	buf          []byte       // the frame being read
	err          error        // sticky: damage stops the reader
	// asVersion10 ignores what format 1.1 appended, as a 1.0 reader does
	// (tests check what such readers see).
	asVersion10 bool
	// asVersion11 ignores mean series (format 1.2), as a 1.1 reader does.
	asVersion11 bool
	// ignoreQuantities ignores mean series quantities, as a 1.2 reader
	// written before them does.
	ignoreQuantities bool
}

type readerSource struct {
	name  string
	clock clock
}

type readerSeries struct {
	key  stream.Key
	grid grid
	// edges are the series' current custom edges (format 1.1), nil until
	// an interval sends them.
	edges []float64
}

// readChunk bounds the memory a frame's declared length can make the reader
// allocate before the bytes actually arrive.
const readChunk = 1 << 20

// NewReader reads the recording header from r. It returns ErrNotRecording
// when r does not start with Magic, a *VersionError for a major version it
// does not read and a *DamageError when the header is cut short.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 64<<10)}
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Version returns the format version of the recording (of its last header,
// for concatenated recordings).
func (r *Reader) Version() (major, minor uint64) { return r.major, r.minor }

// Offset returns the number of input bytes read so far.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next interval. It returns io.EOF at the clean end of the
// input, a *DamageError when the rest of the input cannot be read (every
// interval before it was returned), a *VersionError when a concatenated
// recording has a major version it does not read, or the input's read
// error. Errors are sticky.
func (r *Reader) Next() (stream.Interval, error) {
	if r.err != nil {
		return stream.Interval{}, r.err
	}
	iv, err := r.next()
	if err != nil {
		r.err = err
	}
	return iv, err
}

func (r *Reader) next() (stream.Interval, error) {
	for {
		start := r.off
		first, err := r.br.Peek(1)
		if len(first) == 0 {
			if err == io.EOF {
				return stream.Interval{}, io.EOF
			}
			return stream.Interval{}, fmt.Errorf("reading recording at byte offset %d: %w", start, err)
		}
		if first[0] == Magic[0] && r.atHeader() {
			// A recording appended to another, or a followed file
			// rewritten from the top: a fresh set of definitions.
			if err := r.readHeader(); err != nil {
				return stream.Interval{}, err
			}
			continue
		}
		typ, payload, err := r.readFrame()
		if err != nil {
			return stream.Interval{}, err
		}
		iv, isInterval, err := r.apply(typ, payload)
		if err != nil {
			return stream.Interval{}, &DamageError{Offset: start, Reason: err.Error()}
		}
		if isInterval {
			return iv, nil
		}
	}
}

// atHeader reports whether the input continues with the magic (or with a
// prefix of it before the end). A frame never starts with the magic
// because its third byte is the reserved frame type 0x53; a frame whose
// length starts with byte 0x89 is longer than the magic, so peeking never
// waits for bytes beyond the frame.
func (r *Reader) atHeader() bool {
	p, _ := r.br.Peek(len(Magic))
	return string(p) == Magic[:len(p)]
}

// apply handles one frame; isInterval says iv holds an interval.
func (r *Reader) apply(typ byte, payload []byte) (iv stream.Interval, isInterval bool, err error) {
	switch typ {
	case frameSource:
		return iv, false, r.defineSource(payload)
	case frameSeries:
		return iv, false, r.defineSeries(payload)
	case frameInterval:
		iv, err = r.decodeInterval(payload)
		return iv, err == nil, err
	case frameMeanSeries:
		if !r.asVersion10 && !r.asVersion11 {
			return iv, false, r.defineMean(payload)
		}
	}
	if typ&ancillaryBit != 0 && typ != frameReserved {
		return iv, false, nil // added by a later minor version: skip
	}
	return iv, false, fmt.Errorf("unknown frame type %#02x", typ)
}

// readHeader reads the magic and version; it resets the definitions, which
// belong to one recording.
func (r *Reader) readHeader() error {
	start := r.off
	var magic [len(Magic)]byte
	n, err := io.ReadFull(r.br, magic[:])
	r.off += int64(n)
	if string(magic[:n]) != Magic[:n] {
		return ErrNotRecording
	}
	if err != nil {
		return r.cut(start, err, "recording header cut short")
	}
	var version [2]uint64
	for i := range version {
		b, err := r.readVarint()
		if err != nil {
			return r.cut(start, err, "recording header cut short")
		}
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return &DamageError{Offset: start, Reason: "bad version number in the recording header"}
		}
		version[i] = v
	}
	if version[0] != MajorVersion {
		return &VersionError{Offset: start, Major: version[0], Minor: version[1]}
	}
	r.major, r.minor = version[0], version[1]
	r.sources, r.series, r.means = r.sources[:0], r.series[:0], r.means[:0]
	return nil
}

// cut turns a read error at the frame or header starting at start into a
// truncation report; other read errors pass through.
func (r *Reader) cut(start int64, err error, reason string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &DamageError{Offset: start, Truncated: true, Reason: reason}
	}
	return fmt.Errorf("reading recording at byte offset %d: %w", r.off, err)
}

// readVarint reads the bytes of one varint into r.buf (reset first).
func (r *Reader) readVarint() ([]byte, error) {
	r.buf = r.buf[:0]
	for len(r.buf) < binary.MaxVarintLen64 {
		c, err := r.br.ReadByte()
		if err != nil {
			if len(r.buf) > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return r.buf, err
		}
		r.off++
		r.buf = append(r.buf, c)
		if c < 0x80 {
			return r.buf, nil
		}
	}
	return r.buf, nil // overlong: binary.Uvarint reports it
}

// readFrame reads one whole frame and checks its CRC.
func (r *Reader) readFrame() (typ byte, payload []byte, err error) {
	start := r.off
	if _, err := r.readVarint(); err != nil {
		return 0, nil, r.cut(start, err, "frame length cut short")
	}
	n, k := binary.Uvarint(r.buf)
	if k <= 0 {
		return 0, nil, &DamageError{Offset: start, Reason: "bad frame length"}
	}
	if n > maxFrameLen {
		return 0, nil, &DamageError{Offset: start, Reason: fmt.Sprintf("frame length %d exceeds the limit of %d", n, maxFrameLen)}
	}
	want := k + 1 + int(n) + 4 // length, type, payload, CRC
	if err := r.fill(want); err != nil {
		reason := fmt.Sprintf("frame of %d bytes cut short after %d (recording truncated?)", want, len(r.buf))
		return 0, nil, r.cut(start, err, reason)
	}
	body, stored := r.buf[:want-4], binary.LittleEndian.Uint32(r.buf[want-4:])
	if sum := crc32.Checksum(body, crcTable); sum != stored {
		return 0, nil, &DamageError{Offset: start,
			Reason: fmt.Sprintf("frame checksum mismatch (stored %08x, computed %08x): recording damaged", stored, sum)}
	}
	return body[k], body[k+1:], nil
}

// fill reads into r.buf until it holds want bytes, growing it by at most
// readChunk at a time so a damaged length cannot force a huge allocation.
func (r *Reader) fill(want int) error {
	for len(r.buf) < want {
		have := len(r.buf)
		chunk := min(want-have, readChunk)
		if cap(r.buf)-have < chunk {
			grown := make([]byte, have, have+chunk)
			copy(grown, r.buf)
			r.buf = grown
		}
		m, err := io.ReadFull(r.br, r.buf[have:have+chunk])
		r.buf = r.buf[:have+m]
		r.off += int64(m)
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Reader) defineSource(payload []byte) error {
	d := decoder{b: payload}
	id := d.uvarint("source id")
	name := d.string("source name")
	if err := d.definition("source", id, len(r.sources)); err != nil {
		return err
	}
	r.sources = append(r.sources, readerSource{name: name, clock: newClock()})
	return nil
}

func (r *Reader) defineSeries(payload []byte) error {
	d := decoder{b: payload}
	id := d.uvarint("series id")
	s := readerSeries{key: d.key()}
	s.grid = decodeGrid(&d)
	if err := d.definition("series", id, len(r.series)); err != nil {
		return err
	}
	if err := checkGrid(s.grid); err != nil {
		return fmt.Errorf("series definition %d (%s): %w", id, s.key, err)
	}
	r.series = append(r.series, s)
	return nil
}

func (r *Reader) decodeInterval(payload []byte) (stream.Interval, error) {
	d := decoder{b: payload}
	sid := d.uvarint("source id")
	if d.err == nil && sid >= uint64(len(r.sources)) {
		return stream.Interval{}, fmt.Errorf("interval: undefined source id %d", sid)
	}
	if d.err != nil {
		return stream.Interval{}, fmt.Errorf("interval: %w", d.err)
	}
	src := &r.sources[sid]
	c := src.clock // committed only when the whole interval decodes
	iv := stream.Interval{Source: src.name}
	flags := d.byte("interval flags")
	if d.err == nil && flags&^ivKnown != 0 {
		d.fail("unknown interval flags %#02x", flags&^ivKnown)
	}
	iv.Gap, iv.Relative = flags&ivGap != 0, flags&ivRelative != 0
	if flags&ivZone != 0 {
		c.zoneOff = int(d.bounded("zone offset", -maxZoneOffset, maxZoneOffset))
		c.zoneName = d.string("zone name")
		c.loc = location(c.zoneName, c.zoneOff)
	}
	start := decodeStart(&d, &c, flags&ivAbsStart != 0)
	iv.Duration = c.prevDur + time.Duration(d.varint("duration"))
	iv.Series = r.decodeSeries(&d)
	if !r.asVersion10 && !r.asVersion11 {
		iv.Means = r.decodeMeans(&d)
	}
	if d.err != nil {
		return stream.Interval{}, fmt.Errorf("interval of %s: %w", src.name, d.err)
	}
	iv.Start = start.In(c.loc)
	if err := iv.Validate(); err != nil {
		return stream.Interval{}, err
	}
	c.advance(iv.Start, iv.Duration)
	src.clock = c
	return iv, nil
}

func decodeStart(d *decoder, c *clock, absolute bool) time.Time {
	var t time.Time
	if absolute {
		sec := d.bounded("start seconds", minUnixSec, maxUnixSec)
		nsec := d.ubounded("start nanoseconds", 999999999)
		t = time.Unix(sec, int64(nsec))
	} else {
		delta := d.varint("start delta")
		if d.err == nil && !c.hasPrev {
			d.fail("start delta without a previous interval")
		}
		t = c.prevEnd.Add(time.Duration(delta))
	}
	if sec := t.Unix(); d.err == nil && (sec < minUnixSec || sec > maxUnixSec) {
		d.fail("start %d s outside years 1-9999", sec)
	}
	return t
}

func (r *Reader) decodeSeries(d *decoder) []stream.SeriesHist {
	n := d.uvarint("series count")
	if d.err == nil && n > uint64(len(d.b)) {
		d.fail("%d series cannot fit in %d bytes", n, len(d.b))
	}
	var out []stream.SeriesHist
	var ids []uint64
	for i := uint64(0); i < n && d.err == nil; i++ {
		id, ok := d.ref("series id", len(r.series))
		if !ok {
			break
		}
		def := r.series[id]
		h := decodeHist(d, def.grid, nil)
		if d.err != nil {
			break
		}
		out = append(out, stream.SeriesHist{Key: def.key, Hist: h})
		ids = append(ids, id)
	}
	if !r.asVersion10 {
		r.decodeCustomSection(d, ids, out)
	}
	return out
}
