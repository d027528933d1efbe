// Package recordingtest turns fuzz inputs into streams of intervals for
// testing what consumes them (writers, views): the input is read as the
// frames of a latscope recording, so a fuzzer explores gaps, relative time,
// zones, custom edges with +Inf, fractional and huge counts and every grid
// the recording format can hold, while every interval it yields is valid.
package recordingtest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"testing"

	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/stream"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode writes intervals to a recording in memory; intervals the writer
// refuses are left out.
func Encode(ivs []stream.Interval) []byte {
	var buf bytes.Buffer
	w, err := recording.NewWriter(&buf)
	if err != nil {
		return nil
	}
	for _, iv := range ivs {
		_ = w.Write(iv)
	}
	_ = w.Close()
	return buf.Bytes()
}

// Decode reads a whole recording (an export, a file) and fails the test on
// any damage.
func Decode(t testing.TB, rec []byte) []stream.Interval {
	t.Helper()
	rd, err := recording.NewReader(bytes.NewReader(rec))
	if err != nil {
		t.Fatal(err)
	}
	var out []stream.Interval
	for {
		iv, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, iv)
	}
}

// Chunks turns a recording into fuzz input for Intervals: its frames as
// (uvarint length, type, payload), without header or checksums.
func Chunks(rec []byte) []byte {
	var out []byte
	pos := len(recording.Magic)
	for range 2 { // major, minor
		_, k := binary.Uvarint(rec[min(pos, len(rec)):])
		if k <= 0 {
			return nil
		}
		pos += k
	}
	for pos < len(rec) {
		n, k := binary.Uvarint(rec[pos:])
		if k <= 0 || n > uint64(len(rec)) {
			break
		}
		end := pos + k + 1 + int(n) + 4
		if end > len(rec) {
			break
		}
		out = binary.AppendUvarint(out, n)
		out = append(out, rec[pos+k:end-4]...)
		pos = end
	}
	return out
}

// Intervals reads chunks (uvarint length, type, payload, ...) as the frames
// of a recording, with valid checksums, and returns the intervals it holds
// up to the first damage.
func Intervals(chunks []byte) []stream.Interval {
	data := binary.AppendUvarint([]byte(recording.Magic), recording.MajorVersion)
	data = binary.AppendUvarint(data, recording.MinorVersion)
	for len(chunks) > 1 {
		n, k := binary.Uvarint(chunks)
		if k <= 0 || len(chunks) < k+1 {
			break
		}
		typ, rest := chunks[k], chunks[k+1:]
		n = min(n, uint64(len(rest)))
		frame := binary.AppendUvarint(nil, n)
		frame = append(frame, typ)
		frame = append(frame, rest[:n]...)
		data = append(data, binary.LittleEndian.AppendUint32(frame, crc32.Checksum(frame, castagnoli))...)
		chunks = rest[n:]
	}
	rd, err := recording.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	var out []stream.Interval
	for {
		iv, err := rd.Next()
		if err != nil {
			return out
		}
		out = append(out, iv)
	}
}
