package static

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/htmlpage"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// fuzzIntervals turns bytes into intervals, 6 bytes each: flags (gap,
// relative, series, unit), a signed start offset in seconds, a duration
// code, a latency exponent and an event count. Names come from the fuzzer
// as they are (any bytes).
func fuzzIntervals(data []byte, name string) []stream.Interval {
	units := []hist.Unit{hist.Nanosecond, hist.Microsecond, hist.Millisecond, hist.Second}
	var ivs []stream.Interval
	for len(data) >= 6 {
		b := data[:6]
		data = data[6:]
		flags := b[0]
		offset := time.Duration(int16(binary.BigEndian.Uint16(b[1:3]))) * time.Second
		iv := stream.Interval{Source: name, Start: syntheticStart.Add(offset), Gap: flags&1 != 0, Relative: flags&2 != 0}
		if iv.Relative {
			iv.Start = stream.RelativeStart.Add(offset)
		}
		if b[3] != 0 {
			iv.Duration = time.Duration(1) << (b[3] % 45)
		}
		h := hist.NewExact(units[flags>>2&3], int(flags>>4&3))
		v := math.Ldexp(1+float64(b[5])/256, int(b[4]%48)-4)
		_ = h.RecordN(v, float64(b[5]))
		key := stream.Key{Event: name, Instance: string(rune('0' + flags>>6))}
		iv.Series = []stream.SeriesHist{{Key: key, Hist: h}}
		ivs = append(ivs, iv)
	}
	return ivs
}

func encodeFuzzInterval(flags byte, offsetSec int16, durCode, exp, count byte) []byte {
	b := []byte{flags, 0, 0, durCode, exp, count}
	binary.BigEndian.PutUint16(b[1:3], uint16(offsetSec))
	return b
}

// FuzzWrite checks that every writer survives any intervals and names: the
// SVG stays well-formed XML, the HTML keeps its CSP and fetches nothing, and
// the PNG decodes.
func FuzzWrite(f *testing.F) {
	var seed []byte
	for i := range 20 {
		seed = append(seed, encodeFuzzInterval(byte(i%3)<<6|1<<2, int16(i*3), 32, byte(10+i%5), byte(5+i))...)
	}
	f.Add(seed, "db file sequential read", uint16(0), uint8(0), false)
	f.Add(append(seed, encodeFuzzInterval(1, 30, 32, 0, 0)...), "log file sync", uint16(5), uint8(3), true)
	f.Add(encodeFuzzInterval(2, -5, 44, 47, 255), "a<b>&\"'\x00\xff</script>", uint16(1), uint8(1), true)
	f.Add([]byte{}, "", uint16(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, data []byte, name string, maxCols uint16, maxRows uint8, logScale bool) {
		if len(data) > 6*400 {
			data = data[:6*400]
		}
		o := Options{MaxColumns: int(maxCols % 300), MaxRows: int(maxRows % 40)}
		if o.MaxColumns == 0 {
			o.MaxColumns = 300 // keep each run fast
		}
		if logScale {
			o.Scale = heatmap.Log
		}
		ivs := fuzzIntervals(data, name)
		var svg, page, img bytes.Buffer
		if err := WriteSVG(&svg, ivs, o); err != nil {
			t.Fatal(err)
		}
		parseSVG(t, svg.Bytes())
		if err := WriteHTML(&page, ivs, o); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(page.String(), htmlpage.ContentSecurityPolicy) || externalRef.Match(page.Bytes()) {
			t.Fatal("HTML lost its CSP or references something external")
		}
		if strings.Count(page.String(), "</script>") != 2 {
			t.Fatal("a name closed a script element")
		}
		if err := WritePNG(&img, ivs, o); err != nil {
			t.Fatal(err)
		}
		decodePNG(t, img.Bytes())
	})
}
