package diff

import (
	"math"
	"sort"
)

// Distribution functions the tests need, from the standard library's
// Lgamma: the regularized incomplete gamma (chi-square) and beta (F)
// functions by their series and continued fractions, and binomial ranks.

// chiSquareSurvival returns P(X ≥ x) for X ~ χ²(df).
func chiSquareSurvival(x, df float64) float64 {
	if x <= 0 {
		return 1
	}
	return upperGamma(df/2, x/2)
}

// fSurvival returns P(X ≥ f) for X ~ F(d1, d2).
func fSurvival(f, d1, d2 float64) float64 {
	if f <= 0 {
		return 1
	}
	return regBeta(d2/2, d1/2, d2/(d2+d1*f))
}

// upperGamma is the regularized upper incomplete gamma Q(a, x).
func upperGamma(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lg)
	if x < a+1 { // the series converges fast here
		sum, term := 1/a, 1/a
		for n := 1; n < 10000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return math.Max(0, 1-front*sum)
	}
	// Lentz's continued fraction for Q.
	b := x + 1 - a
	c, d := 1/1e-300, 1/b
	h := d
	for i := 1; i < 10000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < 1e-300 {
			d = 1e-300
		}
		c = b + an/c
		if math.Abs(c) < 1e-300 {
			c = 1e-300
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Min(1, front*h)
}

// regBeta is the regularized incomplete beta I_x(a, b).
func regBeta(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaFraction(b, a, 1-x)/b
	}
	return front * betaFraction(a, b, x) / a
}

// betaFraction is the continued fraction of the incomplete beta (Lentz).
func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m < 10000; m++ {
		fm := float64(m)
		step := func(num float64) {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
		}
		step(fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)))
		h *= d * c
		step(-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)))
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return h
}

// normalQuantile returns z with Φ(z) = p.
func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// exactBinomialLimit: up to this many trials the binomial ranks are
// summed exactly (from 12 standard deviations below the mean); above it
// the normal approximation is within a rank.
const exactBinomialLimit = 10000000

// binomialQuantile returns the smallest k with P(B ≤ k) ≥ p, B ~ Bin(n, q).
func binomialQuantile(p float64, n int, q float64) int {
	if n <= 0 {
		return 0
	}
	if q <= 0 {
		return 0
	}
	if q >= 1 {
		return n
	}
	if n > exactBinomialLimit {
		mu, sd := float64(n)*q, math.Sqrt(float64(n)*q*(1-q))
		k := int(math.Ceil(mu + sd*normalQuantile(p) - 0.5))
		return max(0, min(n, k))
	}
	// Sum the pmf from 12 standard deviations below the mean (the mass
	// under it is below 1e-30), stepping its logarithm by the ratio of
	// neighbouring terms.
	mu, sd := float64(n)*q, math.Sqrt(float64(n)*q*(1-q))
	k := max(0, int(mu-12*sd-10))
	lgn, _ := math.Lgamma(float64(n) + 1)
	lk, _ := math.Lgamma(float64(k) + 1)
	lnk, _ := math.Lgamma(float64(n-k) + 1)
	logOdds := math.Log(q) - math.Log1p(-q)
	lp := lgn - lk - lnk + float64(k)*math.Log(q) + float64(n-k)*math.Log1p(-q)
	cum := 0.0
	for ; k < n; k++ {
		cum += math.Exp(lp)
		if cum >= p*(1-1e-12) {
			return k
		}
		lp += math.Log(float64(n-k)/float64(k+1)) + logOdds
	}
	return n
}

// orderStatisticRanks returns the 1-based ranks [l, u] of the order
// statistics that bracket the q-quantile of n draws with probability ≥
// level: l = Bin⁻¹(α/2), u = Bin⁻¹(1−α/2) + 1. l = 0 means "below the
// smallest", u = n+1 "above the largest".
func orderStatisticRanks(n int, q, level float64) (l, u int) {
	a := (1 - level) / 2
	return binomialQuantile(a, n, q), binomialQuantile(1-a, n, q) + 1
}

// holm adjusts p-values for multiple tests (Holm's step-down: the i-th
// smallest of m is multiplied by m−i+1, kept monotone); NaN stays NaN.
func holm(p []float64) []float64 {
	idx := make([]int, 0, len(p))
	for i, v := range p {
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sortByP(idx, p)
	out := append([]float64(nil), p...)
	m, prev := len(idx), 0.0
	for r, i := range idx {
		v := math.Min(1, p[i]*float64(m-r))
		prev = math.Max(prev, v)
		out[i] = prev
	}
	return out
}

// bonferroni multiplies every p-value by the number of tests.
func bonferroni(p []float64) []float64 {
	m := 0
	for _, v := range p {
		if !math.IsNaN(v) {
			m++
		}
	}
	out := make([]float64, len(p))
	for i, v := range p {
		out[i] = math.Min(1, v*float64(m))
	}
	return out
}

func sortByP(idx []int, p []float64) {
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
}
