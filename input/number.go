package input

import "math"

// ParseUint reads a decimal integer without sign that is the whole of b,
// without the string conversion strconv needs: parsers that read numbers
// out of a line's bytes (fio histogram logs, /proc files every second) call
// it per field.
func ParseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
