package driver

import (
	"math"
	"strings"
	"testing"

	"github.com/latscope/latscope/probe/iotest"
	"github.com/latscope/latscope/probe/loadtest"
)

func TestNiceCeil(t *testing.T) {
	for v, want := range map[float64]float64{0.7: 0.8, 1: 1, 23228: 25000, 31000: 40000, 9100: 10000, 150: 150} {
		if got := niceCeil(v); math.Abs(got-want) > 1e-9*want {
			t.Errorf("niceCeil(%g) = %g, want %g", v, got, want)
		}
	}
}

// TestIOChartFits: the USL curve is Little's law over X(N) up to the
// heaviest step; the queueing curve stays below saturation.
func TestIOChartFits(t *testing.T) {
	step := func(n int, rate, iops, mean float64) iotest.StepReport {
		return iotest.StepReport{Stats: loadtest.Stats{Concurrency: n, Rate: rate, IOPS: iops,
			Latency: loadtest.Latency{MeanUS: mean, P50US: mean * 0.8, P99US: mean * 3}}}
	}
	usl := iotest.Report{Steps: []iotest.StepReport{step(1, 0, 1000, 1000), step(2, 0, 1900, 1050), step(4, 0, 3400, 1170)},
		USL: &loadtest.USL{Lambda: 1000, Sigma: 0.05, Kappa: 0.001}, Knee: &loadtest.Knee{Index: 2}}
	c := ioChart(usl)
	if len(c.Points) != 3 || c.Knee != 2 || !c.Joined || len(c.Fit) != 13 {
		t.Fatalf("chart %+v", c)
	}
	if f := c.Fit[0]; math.Abs(f.X-1000) > 1e-9 || math.Abs(f.Y-1000) > 1e-9 {
		t.Errorf("USL curve at one reader: %+v, want 1000 IOPS at 1000µs", f)
	}
	queue := iotest.Report{Steps: []iotest.StepReport{step(64, 500, 500, 120), step(64, 1000, 990, 200)},
		Queue: &loadtest.Queue{ServiceUS: 100, SaturationIOPS: 10000}}
	for _, p := range ioChart(queue).Fit {
		if p.X >= 10000*0.98+1e-9 || math.IsInf(p.Y, 0) || p.Y < 100 {
			t.Errorf("queue curve point %+v", p)
		}
	}
	var b strings.Builder
	writeChart(&b, "t", "IOPS", c)
	if strings.Count(b.String(), `<circle class="p99"`) != 3 || !strings.Contains(b.String(), `class="knee"`) {
		t.Errorf("chart SVG:\n%s", b.String())
	}
}
