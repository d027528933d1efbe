package source

import (
	"strconv"
	"strings"
)

// ParseUTCOffset reads a numeric UTC offset as logs print it — "+02",
// "-0530", "+05:30" — into seconds east of UTC.
func ParseUTCOffset(s string) (int, bool) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	digits := s[1:]
	if len(digits) == 5 && digits[2] == ':' {
		digits = digits[:2] + digits[3:]
	}
	if len(digits) != 2 && len(digits) != 4 || strings.ContainsAny(digits, "+-") {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	h, m := n, 0
	if len(digits) == 4 {
		h, m = n/100, n%100
	}
	// Real offsets span −12:00 to +14:00.
	if h > 14 || m > 59 {
		return 0, false
	}
	off := (h*60 + m) * 60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}
