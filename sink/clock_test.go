package sink

import (
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

func TestWindowClock(t *testing.T) {
	var c WindowClock
	odd := time.FixedZone("LMT", 561) // an offset of 9m21s: printed in UTC
	t0 := time.Date(2024, 5, 6, 7, 8, 9, 500, odd)
	for _, w := range []struct {
		iv     stream.Interval
		start  string
		offset float64
	}{
		{stream.Interval{Start: stream.RelativeStart.Add(3 * time.Second), Relative: true}, "", 3},
		{stream.Interval{Start: t0}, "2024-05-06T06:58:48.0000005Z", 0},
		{stream.Interval{Start: t0.Add(90 * time.Second).In(time.UTC)}, "2024-05-06T07:00:18.0000005Z", 90},
	} {
		start, dated, offset := c.Times(w.iv)
		if start != w.start || dated != (w.start != "") || offset != w.offset {
			t.Errorf("Times(%v) = %q, %v, %v; want %q, %v", w.iv.Start, start, dated, offset, w.start, w.offset)
		}
	}
}
