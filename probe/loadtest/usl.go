package loadtest

import (
	"math"
)

// USL is Gunther's Universal Scalability Law fitted to a closed-loop
// sweep: X(N) = λN / (1 + σ(N−1) + κN(N−1)), with λ the throughput of one
// worker, σ ≥ 0 the contention (serialised share of the work) and κ ≥ 0 the
// coherency cost (crosstalk between workers, which makes throughput fall
// past a peak).
type USL struct {
	Lambda float64 `json:"lambda"`
	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
	// R2 is the coefficient of determination of the fit on X.
	R2 float64 `json:"r2"`
	// PeakConcurrency is where X(N) is highest, √((1−σ)/κ) (at least 1);
	// 0 when κ = 0: throughput then never falls and has no peak.
	PeakConcurrency float64 `json:"peak_concurrency,omitempty"`
	// PeakIOPS is X(PeakConcurrency); when κ = 0 and σ > 0 it is the
	// ceiling λ/σ that throughput approaches; 0 when σ = κ = 0 (linear).
	PeakIOPS float64 `json:"peak_iops,omitempty"`
}

// Throughput returns the fitted X(n).
func (u USL) Throughput(n float64) float64 {
	return uslParams{u.Lambda, u.Sigma, u.Kappa}.x(n)
}

// point is one closed-loop measurement: concurrency n, throughput x.
type point struct{ n, x float64 }

// uslParams are λ, σ, κ.
type uslParams [3]float64

func (p uslParams) x(n float64) float64 {
	return p[0] * n / (1 + p[1]*(n-1) + p[2]*n*(n-1))
}

// FitUSL fits the Universal Scalability Law to the closed-loop steps
// (Rate 0) that completed operations, by least squares on throughput X.
// It needs at least 3 distinct concurrencies and reports false otherwise.
//
// Method: X is scaled to a maximum of 1 for conditioning; two starting
// points are refined by a Levenberg–Marquardt search on (λ, σ, κ) that
// keeps σ, κ ≥ 0 with an active set (a parameter at 0 whose gradient
// pushes it negative is held at 0), and the fit with the smaller residual
// wins. The starts are Gunther's linearisation (λ from the smallest
// concurrency, then N·λ/X − 1 = σ(N−1) + κN(N−1) by non-negative least
// squares) and the best point of a coarse logarithmic grid over σ and κ
// with λ solved in closed form. The linearisation alone divides by X and
// so weights noisy points unevenly; the grid guards against a local
// minimum; the nonlinear refinement makes the result the least-squares fit
// on X itself (exact synthetic points give back their parameters to
// ~1e-15).
func FitUSL(steps []Stats) (USL, bool) {
	pts, xmax := closedPoints(steps)
	if distinctN(pts) < 3 || xmax <= 0 {
		return USL{}, false
	}
	best, bestSSE := uslParams{}, math.Inf(1)
	for _, start := range []uslParams{linearStart(pts), gridStart(pts)} {
		p := refineUSL(pts, start)
		if s := uslSSE(pts, p); s < bestSSE {
			best, bestSSE = p, s
		}
	}
	if math.IsInf(bestSSE, 0) || math.IsNaN(bestSSE) {
		return USL{}, false
	}
	u := USL{Lambda: best[0] * xmax, Sigma: best[1], Kappa: best[2], R2: rSquared(throughputs(pts), bestSSE)}
	u.PeakConcurrency, u.PeakIOPS = uslPeak(u)
	if !allFinite(u.Lambda, u.Sigma, u.Kappa, u.R2, u.PeakConcurrency, u.PeakIOPS) {
		return USL{}, false
	}
	return u, true
}

// closedPoints returns the usable closed-loop points with X scaled by its
// maximum, and that maximum.
func closedPoints(steps []Stats) ([]point, float64) {
	var pts []point
	xmax := 0.0
	for _, s := range steps {
		if !s.Closed() || s.Concurrency < 1 || !(s.IOPS > 0) || math.IsInf(s.IOPS, 0) {
			continue
		}
		pts = append(pts, point{float64(s.Concurrency), s.IOPS})
		xmax = math.Max(xmax, s.IOPS)
	}
	for i := range pts {
		pts[i].x /= xmax
	}
	return pts, xmax
}

func distinctN(pts []point) int {
	seen := map[float64]bool{}
	for _, p := range pts {
		seen[p.n] = true
	}
	return len(seen)
}

func uslSSE(pts []point, p uslParams) float64 {
	s := 0.0
	for _, q := range pts {
		r := q.x - p.x(q.n)
		s += r * r
	}
	return s
}

// rSquared is 1 − SSE/SST of a fit to the observations ys (R² is
// scale-free). Flat observations have SST = 0: R² is 1 when the fit is
// exact, else 0.
func rSquared(ys []float64, sse float64) float64 {
	mean := 0.0
	for _, y := range ys {
		mean += y
	}
	mean /= float64(len(ys))
	sst := 0.0
	for _, y := range ys {
		sst += (y - mean) * (y - mean)
	}
	if sst <= 1e-24*mean*mean {
		if sse <= 1e-20*mean*mean {
			return 1
		}
		return 0
	}
	return 1 - sse/sst
}

// linearStart is Gunther's linearised fit: λ from the smallest
// concurrency, then σ, κ ≥ 0 from N·λ/X − 1 = σ(N−1) + κN(N−1).
func linearStart(pts []point) uslParams {
	nmin := math.Inf(1)
	for _, q := range pts {
		nmin = math.Min(nmin, q.n)
	}
	lambda, k := 0.0, 0
	for _, q := range pts {
		if q.n == nmin {
			lambda += q.x / q.n
			k++
		}
	}
	lambda /= float64(k)
	var a, b, y []float64
	for _, q := range pts {
		a = append(a, q.n-1)
		b = append(b, q.n*(q.n-1))
		y = append(y, q.n*lambda/q.x-1)
	}
	sigma, kappa := nnls2(a, b, y)
	return uslParams{lambda, sigma, kappa}
}

// nnls2 solves min Σ(y − s·a − k·b)² over s, k ≥ 0: the unconstrained
// solution when it is feasible, else the better one-variable fit.
func nnls2(a, b, y []float64) (s, k float64) {
	var aa, ab, bb, ay, by float64
	for i := range y {
		aa += a[i] * a[i]
		ab += a[i] * b[i]
		bb += b[i] * b[i]
		ay += a[i] * y[i]
		by += b[i] * y[i]
	}
	if det := aa*bb - ab*ab; det > 1e-12*aa*bb {
		s, k = (ay*bb-by*ab)/det, (by*aa-ay*ab)/det
		if s >= 0 && k >= 0 {
			return s, k
		}
	}
	resid := func(s, k float64) float64 {
		r := 0.0
		for i := range y {
			d := y[i] - s*a[i] - k*b[i]
			r += d * d
		}
		return r
	}
	s1, k2 := 0.0, 0.0
	if aa > 0 {
		s1 = math.Max(0, ay/aa)
	}
	if bb > 0 {
		k2 = math.Max(0, by/bb)
	}
	if resid(s1, 0) <= resid(0, k2) {
		return s1, 0
	}
	return 0, k2
}

// gridStart is the best point of a coarse grid over σ ∈ {0} ∪ [1e-4, 10]
// and κ ∈ {0} ∪ [1e-7, 1], with λ solved in closed form at each point.
func gridStart(pts []point) uslParams {
	best, bestSSE := uslParams{}, math.Inf(1)
	for i := -1; i <= 25; i++ {
		sigma := gridValue(i, -4, 0.2)
		for j := -1; j <= 35; j++ {
			p := uslParams{0, sigma, gridValue(j, -7, 0.2)}
			p[0] = bestLambda(pts, p)
			if s := uslSSE(pts, p); s < bestSSE {
				best, bestSSE = p, s
			}
		}
	}
	return best
}

// gridValue is 0 for i < 0, else 10^(from + i·step).
func gridValue(i int, from, step float64) float64 {
	if i < 0 {
		return 0
	}
	return math.Pow(10, from+float64(i)*step)
}

// bestLambda is the λ minimising the SSE for fixed σ, κ: X is linear in λ.
func bestLambda(pts []point, p uslParams) float64 {
	var gx, gg float64
	for _, q := range pts {
		g := q.n / (1 + p[1]*(q.n-1) + p[2]*q.n*(q.n-1))
		gx += g * q.x
		gg += g * g
	}
	if gg == 0 {
		return 0
	}
	return gx / gg
}

// Levenberg–Marquardt limits.
const (
	lmMaxIter   = 500
	lmMaxDamp   = 1e16
	lmMinLambda = 1e-12
)

// refineUSL runs the bounded Levenberg–Marquardt search from p.
func refineUSL(pts []point, p uslParams) uslParams {
	p = p.clamp()
	cur := uslSSE(pts, p)
	damp := 1e-3
	for iter := 0; iter < lmMaxIter && cur > 0; iter++ {
		jtj, jtr := uslNormal(pts, p)
		free := [3]bool{true, p[1] > 0 || jtr[1] > 0, p[2] > 0 || jtr[2] > 0}
		improved := false
		for damp < lmMaxDamp {
			q, ok := dampedStep(jtj, jtr, free, damp)
			if ok {
				q = p.add(q).clamp()
				if s := uslSSE(pts, q); s < cur {
					p, cur, improved = q, s, true
					damp = math.Max(damp/3, 1e-12)
					break
				}
			}
			damp *= 4
		}
		if !improved {
			break
		}
	}
	return p
}

func (p uslParams) add(d [3]float64) uslParams {
	return uslParams{p[0] + d[0], p[1] + d[1], p[2] + d[2]}
}

// clamp keeps λ > 0 and σ, κ ≥ 0.
func (p uslParams) clamp() uslParams {
	return uslParams{math.Max(p[0], lmMinLambda), math.Max(p[1], 0), math.Max(p[2], 0)}
}

// uslNormal returns JᵀJ and Jᵀr of the residuals r = X − X(N; p).
func uslNormal(pts []point, p uslParams) (jtj [3][3]float64, jtr [3]float64) {
	for _, q := range pts {
		d := 1 + p[1]*(q.n-1) + p[2]*q.n*(q.n-1)
		f := p[0] * q.n / d
		j := [3]float64{q.n / d, -f * (q.n - 1) / d, -f * q.n * (q.n - 1) / d}
		r := q.x - f
		for a := range 3 {
			jtr[a] += j[a] * r
			for b := range 3 {
				jtj[a][b] += j[a] * j[b]
			}
		}
	}
	return jtj, jtr
}

// dampedStep solves (JᵀJ + damp·diag(JᵀJ))·δ = Jᵀr over the free
// parameters; held parameters get δ = 0.
func dampedStep(jtj [3][3]float64, jtr [3]float64, free [3]bool, damp float64) ([3]float64, bool) {
	var idx []int
	for i, f := range free {
		if f {
			idx = append(idx, i)
		}
	}
	m := len(idx)
	a := make([][]float64, m)
	rhs := make([]float64, m)
	for r, i := range idx {
		a[r] = make([]float64, m)
		for c, j := range idx {
			a[r][c] = jtj[i][j]
		}
		a[r][r] += damp * math.Max(jtj[i][i], 1e-30)
		rhs[r] = jtr[i]
	}
	x, ok := solveLinear(a, rhs)
	var d [3]float64
	if !ok {
		return d, false
	}
	for r, i := range idx {
		d[i] = x[r]
	}
	return d, true
}

// solveLinear solves a·x = b by Gaussian elimination with partial
// pivoting; a and b are overwritten.
func solveLinear(a [][]float64, b []float64) ([]float64, bool) {
	n := len(b)
	for c := range n {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if a[piv][c] == 0 || math.IsNaN(a[piv][c]) {
			return nil, false
		}
		a[c], a[piv] = a[piv], a[c]
		b[c], b[piv] = b[piv], b[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < n; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x, allFinite(x...)
}

// uslPeak returns the concurrency of peak throughput and that throughput
// (see the USL fields).
func uslPeak(u USL) (n, x float64) {
	switch {
	case u.Sigma >= 1:
		// Throughput never rises above one worker's.
		return 1, u.Lambda
	case u.Kappa > 0:
		n = math.Max(1, math.Sqrt((1-u.Sigma)/u.Kappa))
		return n, u.Throughput(n)
	case u.Sigma > 0:
		return 0, u.Lambda / u.Sigma
	default:
		return 0, 0
	}
}

func allFinite(v ...float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// throughputs lists the points' throughputs.
func throughputs(pts []point) []float64 {
	ys := make([]float64, len(pts))
	for i, q := range pts {
		ys[i] = q.x
	}
	return ys
}
