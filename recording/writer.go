package recording

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("recording writer is closed")

// Writer writes intervals to a recording. It buffers; call Flush or Close.
// A Writer is not safe for concurrent use.
type Writer struct {
	// FlushEach flushes after every interval, so that another process can
	// follow a live recording (latscope --follow FILE).
	FlushEach bool

	bw      *bufio.Writer
	buf     []byte // frames of the interval being written
	payload []byte // payload of the frame being built
	sources map[string]*writerSource
	series  map[stream.Key]seriesDef
	means   map[stream.Key]meanDef // mean series (format 1.2)
	closed  bool
	err     error // sticky write error
}

type writerSource struct {
	id    uint64
	clock clock
}

type seriesDef struct {
	id   uint64
	grid grid
	// edges are the custom edges last sent for the series (format 1.1).
	edges []float64
}

// NewWriter writes the recording header to w and returns a Writer that
// appends intervals to it.
func NewWriter(w io.Writer) (*Writer, error) {
	header := binary.AppendUvarint([]byte(Magic), MajorVersion)
	header = binary.AppendUvarint(header, MinorVersion)
	if _, err := w.Write(header); err != nil {
		return nil, fmt.Errorf("writing recording header: %w", err)
	}
	return &Writer{
		bw:      bufio.NewWriterSize(w, 64<<10),
		sources: map[string]*writerSource{},
		series:  map[stream.Key]seriesDef{},
		means:   map[stream.Key]meanDef{},
	}, nil
}

// Write appends one interval, preceded by the definitions of a source or
// series it is the first to use. An interval that fails stream's Validate
// or the format's limits is refused with an error and nothing is written.
func (w *Writer) Write(iv stream.Interval) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	// Monotonic clock readings would make Sub differ from the wall time
	// the reader sees.
	iv.Start = iv.Start.Round(0)
	if err := checkInterval(iv); err != nil {
		return fmt.Errorf("cannot record interval: %w", err)
	}
	if err := w.encode(iv); err != nil {
		return fmt.Errorf("cannot record interval: %w", err)
	}
	if _, err := w.bw.Write(w.buf); err != nil {
		w.err = fmt.Errorf("writing recording: %w", err)
		return w.err
	}
	if w.FlushEach {
		return w.Flush()
	}
	return nil
}

// Flush writes buffered frames to the underlying writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("writing recording: %w", err)
		return w.err
	}
	return nil
}

// Close flushes the recording. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.Flush()
}

// checkInterval refuses what the reader would refuse.
func checkInterval(iv stream.Interval) error {
	if err := iv.Validate(); err != nil {
		return err
	}
	if sec := iv.Start.Unix(); sec < minUnixSec || sec > maxUnixSec {
		return fmt.Errorf("%s: start %s outside years 1-9999", iv.Source, iv.Start)
	}
	if _, off := iv.Start.Zone(); off < -maxZoneOffset || off > maxZoneOffset {
		return fmt.Errorf("%s: zone offset %ds beyond ±48h", iv.Source, off)
	}
	for _, s := range iv.Series {
		if err := checkHist(s.Hist); err != nil {
			return fmt.Errorf("%s: series %s: %w", iv.Source, s.Key, err)
		}
	}
	return nil
}

// encode builds the frames of iv in w.buf. Definitions it adds are undone
// when the interval turns out too large for a frame.
func (w *Writer) encode(iv stream.Interval) error {
	w.buf = w.buf[:0]
	src, newSource := w.source(iv.Source)
	wire := make([]wireHist, len(iv.Series))
	var added []stream.Key
	for j, s := range iv.Series {
		wire[j] = toWire(s.Hist)
		if _, ok := w.series[s.Key]; !ok {
			w.defineSeries(s.Key, wire[j].main)
			added = append(added, s.Key)
		}
	}
	var addedMeans []stream.Key
	for _, m := range iv.Means {
		if _, ok := w.means[m.Key]; !ok {
			w.defineMean(m)
			addedMeans = append(addedMeans, m.Key)
		}
	}
	edges, err := w.appendInterval(src, iv, wire)
	if err != nil {
		for _, k := range added {
			delete(w.series, k)
		}
		for _, k := range addedMeans {
			delete(w.means, k)
		}
		if newSource {
			delete(w.sources, iv.Source)
		}
		return err
	}
	for k, e := range edges {
		def := w.series[k]
		def.edges = e
		w.series[k] = def
	}
	src.clock.advance(iv.Start, iv.Duration)
	src.clock.zoneName, src.clock.zoneOff = iv.Start.Zone()
	return nil
}

// source returns the state of a source, defining it on first use.
func (w *Writer) source(name string) (*writerSource, bool) {
	if s, ok := w.sources[name]; ok {
		return s, false
	}
	s := &writerSource{id: uint64(len(w.sources)), clock: newClock()}
	w.sources[name] = s
	p := binary.AppendUvarint(w.payload[:0], s.id)
	p = appendString(p, name)
	w.appendFrame(frameSource, p)
	return s, true
}

// defineSeries defines a series with the grid of its first histogram (for a
// custom-edge histogram, the grid of its fallback).
func (w *Writer) defineSeries(key stream.Key, first *hist.Histogram) {
	def := seriesDef{id: uint64(len(w.series)), grid: gridOf(first)}
	w.series[key] = def
	p := binary.AppendUvarint(w.payload[:0], def.id)
	p = appendKey(p, key)
	p = appendGrid(p, def.grid)
	w.appendFrame(frameSeries, p)
}

// appendInterval appends the interval frame. It returns the custom edges
// the frame sends, per series, for the caller to keep once the frame is
// accepted.
func (w *Writer) appendInterval(src *writerSource, iv stream.Interval, wire []wireHist) (map[stream.Key][]float64, error) {
	c := &src.clock
	var flags byte
	if iv.Gap {
		flags |= ivGap
	}
	if iv.Relative {
		flags |= ivRelative
	}
	delta := iv.Start.Sub(c.prevEnd)
	if !c.hasPrev || !c.prevEnd.Add(delta).Equal(iv.Start) {
		flags |= ivAbsStart
	}
	name, off := iv.Start.Zone()
	changed := name != c.zoneName || off != c.zoneOff
	if changed {
		flags |= ivZone
	}
	p := binary.AppendUvarint(w.payload[:0], src.id)
	p = append(p, flags)
	if changed {
		p = binary.AppendVarint(p, int64(off))
		p = appendString(p, name)
	}
	if flags&ivAbsStart != 0 {
		p = binary.AppendVarint(p, iv.Start.Unix())
		p = binary.AppendUvarint(p, uint64(iv.Start.Nanosecond()))
	} else {
		p = binary.AppendVarint(p, int64(delta))
	}
	// Wraps modulo 2^64 like the reader's sum, so it is always exact.
	p = binary.AppendVarint(p, int64(iv.Duration-c.prevDur))
	p = binary.AppendUvarint(p, uint64(len(iv.Series)))
	customs := 0
	for j, s := range iv.Series {
		def := w.series[s.Key]
		p = binary.AppendUvarint(p, def.id)
		p = appendHist(p, wire[j].main, def.grid)
		if wire[j].custom != nil {
			customs++
		}
	}
	var edges map[stream.Key][]float64
	if customs > 0 {
		p, edges = w.appendCustomSection(p, iv, wire, customs)
	} else if len(iv.Means) > 0 {
		p = binary.AppendUvarint(p, 0) // an empty custom section before the means
	}
	if len(iv.Means) > 0 {
		p = w.appendMeans(p, iv.Means)
	}
	w.payload = p
	if len(p) > maxFrameLen {
		return nil, fmt.Errorf("%s: interval needs %d bytes, more than a frame's %d", iv.Source, len(p), maxFrameLen)
	}
	w.appendFrame(frameInterval, p)
	return edges, nil
}

// appendCustomSection appends the exact custom-edge histograms after the
// series list (format 1.1); an interval without them has no section, so a
// 1.0 interval frame is unchanged. Edges are tracked per series in list
// order, so a series listed twice with other edges sends them again.
func (w *Writer) appendCustomSection(p []byte, iv stream.Interval, wire []wireHist, n int) ([]byte, map[stream.Key][]float64) {
	edges := map[stream.Key][]float64{}
	p = binary.AppendUvarint(p, uint64(n))
	for j, s := range iv.Series {
		if wire[j].custom == nil {
			continue
		}
		prev, ok := edges[s.Key]
		if !ok {
			prev = w.series[s.Key].edges
		}
		p = appendCustom(p, j, wire[j].custom, prev)
		edges[s.Key] = wire[j].custom.Bounds
	}
	return p, edges
}

// appendFrame appends a frame to w.buf: uvarint payload length, type,
// payload, CRC-32C of all that, little-endian.
func (w *Writer) appendFrame(typ byte, payload []byte) {
	start := len(w.buf)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(payload)))
	w.buf = append(w.buf, typ)
	w.buf = append(w.buf, payload...)
	sum := crc32.Checksum(w.buf[start:], crcTable)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, sum)
	w.payload = payload[:0]
}
