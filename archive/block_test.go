package archive

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// blockOfWindows encodes windows as a window block at blockStart.
func blockOfWindows(blockStart int64, ws []window) []byte {
	var data, payload []byte
	prev := blockStart
	for _, w := range ws {
		payload = encodeWindow(payload[:0], w)
		data, prev = appendEntry(data, prev, w.start, payload), w.start
	}
	return data
}

// decodeWindows reads a window block back.
func decodeWindows(blockStart int64, data []byte, from, to int64) ([]window, error) {
	var out []window
	zone := ""
	err := eachEntry(blockStart, data, from, to, func(start int64, p []byte) error {
		w, err := decodeWindow(start, p, zone)
		zone = w.zoneName
		out = append(out, w)
		return err
	})
	return out, err
}

func TestWindowBlockRoundTrip(t *testing.T) {
	const h = int64(7200e9)
	ws := []window{
		{start: h, dur: 1e9, zoneName: "UTC"},
		{start: h + 1e9, dur: 1e9, flags: flagGap, zoneName: "UTC"},
		{start: h + 5e8, dur: 0, flags: flagRelative, zoneOff: -3600, zoneName: "-01"}, // out of order: a negative delta
		{start: h + blockSpan - 1, dur: math.MaxInt64, zoneOff: 7200, zoneName: "CEST"},
	}
	data := blockOfWindows(h, ws)
	got, err := decodeWindows(h, data, math.MinInt64, math.MaxInt64)
	if err != nil || !reflect.DeepEqual(got, ws) {
		t.Fatalf("got %+v, %v", got, err)
	}
	// A range skips entries without decoding them.
	got, err = decodeWindows(h, data, h+1e9, h+blockSpan-1)
	if err != nil || len(got) != 1 || got[0] != ws[1] {
		t.Fatalf("[1 s, 1 h - 1 ns): %+v, %v", got, err)
	}
	// Truncated anywhere: an error, never a panic.
	for n := 1; n < len(data); n++ {
		if _, err := decodeWindows(h, data[:n], math.MinInt64, math.MaxInt64); err != nil && !errors.Is(err, errBadBlock) {
			t.Fatalf("cut at %d: %v", n, err)
		}
	}
}

// FuzzBlock decodes arbitrary bytes as a window block: errors are
// errBadBlock, never a panic.
func FuzzBlock(f *testing.F) {
	f.Add(blockOfWindows(0, []window{{start: 0, dur: 1e9, zoneName: "UTC"}, {start: 1e9, dur: 1e9, flags: flagGap, zoneName: "UTC"}}))
	f.Add(blockOfWindows(0, []window{{start: 5, dur: -1, zoneOff: 3600, zoneName: "CET"}}))
	f.Add([]byte{0x02, 0xff})
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := decodeWindows(0, data, math.MinInt64, math.MaxInt64); err != nil && !errors.Is(err, errBadBlock) {
			t.Fatalf("error not errBadBlock: %v", err)
		}
	})
}
