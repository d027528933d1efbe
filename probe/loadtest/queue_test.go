package loadtest

import (
	"math/rand/v2"
	"testing"
)

// queueSteps returns synthetic open-loop steps at the given utilisations
// whose mean latency follows R = S/(1−X·S), with optional multiplicative
// noise.
func queueSteps(serviceUS float64, rhos []float64, noise float64, rng *rand.Rand) []Stats {
	var out []Stats
	s := serviceUS / 1e6
	for _, rho := range rhos {
		x := rho / s
		r := serviceUS / (1 - rho)
		if noise > 0 {
			r *= 1 + noise*rng.NormFloat64()
		}
		out = append(out, Stats{Concurrency: 64, Rate: x, Seconds: 10, Ops: int64(10 * x), IOPS: x, Latency: Latency{MeanUS: r}})
	}
	return out
}

func TestFitQueueRecoversExactServiceTime(t *testing.T) {
	for _, c := range []struct {
		name      string
		serviceUS float64
		rhos      []float64
	}{
		{"disk 5 ms", 5000, []float64{0.1, 0.3, 0.5, 0.7, 0.9}},
		{"SSD 100 µs", 100, []float64{0.1, 0.2, 0.4, 0.8}},
		{"fast 5 µs near saturation", 5, []float64{0.5, 0.9, 0.99}},
		{"two light steps", 250, []float64{0.01, 0.02}},
	} {
		q, ok := FitQueue(queueSteps(c.serviceUS, c.rhos, 0, nil))
		if !ok {
			t.Errorf("%s: no fit", c.name)
			continue
		}
		if !near(q.ServiceUS, c.serviceUS, 1e-9) || !near(q.SaturationIOPS, 1e6/c.serviceUS, 1e-9) || !near(q.R2, 1, 1e-9) {
			t.Errorf("%s: %+v, want S %g µs", c.name, q, c.serviceUS)
		}
		if l := q.Latency(0.5 * q.SaturationIOPS); !near(l, 2*q.ServiceUS, 1e-9) {
			t.Errorf("%s: latency at ρ = 0.5 is %g, want 2·S", c.name, l)
		}
	}
}

// With noise the fit is the least-squares fit: no S on an independent
// fine grid over (0, 1/max X) does better.
func TestFitQueueNoisyIsLeastSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7)) // synthetic noise, seeded
	for trial := range 20 {
		serviceUS := 10 + rng.Float64()*5000
		steps := queueSteps(serviceUS, []float64{0.1, 0.25, 0.4, 0.55, 0.7, 0.85}, 0.05, rng)
		q, ok := FitQueue(steps)
		if !ok {
			t.Fatalf("trial %d: no fit", trial)
		}
		pts, xmax := openPoints(steps)
		fit := queueSSE(pts, q.ServiceUS/1e6)
		for i := 1; i < 100000; i++ {
			s := float64(i) / 100000 / xmax
			if g := queueSSE(pts, s); g < fit*(1-1e-9) {
				t.Fatalf("trial %d: S %g µs has SSE %g below the fit's %g (%+v)", trial, s*1e6, g, fit, q)
			}
		}
		if !near(q.ServiceUS, serviceUS, 0.1) || q.R2 < 0.9 {
			t.Errorf("trial %d: %+v from S %g µs", trial, q, serviceUS)
		}
	}
}

// A device with k parallel channels (synthetic M/M/k points from the
// Erlang C formula): the single-server fit finds about S/k, so its
// saturation estimate is close to the true k/S, while the light-load
// latency (S, not S/k) does not fit and R² shows it.
func TestFitQueueOnParallelChannels(t *testing.T) {
	const k, serviceUS = 4, 400.0
	var steps []Stats
	for _, rho := range []float64{0.1, 0.3, 0.5, 0.7, 0.8, 0.9} {
		x := rho * k / (serviceUS / 1e6)
		r := serviceUS + erlangC(k, rho*k)*serviceUS/(k*(1-rho))
		steps = append(steps, Stats{Concurrency: 64, Rate: x, Seconds: 10, Ops: int64(10 * x), IOPS: x, Latency: Latency{MeanUS: r}})
	}
	q, ok := FitQueue(steps)
	if !ok {
		t.Fatal("no fit")
	}
	t.Logf("M/M/%d with S = %g µs: fitted %+v", k, serviceUS, q)
	if sat := k / (serviceUS / 1e6); !near(q.SaturationIOPS, sat, 0.05) || !near(q.ServiceUS, serviceUS/k, 0.05) {
		t.Errorf("saturation %g, S %g µs; want %g ± 5 %% and S/k = %g µs", q.SaturationIOPS, q.ServiceUS, sat, serviceUS/k)
	}
	if q.R2 > 0.9 {
		t.Errorf("R² %g: a single server should not fit k channels well", q.R2)
	}
}

// erlangC is the probability of waiting in an M/M/k queue with offered
// load a = λ·S.
func erlangC(k int, a float64) float64 {
	sum, term := 0.0, 1.0
	for i := range k {
		if i > 0 {
			term *= a / float64(i)
		}
		sum += term
	}
	top := term * a / float64(k) / (1 - a/float64(k))
	return top / (sum + top)
}

func TestFitQueueNeedsTwoOpenSteps(t *testing.T) {
	for name, steps := range map[string][]Stats{
		"none":             nil,
		"one":              queueSteps(100, []float64{0.5}, 0, nil),
		"closed-loop only": sweep([3]float64{1, 1000, 100}, [3]float64{2, 2000, 100}),
		"no latency":       append(queueSteps(100, []float64{0.5}, 0, nil), Stats{Rate: 100, IOPS: 100, Ops: 1000}),
	} {
		if q, ok := FitQueue(steps); ok {
			t.Errorf("%s: fit %+v, want none", name, q)
		}
	}
}
