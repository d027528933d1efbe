package diff

import (
	"math"

	"github.com/latscope/latscope/hist"
)

// shifts returns the percentiles of both sides with their confidence
// intervals at level. A histogram's events are not independent draws when
// its windows vary more than the multinomial allows: n is divided by the
// side's dispersion phi (the design effect) before the ranks are taken.
func shifts(a, b *hist.Histogram, phiA, phiB, level float64) []Shift {
	out := make([]Shift, 0, len(Quantiles))
	for _, q := range Quantiles {
		s := Shift{Q: q}
		s.A, s.ALow, s.AHigh = quantileCI(a, q, phiA, level)
		s.B, s.BLow, s.BHigh = quantileCI(b, q, phiB, level)
		s.Ratio = Num(ratio(float64(s.A), float64(s.B)))
		s.RatioLo = Num(boundRatio(float64(s.AHigh), float64(s.BLow)))
		s.RatioHi = Num(boundRatio(float64(s.ALow), float64(s.BHigh)))
		out = append(out, s)
	}
	return out
}

// quantileCI returns the q-quantile of h in µs and its interval: the
// values of the order statistics at the binomial ranks, read from the
// histogram as its quantiles are (linear inside a bucket). An interval
// that runs past the data is unbounded on that side: 0 below, +Inf above.
func quantileCI(h *hist.Histogram, q, phi, level float64) (v, lo, hi Num) {
	nan := Num(math.NaN())
	if h == nil || h.Count() == 0 {
		return nan, nan, nan
	}
	n := h.Count()
	eff := int(math.Max(1, math.Round(n/math.Max(1, phi))))
	l, u := orderStatisticRanks(eff, q, level)
	at := func(rank int) Num {
		if rank < 1 {
			return 0
		}
		if rank > eff {
			return Num(math.Inf(1))
		}
		// The rank-th of eff draws is the (rank − ½)/eff quantile.
		return Num(h.Unit.Nanos(h.Quantile((float64(rank)-0.5)/float64(eff))) / 1e3)
	}
	return Num(h.Unit.Nanos(h.Quantile(q)) / 1e3), at(l), at(u)
}

// boundRatio is b/a for the ends of intervals: b/0 is +Inf, x/+Inf is 0.
func boundRatio(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || (a == 0 && b == 0) || (math.IsInf(a, 0) && math.IsInf(b, 0)) {
		return math.NaN()
	}
	if a == 0 {
		return math.Inf(1)
	}
	return b / a
}

// factor is the geometric mean of the p50, p90 and p99 ratios B/A: the
// latency factor they agree on (p99.9 rests on too few events).
func factor(shifts []Shift) float64 {
	logs, n := 0.0, 0
	for _, s := range shifts {
		r := float64(s.Ratio)
		if s.Q > 0.99 || math.IsNaN(r) || r <= 0 || math.IsInf(r, 0) {
			continue
		}
		logs += math.Log(r)
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(logs / float64(n))
}
