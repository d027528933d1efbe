package diff

import (
	"math"
	"testing"
)

// Reference values from statistical tables (and SciPy's chi2.sf, f.sf,
// binom.ppf).
func TestDistributions(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"χ²(1) at 3.841459", chiSquareSurvival(3.841459, 1), 0.05},
		{"χ²(10) at 23.209251", chiSquareSurvival(23.209251, 10), 0.01},
		{"χ²(3) at 0.351846", chiSquareSurvival(0.351846, 3), 0.95},
		{"χ²(50) at 76.153891", chiSquareSurvival(76.153891, 50), 0.01},
		{"F(5,10) at 3.325835", fSurvival(3.325835, 5, 10), 0.05},
		{"F(2,20) at 5.848932", fSurvival(5.848932, 2, 20), 0.01},
		{"F(1,1) at 1", fSurvival(1, 1, 1), 0.5},
	} {
		if math.Abs(c.got-c.want) > 2e-4*math.Max(c.want, 0.01) {
			t.Errorf("%s: %.6g, want %.6g", c.name, c.got, c.want)
		}
	}
	// binom.ppf(0.025, 100, 0.5) = 40, binom.ppf(0.975, 100, 0.5) = 60;
	// binom.ppf(0.025, 1000, 0.99) = 983, (0.975) = 996.
	for _, c := range []struct {
		p    float64
		n    int
		q    float64
		want int
	}{{0.025, 100, 0.5, 40}, {0.975, 100, 0.5, 60}, {0.025, 1000, 0.99, 983}, {0.975, 1000, 0.99, 996}, {0.5, 0, 0.5, 0}} {
		if got := binomialQuantile(c.p, c.n, c.q); got != c.want {
			t.Errorf("binomialQuantile(%g, %d, %g) = %d, want %d", c.p, c.n, c.q, got, c.want)
		}
	}
	// Above the exact limit the normal approximation is within a rank of
	// the exact sum's answer.
	n := exactBinomialLimit + 1
	approx := binomialQuantile(0.025, n, 0.3)
	exact := float64(n)*0.3 - 1.959964*math.Sqrt(float64(n)*0.3*0.7)
	if math.Abs(float64(approx)-exact) > 1.5 {
		t.Errorf("normal binomial quantile %d, want ≈ %.1f", approx, exact)
	}
}

func TestCorrections(t *testing.T) {
	p := []float64{0.01, 0.04, math.NaN(), 0.03, 0.005}
	// Holm: sorted 0.005·4, 0.01·3, 0.03·2, 0.04·1 → 0.02, 0.03, 0.06, 0.06 (monotone).
	want := []float64{0.03, 0.06, math.NaN(), 0.06, 0.02}
	for i, v := range holm(p) {
		if math.IsNaN(want[i]) != math.IsNaN(v) || (!math.IsNaN(v) && math.Abs(v-want[i]) > 1e-12) {
			t.Errorf("holm[%d] = %g, want %g", i, v, want[i])
		}
	}
	if b := bonferroni(p); math.Abs(b[0]-0.04) > 1e-12 || b[1] != 0.16 {
		t.Errorf("bonferroni %v", b)
	}
}
