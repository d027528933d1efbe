package nettest

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestWhatIfReproducesTheSeed checks the seed's arithmetic: 2356 TPS at a
// 0.021 ms RTT leaves (1000 − 0.021 × 2356) / 2356 = 0.4034 ms per call on
// the server; at 0.161 ms and 0.685 ms the same session would reach 1772
// and 919 TPS (the seed measured 1567 and 854: its server time per call
// was 0.08 ms longer in those set-ups, as the seed computes).
func TestWhatIfReproducesTheSeed(t *testing.T) {
	w, err := NewWhatIf(21, 0, 2356, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.ServerTimeUS-403.4482) > 0.001 {
		t.Errorf("server time %.4f µs, want 403.4482", w.ServerTimeUS)
	}
	want := map[string]float64{"local network (seed: 0.161 ms)": 1771.6, "across networks (seed: 0.685 ms)": 918.7, "measured": 2356}
	for _, r := range w.Rows {
		if tps, ok := want[r.Label]; ok && math.Abs(r.TPS-tps) > 0.1 {
			t.Errorf("%s: %.1f TPS, want %.1f", r.Label, r.TPS, tps)
		}
	}
	for i := 1; i < len(w.Rows); i++ {
		if w.Rows[i].RTTUS < w.Rows[i-1].RTTUS || w.Rows[i].TPS > w.Rows[i-1].TPS {
			t.Errorf("rows not ordered by RTT: %+v", w.Rows)
		}
	}
	direct, _ := NewWhatIf(100, 400*time.Microsecond, 0, 2)
	if r := direct.Rows[0]; direct.ServerTimeUS != 400 || r.Label == "" {
		t.Errorf("given server time: %+v", direct)
	}
	for _, r := range direct.Rows {
		if want := 1e6 / (2*r.RTTUS + 400); math.Abs(r.TPS-want) > 1e-9 || math.Abs(r.NetworkShare-2*r.RTTUS/(2*r.RTTUS+400)) > 1e-12 {
			t.Errorf("row %+v, want %.3f TPS", r, want)
		}
	}
	if _, err := NewWhatIf(685, 0, 2000, 1); err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("2000 TPS at 0.685 ms: %v, want an impossibility", err)
	}
}
