package recording

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// fuzzSeeds are real recordings: Oracle buckets, trace waits, both sources
// interleaved, the edge cases, custom bucket edges, mean series (synthetic),
// concatenated and cut short.
func fuzzSeeds(f *testing.F) [][]byte {
	example := encode(f, exampleIntervals(f, true)[:4])
	trace := encode(f, traceIntervals(f, "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc", 10*time.Millisecond))
	_, small := smallRecording(f)
	edge := encode(f, edgeCaseIntervals(f))
	custom := encode(f, customEdgeCases(f))
	netapp := encode(f, netappTraceIntervals(f)[:20])
	means := encode(f, meanEdgeCases(f))
	goldenMeans := encode(f, goldenMeanIntervals())
	return [][]byte{example, trace, small, edge, custom, netapp, means, goldenMeans, append(bytes.Clone(example), trace...),
		append(bytes.Clone(means), custom...), example[:len(example)/2], edge[:len(edge)-3], custom[:len(custom)-5],
		means[:len(means)-7], []byte(Magic)}
}

// FuzzDecode feeds arbitrary bytes to the reader: it must never panic, and
// whatever it decodes must be accepted by the writer and decode again to
// the same intervals.
func FuzzDecode(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(checkReencodes)
}

// FuzzDecodeFrames reaches the payload decoders, which random bytes rarely
// pass the CRC to: the input is a list of (uvarint length, type, payload)
// that the harness turns into frames with valid CRCs.
func FuzzDecodeFrames(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(unframe(seed))
	}
	f.Fuzz(func(t *testing.T, chunks []byte) {
		data := binary.AppendUvarint([]byte(Magic), MajorVersion)
		data = binary.AppendUvarint(data, MinorVersion)
		for len(chunks) > 1 {
			n, k := binary.Uvarint(chunks)
			if k <= 0 || len(chunks) < k+1 {
				break
			}
			typ, rest := chunks[k], chunks[k+1:]
			n = min(n, uint64(len(rest)))
			data = append(data, rawFrame(typ, rest[:n])...)
			chunks = rest[n:]
		}
		checkReencodes(t, data)
	})
}

// unframe turns a recording's frames into FuzzDecodeFrames' input,
// stopping at a second header or a frame cut short.
func unframe(data []byte) []byte {
	var out []byte
	pos := len(Magic) + 2
	for pos < len(data) {
		n, k := binary.Uvarint(data[pos:])
		end := pos + k + 1 + int(n) + 4
		if k <= 0 || n > maxFrameLen || end > len(data) {
			break
		}
		out = binary.AppendUvarint(out, n)
		out = append(out, data[pos+k:end-4]...)
		pos = end
	}
	return out
}

func checkReencodes(t *testing.T, data []byte) {
	got, _ := decodeAll(data)
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, iv := range got {
		if err := w.Write(iv); err != nil {
			t.Fatalf("decoded interval %d refused by the writer: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := decodeAll(buf.Bytes())
	if err != nil {
		t.Fatalf("re-encoded recording does not decode: %v", err)
	}
	if err := diffIntervals(got, again); err != nil {
		t.Fatalf("re-encoding changed the intervals: %v", err)
	}
}
