package loadtest

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// uslSteps returns synthetic closed-loop steps whose IOPS follow the USL
// exactly, optionally with multiplicative noise of relative sd noise.
func uslSteps(lambda, sigma, kappa float64, ns []int, noise float64, rng *rand.Rand) []Stats {
	var out []Stats
	for _, n := range ns {
		x := uslParams{lambda, sigma, kappa}.x(float64(n))
		if noise > 0 {
			x *= 1 + noise*rng.NormFloat64()
		}
		out = append(out, Stats{Concurrency: n, Seconds: 10, Ops: int64(10 * x), IOPS: x})
	}
	return out
}

// near: relative error within tol, or absolute within tol for want 0.
func near(got, want, tol float64) bool {
	if want == 0 {
		return math.Abs(got) <= tol
	}
	return math.Abs(got/want-1) <= tol
}

// Exact synthetic points give back their parameters (to 1e-9; the brief
// asks 1e-3), also on the
// boundaries σ = 0 or κ = 0, without an N = 1 step, past the peak and on
// a flat curve.
func TestFitUSLRecoversExactParameters(t *testing.T) {
	doubling := []int{1, 2, 4, 8, 16, 32}
	cases := []struct {
		name                 string
		lambda, sigma, kappa float64
		ns                   []int
	}{
		{"contention and coherency", 1000, 0.05, 0.0002, doubling},
		{"linear", 5000, 0, 0, doubling},
		{"contention only", 800, 0.2, 0, doubling},
		{"coherency only", 2000, 0, 0.001, doubling},
		{"retrograde past the peak", 1000, 0.03, 0.002, []int{1, 2, 4, 8, 16, 32, 64}},
		{"no single-worker step", 1500, 0.1, 0.0005, []int{2, 4, 8, 16, 32, 64}},
		{"three steps", 1200, 0.15, 0.01, []int{1, 2, 3}},
		{"flat: one at a time", 5000, 1, 0, doubling},
		{"large λ", 250000, 0.02, 0.00001, []int{1, 2, 4, 8, 16, 32, 64, 128}},
	}
	for _, c := range cases {
		u, ok := FitUSL(uslSteps(c.lambda, c.sigma, c.kappa, c.ns, 0, nil))
		if !ok {
			t.Errorf("%s: no fit", c.name)
			continue
		}
		if !near(u.Lambda, c.lambda, 1e-9) || !near(u.Sigma, c.sigma, 1e-9) || !near(u.Kappa, c.kappa, 1e-9) || !near(u.R2, 1, 1e-9) {
			t.Errorf("%s: λ %g σ %g κ %g R² %g, want %g %g %g 1", c.name, u.Lambda, u.Sigma, u.Kappa, u.R2, c.lambda, c.sigma, c.kappa)
		}
	}
}

// The peak: √((1−σ)/κ) and the throughput there, which no concurrency
// beats; κ = 0 has no peak but a ceiling λ/σ; linear has neither.
func TestUSLPeak(t *testing.T) {
	u, ok := FitUSL(uslSteps(1000, 0.03, 0.002, []int{1, 2, 4, 8, 16, 32, 64}, 0, nil))
	if !ok {
		t.Fatal("no fit")
	}
	if want := math.Sqrt(0.97 / 0.002); !near(u.PeakConcurrency, want, 1e-3) {
		t.Errorf("peak concurrency %g, want %g", u.PeakConcurrency, want)
	}
	for n := 1.0; n <= 100; n += 0.25 {
		if x := u.Throughput(n); x > u.PeakIOPS*(1+1e-12) {
			t.Errorf("X(%g) = %g exceeds the peak %g", n, x, u.PeakIOPS)
		}
	}
	contention, _ := FitUSL(uslSteps(800, 0.2, 0, []int{1, 2, 4, 8, 16, 32}, 0, nil))
	if contention.PeakConcurrency != 0 || !near(contention.PeakIOPS, 4000, 1e-3) {
		t.Errorf("κ = 0: peak %g at %g, want the ceiling 4000 and no peak concurrency", contention.PeakIOPS, contention.PeakConcurrency)
	}
	flat, _ := FitUSL(uslSteps(5000, 1, 0, []int{1, 2, 4, 8}, 0, nil))
	if flat.PeakConcurrency != 1 || !near(flat.PeakIOPS, 5000, 1e-3) {
		t.Errorf("flat: peak %g at %g, want 5000 at 1", flat.PeakIOPS, flat.PeakConcurrency)
	}
	linear, _ := FitUSL(uslSteps(5000, 0, 0, []int{1, 2, 4, 8}, 0, nil))
	data, _ := json.Marshal(linear)
	if want := `{"lambda":5000,"sigma":0,"kappa":0,"r2":1}`; string(data) != want {
		t.Errorf("linear JSON %s, want %s", data, want)
	}
}

// With noise the fit is the least-squares fit: its SSE is no larger than
// the true parameters' nor than any point of an independent brute-force
// grid over σ and κ (λ solved in closed form).
func TestFitUSLNoisyIsLeastSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2)) // synthetic noise, seeded
	for trial := range 20 {
		lambda, sigma, kappa := 500+rng.Float64()*5000, rng.Float64()*0.3, rng.Float64()*0.003
		steps := uslSteps(lambda, sigma, kappa, []int{1, 2, 4, 8, 16, 32, 64}, 0.03, rng)
		u, ok := FitUSL(steps)
		if !ok {
			t.Fatalf("trial %d: no fit", trial)
		}
		fit := stepsSSE(steps, uslParams{u.Lambda, u.Sigma, u.Kappa})
		if truth := stepsSSE(steps, uslParams{lambda, sigma, kappa}); fit > truth*(1+1e-9) {
			t.Errorf("trial %d: SSE %g above the true parameters' %g", trial, fit, truth)
		}
		for i := 0; i <= 200; i++ {
			s := 0.4 * float64(i) / 200
			for j := 0; j <= 200; j++ {
				k := 0.005 * float64(j) / 200
				p := uslParams{0, s, k}
				pts := rawPoints(steps)
				p[0] = bestLambda(pts, p)
				if g := stepsSSE(steps, p); g < fit*(1-1e-9) {
					t.Fatalf("trial %d: grid point σ %g κ %g has SSE %g below the fit's %g (%+v)", trial, s, k, g, fit, u)
				}
			}
		}
		if u.R2 < 0.9 || !near(u.Lambda, lambda, 0.1) {
			t.Errorf("trial %d: %+v from λ %g σ %g κ %g", trial, u, lambda, sigma, kappa)
		}
	}
}

func rawPoints(steps []Stats) []point {
	var pts []point
	for _, s := range steps {
		pts = append(pts, point{float64(s.Concurrency), s.IOPS})
	}
	return pts
}

func stepsSSE(steps []Stats, p uslParams) float64 { return uslSSE(rawPoints(steps), p) }

func TestFitUSLNeedsThreeConcurrencies(t *testing.T) {
	for name, steps := range map[string][]Stats{
		"none":            nil,
		"two":             uslSteps(1000, 0.1, 0, []int{1, 2}, 0, nil),
		"two, repeated":   uslSteps(1000, 0.1, 0, []int{1, 2, 2, 1}, 0, nil),
		"open-loop steps": rates([3]float64{1000, 1000, 1}, [3]float64{2000, 2000, 1}, [3]float64{3000, 3000, 1}),
		"zero IOPS":       append(uslSteps(1000, 0.1, 0, []int{1, 2}, 0, nil), Stats{Concurrency: 4}),
	} {
		if u, ok := FitUSL(steps); ok {
			t.Errorf("%s: fit %+v, want none", name, u)
		}
	}
	if _, ok := FitUSL(uslSteps(1000, 0.1, 0, []int{1, 2, 2, 4}, 0, nil)); !ok {
		t.Error("three distinct concurrencies with a repeat: no fit")
	}
}
