package terminal

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// fuzzIntervals turns bytes into SYNTHETIC intervals: each 4-byte record is
// (column, series and kind, latency exponent, count). Bit 0x80 of the kind
// makes Oracle-like upper-bound buckets (estimated sums), 0x40 an open top
// bucket, 0x20 a gap interval.
func fuzzIntervals(data []byte, relative bool) []stream.Interval {
	keys := []stream.Key{readKey, writeKey, idleKey, {Event: "µ weird, \x1b[31m label 漢字\u202e\xff"}}
	origin := t0
	if relative {
		origin = stream.RelativeStart
	}
	var ivs []stream.Interval
	for ; len(data) >= 4; data = data[4:] {
		col, kind, exp, count := int(data[0]%64), data[1], int(data[2]%48)-8, float64(data[3])
		iv := stream.Interval{Source: "fuzz", Start: origin.Add(time.Duration(col) * time.Second), Duration: time.Second, Relative: relative, Gap: kind&0x20 != 0}
		var h *hist.Histogram
		if kind&0x80 != 0 {
			h = hist.NewBuckets(hist.Microsecond)
			_ = h.AddBound(hist.UpperBound, math.Ldexp(1, max(exp, 0)), count)
		} else {
			h = hist.NewExact(hist.Microsecond, 0)
			_ = h.RecordN(math.Ldexp(1.3, exp), count)
		}
		if kind&0x40 != 0 {
			_ = h.AddOpenTop(math.Ldexp(1, max(exp, 1)), 1)
		}
		iv.Series = []stream.SeriesHist{{Key: keys[int(kind)%len(keys)], Hist: h}}
		ivs = append(ivs, iv)
	}
	return ivs
}

// FuzzScreen feeds arbitrary intervals, terminal sizes and key bytes to the
// viewer and checks that every screen fits its terminal: no panic, no line
// wider than the terminal, no more lines than it has.
func FuzzScreen(f *testing.F) {
	f.Add(byte(80), byte(24), byte(0), []byte{0, 0, 14, 10, 0, 0, 20, 1, 3, 0, 15, 2}, []byte("nfl"))
	f.Add(byte(40), byte(12), byte(1), []byte{0, 0x80, 20, 5, 1, 0xc1, 30, 1, 2, 0x20, 0, 0}, []byte(" p\x1b[C"))
	f.Add(byte(1), byte(1), byte(2), []byte{5, 3, 47, 255}, []byte("bi"))
	f.Add(byte(200), byte(70), byte(3), []byte{63, 2, 0, 1, 0, 1, 1, 1}, []byte("q\x03"))
	f.Fuzz(func(t *testing.T, w, h, flags byte, data, keys []byte) {
		width, height := int(w), int(h)
		v := newViewer(Options{Plain: flags&1 != 0, Size: func() (int, int) { return width, height }})
		if width == 0 || height == 0 {
			width, height = defaultWidth, defaultHeight // what size() falls back to
		}
		for _, iv := range fuzzIntervals(data, flags&2 != 0) {
			v.grid.Add(iv)
		}
		for _, k := range keys {
			v.handleKey(k)
		}
		v.render()
		checkFits(t, v.screen.String(), width, height)
		if v.o.Plain && strings.Contains(v.screen.String(), "\x1b") {
			t.Errorf("plain screen holds an escape: %q", v.screen.String())
		}
	})
}
