package terminal

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// compact prints a rate or count in at most 7 characters with three
// significant digits: 0, 0.0123, 4.56, 789, 12.3k, 4.56M; "-" for NaN (no
// data). Values below 0.001 use exponent notation (1.2e-4).
func compact(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.IsInf(v, 0):
		return "inf"
	case v == 0:
		return "0"
	case v < 0:
		return "-" + compact(-v)
	}
	suffixes := [...]string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for v >= 999.5 && i < len(suffixes)-1 {
		v /= 1000
		i++
	}
	if v < 0.0009995 {
		s := strconv.FormatFloat(v, 'e', 1, 64)
		return strings.Replace(strings.Replace(s, "e-0", "e-", 1), ".0e", "e", 1)
	}
	decimals := 0
	switch {
	case v >= 99.95:
		decimals = 0
	case v >= 9.995:
		decimals = 1
	case v >= 0.9995:
		decimals = 2
	default:
		decimals = 2 - int(math.Floor(math.Log10(v)))
	}
	return trimZeros(strconv.FormatFloat(v, 'f', decimals, 64)) + suffixes[i]
}

// trimZeros drops trailing zeros after a decimal point, and the point.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// latency prints a latency in nanoseconds in a human unit, "-" when there
// were no events.
func latency(ns float64) string { return hist.FormatLatency(ns, "-") }

// seconds prints a duration given in seconds (3s, 1.5s, 250ms).
func seconds(s float64) string {
	if s <= 0 {
		return "-"
	}
	return latency(s * 1e9)
}

// clock prints a column time: HH:MM:SS on a wall clock, +MM:SS since the
// start for relative grids.
func clock(t time.Time, relative bool) string {
	if !relative {
		return t.Format("15:04:05")
	}
	return elapsed(t.Sub(stream.RelativeStart))
}

// elapsed prints +MM:SS; minutes go past 59 rather than adding hours so the
// axis keeps one format.
func elapsed(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	secs := int64(d / time.Second)
	return sign + pad2(secs/60) + ":" + pad2(secs%60)
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// width is the number of terminal cells s takes.
func width(s string) int {
	n := 0
	for _, r := range s {
		n += cellWidth(r)
	}
	return n
}

// truncate cuts s to at most n cells.
func truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s // n bytes never take more than n cells
	}
	used := 0
	for pos, r := range s {
		if used+cellWidth(r) > n {
			return s[:pos]
		}
		used += cellWidth(r)
	}
	return s
}

// cellWidth is the number of cells a rune takes: 0 for combining marks
// and zero-width characters, 2 for East Asian wide characters and emoji, 1
// otherwise.
func cellWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// sanitize makes text from the data (series labels) safe to print: control
// characters (escape sequences could drive the terminal), format characters
// such as bidirectional overrides and invalid UTF-8 become '?'.
func sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"),
			unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
