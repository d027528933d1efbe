// Package bytesize parses and prints byte counts the way storage tools
// write them: 8k, 8KiB, 1.5G, 512.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Parse reads a byte count: a number with an optional unit. K, M, G, T and
// P (with or without a trailing B or iB, any case) are powers of 1024, as
// in fio and dd; a bare number is bytes. Fractions are allowed when the
// result is a whole number of bytes ("1.5G").
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num, mult := splitUnit(t)
	if mult == 0 || num == "" {
		return 0, fmt.Errorf("size %q: want a number with an optional unit K, M, G, T or P (powers of 1024)", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("size %q: %q is not a number", s, num)
	}
	if v < 0 {
		return 0, fmt.Errorf("size %q is negative", s)
	}
	b := v * float64(mult)
	if b >= math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	if b != math.Trunc(b) {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	return int64(b), nil
}

// splitUnit splits "1.5GiB" into "1.5" and 1<<30; an unknown unit gives
// multiplier 0.
func splitUnit(s string) (string, int64) {
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') && s[i-1] != '.' {
		i--
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i")
	switch unit {
	case "":
		return num, 1
	case "k":
		return num, 1 << 10
	case "m":
		return num, 1 << 20
	case "g":
		return num, 1 << 30
	case "t":
		return num, 1 << 40
	case "p":
		return num, 1 << 50
	}
	return num, 0
}

// Format prints n as "8 KiB", "256 MiB" or "1.5 GiB".
func Format(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v := float64(n)
	u := 0
	for math.Abs(v) >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d %s", int64(v), units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
