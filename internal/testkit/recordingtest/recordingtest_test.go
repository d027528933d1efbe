package recordingtest

import (
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

func TestChunksGiveBackTheIntervals(t *testing.T) {
	custom, err := hist.NewCustom(hist.Microsecond, []float64{20, 40, math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	_ = custom.AddCustom(1, 3)
	grid := hist.NewExact(hist.Nanosecond, 0)
	_ = grid.Record(1234)
	start := time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)
	ivs := []stream.Interval{
		{Source: "a", Start: start, Duration: time.Second, Series: []stream.SeriesHist{{Key: stream.Key{Event: "e"}, Hist: custom}}},
		{Source: "a", Start: start.Add(time.Second), Duration: time.Second, Gap: true},
		{Source: "b", Start: stream.RelativeStart, Duration: time.Second, Relative: true, Series: []stream.SeriesHist{{Key: stream.Key{Event: "f"}, Hist: grid}}},
	}
	got := Intervals(Chunks(Encode(ivs)))
	if len(got) != 3 || !got[0].Start.Equal(start) || !got[1].Gap || !got[2].Relative ||
		got[0].Series[0].Hist.Count() != 3 || !got[0].Series[0].Hist.IsCustom() || got[2].Series[0].Hist.Sum != 1234 {
		t.Fatalf("got %+v", got)
	}
	if Intervals(nil) != nil || Intervals([]byte{0xff}) != nil || Chunks(nil) != nil {
		t.Error("empty input gave intervals")
	}
}
