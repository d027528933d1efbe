// Package recording is latscope's own file format: a compact, versioned,
// checksummed binary log of the stream.Intervals a source emitted, so that a
// recording replays with the same results as the original source.
//
// A recording is a header (Magic, major and minor version) followed by
// frames. Every frame carries its length, a type byte and a CRC-32C, so a
// recording cut short or damaged keeps every complete frame before the
// damage. Version 1.1 added histograms with custom bucket edges (custom.go)
// in a way 1.0 readers read safely; version 1.2 added mean series (count
// and total per window, mean.go), which 1.0 and 1.1 readers skip.
// docs/recording-format.md is the specification.
package recording

import (
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/latscope/latscope/hist"
)

// Magic starts every recording. As in PNG, the high-bit first byte and the
// CR LF, ^Z, LF sequence reveal 7-bit and line-ending conversions, and the
// third byte falls where a frame's type byte would, on type 0x53, which is
// reserved: a frame can never begin with the magic, so concatenated
// recordings stay readable.
const Magic = "\x89LSR\r\n\x1a\n"

// Versions this package writes and reads. A reader accepts any minor
// version of its major version and refuses other majors.
const (
	MajorVersion = 1
	MinorVersion = 2
)

// FormatName is the --input-format name of recordings.
const FormatName = "latscope"

// Extension is the recommended file name extension of recordings.
const Extension = ".lsr"

// Frame types. Types with bit 0x40 set are ancillary: a reader that does not
// know one skips it. A reader meeting an unknown critical type stops.
const (
	frameSource   byte = 0x01 // source name definition
	frameSeries   byte = 0x02 // series key and grid definition
	frameInterval byte = 0x03 // one interval
	frameReserved byte = 0x53 // where the magic's third byte falls
	ancillaryBit  byte = 0x40
)

// Interval flags.
const (
	ivGap      byte = 1 << 0
	ivRelative byte = 1 << 1
	ivAbsStart byte = 1 << 2 // absolute start; else a delta from the previous end
	ivZone     byte = 1 << 3 // the zone (offset, name) follows
	ivKnown         = ivGap | ivRelative | ivAbsStart | ivZone
)

// Histogram flags.
const (
	hSumExact byte = 1 << 0
	hTopOpen  byte = 1 << 1
	hFloat    byte = 1 << 2 // counts as float64 bits instead of uvarints
	hGrid     byte = 1 << 3 // unit, scale, zero pow follow; else the series' grid
	hKnown         = hSumExact | hTopOpen | hFloat | hGrid
)

// Limits a recording must keep; the writer refuses intervals beyond them and
// the reader treats them as damage, so a damaged or hostile file cannot make
// latscope allocate without bound.
const (
	maxFrameLen = 64 << 20 // payload bytes of one frame
	// maxBuckets bounds len(Counts): 64 powers of two (1 ns to 584 years)
	// at the finest scale.
	maxBuckets = 64 << hist.MaxScale
	// maxPow bounds |ZeroPow|: 2^±1100 units is beyond float64's range.
	maxPow = 1100
	// maxIndex bounds |Offset|: maxPow powers of two at the finest scale.
	maxIndex      = maxPow << hist.MaxScale
	maxZoneOffset = 48 * 3600 // seconds east of UTC
	// Unix seconds of 0001-01-01 and 9999-12-31T23:59:59 UTC.
	minUnixSec = -62135596800
	maxUnixSec = 253402300799
	// maxIntegral bounds counts written as uvarints: token = count << 1.
	maxIntegral = 1 << 63
)

// crcTable is CRC-32C (Castagnoli), the checksum of every frame.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrNotRecording says the input does not start with Magic.
var ErrNotRecording = errors.New("not a latscope recording (magic bytes missing)")

// DamageError reports a recording that is damaged or cut short at Offset,
// the byte offset of the frame (or header) that could not be read. Every
// frame before it was read.
type DamageError struct {
	Offset int64
	// Truncated says the input ended inside the frame: the writer was
	// killed, the copy is incomplete, or a followed file is still growing.
	Truncated bool
	Reason    string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("byte offset %d: %s", e.Offset, e.Reason)
}

// VersionError reports a recording written in a major version this reader
// does not know.
type VersionError struct {
	Offset       int64
	Major, Minor uint64
}

func (e *VersionError) Error() string {
	if e.Major > MajorVersion {
		return fmt.Sprintf("recording format version %d.%d is newer than this latscope reads (%d.x): upgrade latscope",
			e.Major, e.Minor, MajorVersion)
	}
	return fmt.Sprintf("unknown recording format version %d.%d (this latscope reads %d.x)", e.Major, e.Minor, MajorVersion)
}
