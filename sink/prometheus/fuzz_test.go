package prometheus

import (
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// FuzzRoundTrip builds a stream from the fuzzer's bytes (three series, one
// per layout: exact µs, power-of-two ms, custom edges; gaps and holes) and
// checks that the prometheus output reads back exactly.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{0, 10, 20, 1, 5, 2, 200, 3, 4, 9, 0, 0, 7})
	f.Add([]byte{1, 1, 1, 250, 2, 2, 2, 3, 3, 3, 0, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, streamOf(data))
	})
}

var customEdges = []float64{0.5, 3, 7, 100, math.Inf(1)}

// streamOf reads data two bytes at a time: the first says what happens
// (new interval, hole, gap, or an event for one of the series), the second
// gives the event's value.
func streamOf(data []byte) []stream.Interval {
	t0 := time.Date(2024, 3, 14, 12, 0, 0, 0, time.UTC)
	var ivs []stream.Interval
	cur := map[int]*hist.Histogram{}
	at, counted := t0, false
	closeIv := func() {
		iv := stream.Interval{Start: at, Duration: time.Second}
		for k := 0; k < 3; k++ {
			if h := cur[k]; h != nil {
				iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: string(rune('a' + k))}, Hist: h})
				counted = true
			}
		}
		ivs = append(ivs, iv)
		cur = map[int]*hist.Histogram{}
		at = at.Add(time.Second)
	}
	for i := 0; i+1 < len(data) && len(ivs) < 50; i += 2 {
		op, v := data[i]%8, float64(data[i+1])
		switch op {
		case 0:
			closeIv()
		case 1:
			closeIv()
			at = at.Add(time.Duration(v) * time.Millisecond) // a hole
		case 2:
			if counted && len(cur) == 0 {
				ivs = append(ivs, stream.Interval{Start: at, Duration: time.Second, Gap: true})
				at, counted = at.Add(time.Second), false
			}
		default:
			k := int(op) % 3
			h := cur[k]
			if h == nil {
				switch k {
				case 0:
					h = hist.NewExact(hist.Microsecond, 0)
				case 1:
					h = hist.NewBuckets(hist.Millisecond)
				default:
					h, _ = hist.NewCustom(hist.Microsecond, customEdges)
				}
				cur[k] = h
			}
			switch k {
			case 0:
				_ = h.Record(v * 3.7)
			case 1:
				_ = h.AddBound(hist.LowerBound, math.Exp2(float64(int(v)%20)), 1+v/100)
			default:
				_ = h.AddCustom(int(v)%5-1, 1)
			}
		}
	}
	if len(cur) > 0 {
		closeIv()
	}
	return ivs
}
