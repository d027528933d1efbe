package stream

import (
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
)

func TestQuantityValidate(t *testing.T) {
	good := SeriesMean{Key: Key{Event: "disk.r/s", Instance: "sda"}, Count: 1, Sum: 412, Unit: QuantityUnit, Quantity: PerSecond}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, m := range []SeriesMean{
		{Count: 1, Sum: 1, Unit: QuantityUnit, Quantity: "furlongs"},
		{Count: 1, Sum: 1, Unit: hist.Millisecond, Quantity: Percent},
		{Count: -1, Sum: 1, Unit: QuantityUnit, Quantity: Percent},
	} {
		if m.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", m)
		}
	}
}

// TestQuantityMerges checks that windows of a quantity merge exactly: two
// seconds of %util (busy ms × 100 over elapsed ms) give the busy share of
// both, not the mean of the two shares.
func TestQuantityMerges(t *testing.T) {
	util := func(busyMs, elapsedMs float64) SeriesMean {
		return SeriesMean{Key: Key{Event: "disk.%util", Instance: "sda"}, Count: elapsedMs, Sum: busyMs * 100, Unit: QuantityUnit, Quantity: Percent}
	}
	m := util(250, 1000).Plus(util(1000, 2000))
	if got := m.Mean(); got != 1250.0*100/3000 || m.Quantity != Percent {
		t.Errorf("merged %%util = %v (%s), want %v", got, m.Quantity, 1250.0*100/3000)
	}
	t0 := time.Unix(1000, 0)
	tr := NewMeanTracker(MeanOptions{})
	tr.Add(Interval{Source: "host:a", Start: t0, Duration: time.Second, Means: []SeriesMean{util(250, 1000)}})
	tr.Add(Interval{Source: "host:a", Start: t0.Add(time.Second), Duration: 2 * time.Second, Means: []SeriesMean{util(1000, 2000)}})
	s := tr.Series()[0]
	if s.Quantity != Percent || s.Mean() != 1250.0*100/3000 {
		t.Errorf("series %s mean %v", s.Quantity, s.Mean())
	}
	if lo, hi, ok := s.MeanRange(); !ok || lo != 25 || hi != 50 {
		t.Errorf("interval values %v – %v (%v), want 25 – 50", lo, hi, ok)
	}
	if got := s.Points[1].Mean(s.Unit); got != 50 {
		t.Errorf("second point %v, want 50", got)
	}
	if got := (SeriesMean{Unit: QuantityUnit, Quantity: Percent}).Mean(); !math.IsNaN(got) {
		t.Errorf("no count: %v, want NaN", got)
	}
}

// TestQuantitiesFollowLatencies checks the order of mean series: latencies
// by total time, then quantities in the order the source reported them.
func TestQuantitiesFollowLatencies(t *testing.T) {
	ss := []*MeanSeries{
		{Key: Key{Event: "cpu.%user"}, Unit: QuantityUnit, Quantity: Percent, Sum: 1e12},
		{Key: Key{Event: "stmt"}, Unit: hist.Millisecond, Sum: 1},
		{Key: Key{Event: "cpu.%system"}, Unit: QuantityUnit, Quantity: Percent, Sum: 1e13},
		{Key: Key{Event: "disk.r_await"}, Unit: hist.Millisecond, Sum: 5},
	}
	SortMeanSeries(ss)
	var got []string
	for _, s := range ss {
		got = append(got, s.Key.Event)
	}
	want := []string{"disk.r_await", "stmt", "cpu.%user", "cpu.%system"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
