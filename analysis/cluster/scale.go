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
// over the population standard deviation) and range (minus the minimum,
// over the range).
const (
	ScaleNone  Scaling = "none"
	ScaleZ     Scaling = "z"
	ScaleRange Scaling = "range"
)

// ParseScaling checks a scaling's name.
func ParseScaling(s string) (Scaling, error) {
	switch sc := Scaling(s); sc {
	case ScaleNone, ScaleZ, ScaleRange:
		return sc, nil
	}
	return "", fmt.Errorf("scale %q: want none, z or range", s)
}

// Scaler maps feature j as (v − Offset[j]) / Divisor[j]. A constant feature
// has divisor 1: it maps to 0 and counts for nothing.
type Scaler struct {
	Offset  []float64 `json:"offset"`
	Divisor []float64 `json:"divisor"`
}

// NewScaler fits the scaling to the vectors.
func NewScaler(vectors [][]float64, s Scaling) Scaler {
	d := 0
	if len(vectors) > 0 {
		d = len(vectors[0])
	}
	sc := Scaler{Offset: make([]float64, d), Divisor: make([]float64, d)}
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
			out[i][j] = (x - sc.Offset[j]) / sc.Divisor[j]
		}
	}
	return out
}
