package loadtest

import (
	"testing"
	"time"
)

func TestDrainKeepsCountsAndEmptiesRecorders(t *testing.T) {
	r := NewRecorder()
	for _, us := range []time.Duration{90, 110, 5000} {
		r.Record(us * time.Microsecond)
	}
	w := Drain([]*Recorder{r})
	if h := w.Lat; h.Count() != 3 || h.Sum != 5200 || h.Quantile(0) < 89 || h.Quantile(1) > 5100 || w.Max != 5*time.Millisecond {
		t.Errorf("drained %g events, sum %g, range %g..%g, max %s", h.Count(), h.Sum, h.Quantile(0), h.Quantile(1), w.Max)
	}
	if r.lat.Count() != 0 || r.lat.Sum != 0 || r.max != 0 {
		t.Errorf("recorder still holds %g events, sum %g, max %s", r.lat.Count(), r.lat.Sum, r.max)
	}
	r.RecordOpen(100*time.Microsecond, 3*time.Microsecond)
	w2 := NewWindow()
	r.DrainInto(w2)
	w.Add(w2)
	if w2.Lat.Count() != 1 || w2.Lat.Sum != 100 || w2.Delay.Sum != 3 || w2.Max != 100*time.Microsecond {
		t.Errorf("second window: %g events, sum %g, delay sum %g, max %s", w2.Lat.Count(), w2.Lat.Sum, w2.Delay.Sum, w2.Max)
	}
	if w.Lat.Count() != 4 || w.Max != 5*time.Millisecond {
		t.Errorf("added windows: %g events, max %s", w.Lat.Count(), w.Max)
	}
}

func TestRecordingDoesNotAllocate(t *testing.T) {
	r := NewRecorder()
	for i := range 1000 {
		r.Record(time.Duration(i) * time.Microsecond)
	}
	if n := testing.AllocsPerRun(1000, func() { r.Record(500 * time.Microsecond) }); n != 0 {
		t.Errorf("Record allocates %g times", n)
	}
}
