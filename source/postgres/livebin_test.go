package postgres

import (
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

// TestFirstObservationDropsWindowsBeforeSampling: the windows between the
// aligned start and the first observation (a slow first connection) are
// not reported as gaps; later unobserved windows are. Synthetic times.
func TestFirstObservationDropsWindowsBeforeSampling(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 900_000_000, time.UTC) // Run starts at .9
	w := newLiveWindows("pg", time.Second, t0)
	w.observed(t0.Add(300 * time.Millisecond)) // connected at 01.2
	w.observed(t0.Add(1300 * time.Millisecond))
	var got []stream.Interval
	_ = w.flush(t0.Add(3200*time.Millisecond), false, func(iv stream.Interval) error { got = append(got, iv); return nil })
	if len(got) != 3 || !got[0].Start.Equal(t0.Add(100*time.Millisecond)) || got[0].Gap || got[1].Gap || !got[2].Gap {
		for _, iv := range got {
			t.Logf("%s gap %v", iv.Start, iv.Gap)
		}
		t.Fatalf("want windows 01, 02 observed and 03 a gap")
	}
}

// TestStoppedSourceLeavesOutAnEmptyLastWindow: stopping a few ms into a
// window that no poll has reached yet is not an outage. Synthetic times.
func TestStoppedSourceLeavesOutAnEmptyLastWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	w := newLiveWindows("pg", time.Second, t0)
	w.observed(t0.Add(10 * time.Millisecond))
	w.observed(t0.Add(990 * time.Millisecond))
	var got []stream.Interval
	_ = w.flush(t0.Add(1005*time.Millisecond), true, func(iv stream.Interval) error { got = append(got, iv); return nil })
	if len(got) != 1 || got[0].Gap {
		t.Fatalf("got %d intervals (%+v), want the one observed window", len(got), got)
	}
}
