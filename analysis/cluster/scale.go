package cluster

import (
	"fmt"
	"math"
)

// Scaling is how features are brought to comparable units before
// distances are taken: CPU milliseconds and block reads differ by orders
// of magnitude.
type Scaling string

// The scalings: none (the seed's raw demands), z (z-score: minus the mean,
// over the population standard deviation), range (minus the minimum, over
// the range) and log (the z-score of ln(1 + demand): the seed's Neperian
// logs, which keep a few heavy statements from setting every distance).
const (
	ScaleNone  Scaling = "none"
	ScaleZ     Scaling = "z"
	ScaleRange Scaling = "range"
	ScaleLog   Scaling = "log"
)

// ParseScaling checks a scaling's name.
func ParseScaling(s string) (Scaling, error) {
	switch sc := Scaling(s); sc {
	case ScaleNone, ScaleZ, ScaleRange, ScaleLog:
		return sc, nil
	}
	return "", fmt.Errorf("scale %q: want z, log, range or none", s)
}

// Scaler maps feature j as (v − Offset[j]) / Divisor[j], v being the
// demand or, when Log, ln(1 + demand). A constant feature has divisor 1:
// it maps to 0 and counts for nothing.
type Scaler struct {
	Log     bool      `json:"log,omitempty"`
	Offset  []float64 `json:"offset"`
	Divisor []float64 `json:"divisor"`
}

// NewScaler fits the scaling to the vectors.
func NewScaler(vectors [][]float64, s Scaling) Scaler {
	d := 0
	if len(vectors) > 0 {
		d = len(vectors[0])
	}
	sc := Scaler{Log: s == ScaleLog, Offset: make([]float64, d), Divisor: make([]float64, d)}
	if sc.Log {
		vectors = Scaler{Log: true, Offset: sc.Offset, Divisor: ones(d)}.Apply(vectors)
		s = ScaleZ
	}
	for j := range d {
		sc.Divisor[j] = 1
		if s == ScaleNone || len(vectors) == 0 {
			continue
		}
		lo, hi, mean := math.Inf(1), math.Inf(-1), 0.0
		for _, v := range vectors {
			lo, hi = min(lo, v[j]), max(hi, v[j])
			mean += v[j]
		}
		mean /= float64(len(vectors))
		spread := hi - lo
		sc.Offset[j] = lo
		if s == ScaleZ {
			var ss float64
			for _, v := range vectors {
				ss += (v[j] - mean) * (v[j] - mean)
			}
			spread = math.Sqrt(ss / float64(len(vectors)))
			sc.Offset[j] = mean
		}
		if spread > 0 {
			sc.Divisor[j] = spread
		}
	}
	return sc
}

// Apply returns the scaled vectors.
func (sc Scaler) Apply(vectors [][]float64) [][]float64 {
	out := make([][]float64, len(vectors))
	for i, v := range vectors {
		out[i] = make([]float64, len(v))
		for j, x := range v {
			if sc.Log {
				x = math.Log1p(x)
			}
			out[i][j] = (x - sc.Offset[j]) / sc.Divisor[j]
		}
	}
	return out
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}
