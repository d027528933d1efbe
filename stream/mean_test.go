package stream

import (
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
)

func TestMeanSeriesPointsGapsAndUnits(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	calls := Key{Event: "select 1"}
	reads := Key{Event: "blk_read_time"}
	var r Recording
	r.Add(Interval{Source: "pg", Start: t0, Duration: time.Second,
		Means: []SeriesMean{{Key: calls, Count: 4, Sum: 2, Unit: hist.Millisecond}}})
	r.Add(Interval{Source: "pg", Start: t0.Add(time.Second), Duration: time.Second, Gap: true})
	r.Add(Interval{Source: "pg", Start: t0.Add(2 * time.Second), Duration: time.Second,
		Means: []SeriesMean{{Key: reads, Count: 10, Sum: 1, Unit: hist.Millisecond}}})
	// The same window reported twice sums; a different unit converts.
	r.Add(Interval{Source: "pg", Start: t0.Add(2 * time.Second), Duration: time.Second,
		Means: []SeriesMean{{Key: calls, Count: 1, Sum: 3000, Unit: hist.Microsecond}}})

	ms := r.MeanSeries()
	if len(ms) != 2 || ms[0].Key != calls || ms[1].Key != reads {
		t.Fatalf("series = %v, want calls then reads (by total time)", ms)
	}
	c := ms[0]
	if c.Count != 5 || c.Sum != 5 || c.Unit != hist.Millisecond {
		t.Errorf("calls total = %v calls, %v %s; want 5 calls, 5 ms", c.Count, c.Sum, c.Unit)
	}
	if got := c.Mean(); got != 1e6 {
		t.Errorf("calls mean = %v ns, want 1e6", got)
	}
	if len(c.Points) != 3 || !c.Points[1].Gap || c.Points[2].Count != 1 || c.Points[2].Sum != 3 {
		t.Fatalf("calls points = %+v", c.Points)
	}
	if got := c.Points[0].Mean(c.Unit); got != 0.5e6 {
		t.Errorf("first point mean = %v ns, want 0.5e6", got)
	}
	rd := ms[1]
	if len(rd.Points) != 3 || rd.Points[0].Count != 0 || !math.IsNaN(rd.Points[0].Mean(rd.Unit)) {
		t.Errorf("reads points = %+v, want a zero point before its first report", rd.Points)
	}
}

func TestSeriesMeanValidate(t *testing.T) {
	for _, m := range []SeriesMean{
		{Count: -1, Unit: hist.Millisecond},
		{Count: 1, Sum: math.Inf(1), Unit: hist.Millisecond},
		{Count: math.NaN(), Unit: hist.Millisecond},
		{Count: 1, Sum: 1},
	} {
		iv := Interval{Source: "x", Start: time.Unix(1, 0), Duration: time.Second, Means: []SeriesMean{m}}
		if iv.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", m)
		}
	}
}
