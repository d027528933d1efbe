package loadtest

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/latscope/latscope/hist"
)

// fuzzHist builds a histogram from arbitrary bytes: a grid histogram at any
// scale, unit, offset and zero edge, or one with custom edges, with counts
// spanning many orders of magnitude. Invalid results are fine: FindModes
// must reject them without panicking.
func fuzzHist(data []byte) *hist.Histogram {
	if len(data) < 8 {
		return nil
	}
	head, body := data[:8], data[8:]
	units := []hist.Unit{hist.Nanosecond, hist.Microsecond, hist.Millisecond, hist.Second}
	unit := units[int(head[0])%len(units)]
	magnitude := math.Pow(10, float64(int(head[1]%64)-16)) // 1e-16 … 1e47
	counts := make([]float64, len(body))
	for i, b := range body {
		counts[i] = float64(b) * magnitude
	}
	if head[2]%4 == 3 {
		return fuzzCustom(unit, head, counts)
	}
	h := &hist.Histogram{
		Unit:      unit,
		Scale:     int(head[2]) % (hist.MaxScale + 1),
		ZeroPow:   int(int8(head[3])),
		Offset:    int(int16(binary.LittleEndian.Uint16(head[4:6]))),
		ZeroCount: float64(head[6]) * magnitude,
		TopOpen:   head[7]&1 == 1,
		Counts:    counts,
	}
	if h.Offset < h.ZeroPow<<h.Scale {
		h.Offset = h.ZeroPow << h.Scale
	}
	return h
}

// fuzzCustom builds custom edges growing by factors taken from the counts.
func fuzzCustom(unit hist.Unit, head []byte, counts []float64) *hist.Histogram {
	bounds := []float64{float64(head[3]) / 16}
	for i := range counts {
		bounds = append(bounds, bounds[i]*(1+float64(head[4+i%4])/64)+1)
	}
	if head[7]&1 == 1 {
		bounds[len(bounds)-1] = math.Inf(1)
	}
	h, err := hist.NewCustom(unit, bounds)
	if err != nil {
		return nil
	}
	for i, c := range counts {
		_ = h.AddCustom(i, c)
	}
	_ = h.AddCustom(-1, float64(head[6]))
	return h
}

// FuzzFindModes: arbitrary counts never panic, and every reported mode is
// finite, ordered, inside its own range, with fractions in [0, 1] summing
// to at most 1.
func FuzzFindModes(f *testing.F) {
	rng := []byte{1, 0, 6, 0, 0, 0, 0, 0}
	f.Add(append(rng, 0, 5, 40, 90, 40, 5, 0, 0, 0, 0, 0, 3, 30, 60, 30, 3), 0.0, 0.0)
	f.Add([]byte{0, 20, 0, 250, 0, 128, 9, 1, 255, 1, 255, 1, 255}, 0.01, 1.5)
	f.Add([]byte{3, 63, 8, 128, 255, 127, 255, 0, 7}, 0.5, 1e9)
	f.Add([]byte{2, 16, 3, 3, 200, 100, 50, 1, 10, 20, 30, 0, 0, 40, 50, 60}, -1.0, math.NaN())
	f.Fuzz(func(t *testing.T, data []byte, minFraction, minRatio float64) {
		h := fuzzHist(data)
		ms := FindModes(h, ModeOptions{MinFraction: minFraction, MinRatio: minRatio})
		sum := 0.0
		for i, m := range ms {
			if !allFinite(m.CenterUS, m.LowUS, m.HighUS, m.Fraction) {
				t.Fatalf("mode %d not finite: %+v", i, m)
			}
			if m.Fraction < 0 || m.Fraction > 1 || !(m.LowUS <= m.CenterUS && m.CenterUS <= m.HighUS) {
				t.Fatalf("mode %d inconsistent: %+v", i, m)
			}
			if i > 0 && m.LowUS < ms[i-1].HighUS*(1-1e-9) {
				t.Fatalf("modes %d and %d overlap: %+v", i-1, i, ms)
			}
			sum += m.Fraction
		}
		if sum > 1 {
			t.Fatalf("fractions sum to %v > 1: %+v", sum, ms)
		}
	})
}
