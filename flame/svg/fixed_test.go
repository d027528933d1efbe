package svg

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func checkFixed(t *testing.T, v float64, prec int) {
	t.Helper()
	got := string(appendFixed(nil, v, prec))
	if want := strconv.FormatFloat(v, 'f', prec, 64); got != want {
		t.Fatalf("appendFixed(%v, %d) = %q, want %q", v, prec, got, want)
	}
}

func TestAppendFixedEqualsStrconv(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), -1.5, 0.5, 1.5, 2.5, 0.125, 0.00005, 0.00015, 99.99995, 100,
		1e14, 1e15, 1e20, math.Inf(1), math.Inf(-1), math.NaN(), 0.1 + 0.2, 3.0 / 7, 12345.6789, 1e-300}
	for _, v := range special {
		for prec := range 11 {
			checkFixed(t, v, prec)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		v := r.Float64() * 100
		if r.IntN(4) == 0 { // exact decimals, where ties are
			v = float64(r.IntN(2000000)) / float64([]int{2, 4, 8, 20, 200, 2000, 20000, 200000}[r.IntN(8)])
		}
		checkFixed(t, v, 2)
		checkFixed(t, v, 4)
	}
	// frame x positions of a real layout: start×100/total
	for total := int64(1); total < 5000; total += 37 {
		for start := int64(0); start <= total; start += 1 + total/97 {
			checkFixed(t, float64(start)*(100/float64(total)), 4)
		}
	}
}

func FuzzAppendFixed(f *testing.F) {
	for _, v := range []float64{0, 0.5, 1.00005, 99.99995, 1e15, -2} {
		f.Add(v, uint8(4))
	}
	f.Fuzz(func(t *testing.T, v float64, prec uint8) {
		checkFixed(t, v, int(prec%12))
	})
}
