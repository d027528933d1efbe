package svg

import (
	"math"
	"strconv"
)

// pow10 are the scales appendFixed handles (precisions 0–9).
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// fixedTie is how close to a rounding tie a scaled value may come before
// appendFixed leaves it to strconv: far beyond the error of one
// multiplication (below 1e-9 for the values it takes).
const fixedTie = 1e-6

// appendFixed appends v with prec decimals, byte for byte as
// strconv.AppendFloat(dst, v, 'f', prec, 64), about five times faster for
// the coordinates and percentages a flame graph writes by the tens of
// thousands: it rounds v×10^prec to an integer and prints that. Rounding
// to the nearest integer only depends on the error of that product near
// a tie (a fraction of .5), so those values, negative ones (strconv
// writes "-0.00"), and those too large for exact integers go to strconv.
func appendFixed(dst []byte, v float64, prec int) []byte {
	if prec < 0 || prec >= len(pow10) || math.Signbit(v) {
		return strconv.AppendFloat(dst, v, 'f', prec, 64)
	}
	x := v * pow10[prec]
	if !(x < 1e15) { // NaN and +Inf too
		return strconv.AppendFloat(dst, v, 'f', prec, 64)
	}
	whole := math.Floor(x)
	frac := x - whole
	if math.Abs(frac-0.5) < fixedTie {
		return strconv.AppendFloat(dst, v, 'f', prec, 64)
	}
	n := uint64(whole)
	if frac > 0.5 {
		n++
	}
	scale := uint64(pow10[prec])
	dst = strconv.AppendUint(dst, n/scale, 10)
	if prec == 0 {
		return dst
	}
	dst = append(dst, '.')
	var digits [9]byte
	f := n % scale
	for i := prec - 1; i >= 0; i-- {
		digits[i] = byte('0' + f%10)
		f /= 10
	}
	return append(dst, digits[:prec]...)
}
