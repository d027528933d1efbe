package loadtest

import (
	"math"
)

// Queue is the single-server (M/M/1) view of an open-loop sweep: mean
// latency R = S/(1−ρ) with utilisation ρ = X·S, X the achieved throughput
// and S the service time.
//
// For a device with k parallel channels (an SSD's queues, a RAID set's
// spindles) the fitted S is the effective S/k: 1/S estimates the
// saturation throughput, but the model then underrates the latency at
// light load, which is the full service time of one channel, so the fit
// is a compromise and R2 says how good.
type Queue struct {
	ServiceUS      float64 `json:"service_us"`
	SaturationIOPS float64 `json:"saturation_iops"`
	R2             float64 `json:"r2"`
}

// Latency returns the model's mean latency in µs at throughput x per
// second, +Inf at or beyond saturation.
func (q Queue) Latency(x float64) float64 {
	s := q.ServiceUS / 1e6
	if x*s >= 1 {
		return math.Inf(1)
	}
	return q.ServiceUS / (1 - x*s)
}

// queuePoint is one open-loop measurement: throughput x (per s), mean
// latency r (µs).
type queuePoint struct{ x, r float64 }

// FitQueue fits S by least squares on the mean latency R over the
// open-loop steps (Rate > 0) that completed operations; it needs at least
// 2 of them and reports false otherwise.
//
// Method: ρ = X·S < 1 at every point bounds S to (0, 1/max X). The search
// runs over u = S·max X ∈ (0, 1) on a logit scale, which resolves both a
// tiny S and one just below saturation: a grid of 1201 points over
// logit(u) ∈ [−30, 30], then a golden-section search between the grid
// neighbours of the best point. A 1-D search needs no derivative and
// cannot leave the bounds.
func FitQueue(steps []Stats) (Queue, bool) {
	pts, xmax := openPoints(steps)
	if len(pts) < 2 || xmax <= 0 {
		return Queue{}, false
	}
	sse := func(z float64) float64 { return queueSSE(pts, logistic(z)/xmax) }
	const lo, hi, step = -30.0, 30.0, 0.05
	bestZ, best := lo, math.Inf(1)
	for z := lo; z <= hi+step/2; z += step {
		if s := sse(z); s < best {
			bestZ, best = z, s
		}
	}
	z := goldenMin(sse, bestZ-step, bestZ+step)
	s := logistic(z) / xmax // seconds
	q := Queue{ServiceUS: s * 1e6, SaturationIOPS: 1 / s, R2: rSquared(latencies(pts), queueSSE(pts, s))}
	if !allFinite(q.ServiceUS, q.SaturationIOPS, q.R2) || q.ServiceUS <= 0 {
		return Queue{}, false
	}
	return q, true
}

// openPoints returns the usable open-loop points and the largest X.
func openPoints(steps []Stats) ([]queuePoint, float64) {
	var pts []queuePoint
	xmax := 0.0
	for _, s := range steps {
		if s.Closed() || !(s.IOPS > 0) || !(s.MeanUS > 0) || !allFinite(s.IOPS, s.MeanUS) {
			continue
		}
		pts = append(pts, queuePoint{s.IOPS, s.MeanUS})
		xmax = math.Max(xmax, s.IOPS)
	}
	return pts, xmax
}

// queueSSE is Σ(R − S/(1−X·S))² in µs² for S in seconds.
func queueSSE(pts []queuePoint, s float64) float64 {
	sum := 0.0
	for _, p := range pts {
		d := p.r - s*1e6/(1-p.x*s)
		sum += d * d
	}
	if math.IsNaN(sum) {
		return math.Inf(1)
	}
	return sum
}

// latencies lists the points' mean latencies.
func latencies(pts []queuePoint) []float64 {
	ys := make([]float64, len(pts))
	for i, p := range pts {
		ys[i] = p.r
	}
	return ys
}

// logistic maps the real line onto (0, 1).
func logistic(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// goldenMin returns the minimiser of f on [a, b] by golden-section search
// (f unimodal there).
func goldenMin(f func(float64) float64, a, b float64) float64 {
	const invPhi = 0.6180339887498949
	c, d := b-invPhi*(b-a), a+invPhi*(b-a)
	fc, fd := f(c), f(d)
	for range 200 {
		if b-a < 1e-13*(1+math.Abs(a)) {
			break
		}
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = f(d)
		}
	}
	return (a + b) / 2
}
