package tracehist

import (
	"math"
	"strconv"
	"strings"
)

// row is one histogram row as a tool printed it. DTrace and SystemTap rows
// name only their lower edge (a "value row": hi is NaN until the table is
// finished); bcc, iolatency and bpftrace rows name both edges.
type row struct {
	line   int
	lo, hi float64
	count  float64
	// under is DTrace's "< N" row (everything below N), over its ">= N" row
	// and bpftrace's "[N, ...)" (everything from N up).
	under, over bool
	// strict marks SystemTap's linear overflow row ">N": N is the lower
	// edge of the last regular row, the overflow starts one step above.
	strict bool
	// gapBefore says a SystemTap "~" line elided zero rows before this one.
	gapBefore bool
}

// parseCount reads a row's count: a non-negative integer.
func parseCount(s string) (float64, bool) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(n), true
}

// parseInt reads a signed integer edge.
func parseInt(s string) (float64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(n), true
}

// onlyChars says s holds nothing but the given characters.
func onlyChars(s, chars string) bool {
	for _, c := range s {
		if !strings.ContainsRune(chars, c) {
			return false
		}
	}
	return true
}

// parseValueRow reads a DTrace or SystemTap row "   8192 |@@@@    12":
// value, a bar of '@' (DTrace centres signed bars on a second '|'), count.
// shaped says the line has a row's '|' at all; reason says why a row-shaped
// line is not a row.
func parseValueRow(s string) (r row, shaped bool, reason string) {
	left, right, ok := strings.Cut(s, "|")
	if !ok {
		return row{}, false, ""
	}
	right = strings.TrimRight(right, " \t")
	cut := strings.LastIndexAny(right, " \t@|")
	countText, bar := right[cut+1:], right[:cut+1]
	count, ok := parseCount(countText)
	if !ok {
		return row{}, true, "row count " + quoteShort(countText) + " is not a non-negative integer"
	}
	if !onlyChars(bar, "@| \t") {
		return row{}, true, "row bar holds characters other than '@'"
	}
	v := strings.TrimSpace(left)
	switch {
	case strings.HasPrefix(v, ">="):
		r.over = true
		v = strings.TrimSpace(v[2:])
	case strings.HasPrefix(v, ">"):
		r.over, r.strict = true, true
		v = strings.TrimSpace(v[1:])
	case strings.HasPrefix(v, "<"):
		r.under = true
		v = strings.TrimSpace(v[1:])
	}
	n, ok := parseInt(v)
	if !ok {
		return row{}, true, "row value " + quoteShort(v) + " is not an integer"
	}
	r.count = count
	switch {
	case r.over:
		r.lo, r.hi = n, math.Inf(1)
	case r.under:
		r.lo, r.hi = math.Inf(-1), n
	default:
		r.lo, r.hi = n, math.NaN()
	}
	return r, true, ""
}

// parseArrowRow reads a bcc or perf-tools iolatency row
// "  128 -> 255   : 12   |****   |" (or bcc's linear "  5   : 3   |**|").
// For bcc (inclusiveHi) "a -> b" counts the integers a..b, the durations
// [a, b+1); for iolatency ">=(ms) .. <(ms)" it is [a, b).
func parseArrowRow(s string, inclusiveHi bool) (r row, shaped bool, reason string) {
	left, right, ok := strings.Cut(s, ":")
	if !ok || !strings.Contains(right, "|") {
		return row{}, false, ""
	}
	countText, bar, _ := strings.Cut(right, "|")
	countText = strings.TrimSpace(countText)
	bar = strings.TrimRight(bar, " \t")
	if !strings.HasSuffix(bar, "|") {
		return row{}, true, "row bar is not closed by '|'"
	}
	count, ok := parseCount(countText)
	if !ok {
		return row{}, true, "row count " + quoteShort(countText) + " is not a non-negative integer"
	}
	a, b, arrow := strings.Cut(left, "->")
	lo, ok := parseInt(strings.TrimSpace(a))
	if !ok || lo < 0 {
		return row{}, true, "row range " + quoteShort(strings.TrimSpace(left)) + " is not \"a -> b\""
	}
	hi := lo + 1 // a linear row names one value
	if arrow {
		if hi, ok = parseInt(strings.TrimSpace(b)); !ok || hi < lo {
			return row{}, true, "row range " + quoteShort(strings.TrimSpace(left)) + " is not \"a -> b\""
		}
		if inclusiveHi {
			hi++
		}
	}
	if hi <= lo {
		return row{}, true, "row range " + quoteShort(strings.TrimSpace(left)) + " is empty"
	}
	return row{lo: lo, hi: hi, count: count}, true, ""
}

// parseBracketRow reads a bpftrace row "[256, 512)   2 |@   |", "[0]",
// "[1K, 2K)", lhist's "(..., 0)" and "[100, ...)".
func parseBracketRow(s string) (r row, shaped bool, reason string) {
	t := strings.TrimSpace(s)
	if len(t) == 0 || (t[0] != '[' && t[0] != '(') {
		return row{}, false, ""
	}
	end := strings.IndexAny(t, ")]")
	if end < 0 || !strings.Contains(t[end:], "|") {
		return row{}, false, ""
	}
	rangeText, rest := t[1:end], t[end+1:]
	countText, bar, _ := strings.Cut(rest, "|")
	countText = strings.TrimSpace(countText)
	if !strings.HasSuffix(strings.TrimRight(bar, " \t"), "|") {
		return row{}, true, "row bar is not closed by '|'"
	}
	count, ok := parseCount(countText)
	if !ok {
		return row{}, true, "row count " + quoteShort(countText) + " is not a non-negative integer"
	}
	r.count = count
	a, b, pair := strings.Cut(rangeText, ",")
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	bad := "row range " + quoteShort(t[:end+1]) + " is not [lo, hi)"
	switch {
	case !pair: // "[0]", "[1]": one integer value
		v, ok := parseSuffixed(a)
		if !ok || t[end] != ']' {
			return row{}, true, bad
		}
		r.lo, r.hi = v, v+1
	case a == "...":
		v, ok := parseSuffixed(b)
		if !ok {
			return row{}, true, bad
		}
		r.under, r.lo, r.hi = true, math.Inf(-1), v
	case b == "...":
		v, ok := parseSuffixed(a)
		if !ok {
			return row{}, true, bad
		}
		r.over, r.lo, r.hi = true, v, math.Inf(1)
	default:
		lo, ok1 := parseSuffixed(a)
		hi, ok2 := parseSuffixed(b)
		if !ok1 || !ok2 || hi <= lo || t[end] != ')' {
			return row{}, true, bad
		}
		r.lo, r.hi = lo, hi
	}
	return r, true, ""
}

// parseSuffixed reads a bpftrace edge: an integer with an optional binary
// suffix, "1K" = 1024, "2M" = 2·1024², up to "E".
func parseSuffixed(s string) (float64, bool) {
	mult := 1.0
	if n := len(s); n > 1 {
		if i := strings.IndexByte("KMGTPE", s[n-1]); i >= 0 {
			mult = math.Ldexp(1, 10*(i+1))
			s = s[:n-1]
		}
	}
	v, ok := parseInt(s)
	return v * mult, ok
}

// quoteShort quotes s for a message, cut to 40 bytes.
func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

// isPow2 says v is 2^k for an integer k ≥ 0.
func isPow2(v float64) bool {
	frac, _ := math.Frexp(v)
	return v >= 1 && frac == 0.5
}

// logNext is the value of the row DTrace quantize() or SystemTap @hist_log
// prints after v: 0 → 1, 2^k → 2^(k+1), -1 → 0, -2^k → -2^(k-1).
func logNext(v float64) float64 {
	switch {
	case v == 0:
		return 1
	case v == -1:
		return 0
	case v < 0:
		return v / 2
	}
	return 2 * v
}

// isLogValue says v can be a quantize()/@hist_log row value.
func isLogValue(v float64) bool { return v == 0 || isPow2(math.Abs(v)) }

// finishValueRows gives DTrace/SystemTap value rows their upper edges.
// Log tables (quantize, @hist_log: every value 0 or ±2^k, each row the
// next power of two unless "~" elided rows) get [v, 2v). Other tables are
// linear (lquantize, @hist_linear) or log-linear (llquantize): a row ends
// where the next printed row starts, the last regular row where ">= N"
// starts or one step above it. A table of only 0, 1 and 2 reads as log.
func finishValueRows(rows []row) {
	if isLogTable(rows) {
		for i := range rows {
			rows[i].hi = logNext(rows[i].lo)
			if rows[i].lo == 0 {
				rows[i].hi = 1
			}
		}
		return
	}
	step := minStep(rows)
	for i := range rows {
		if r := &rows[i]; r.over && r.strict {
			r.lo += step
		}
	}
	for i := range rows {
		r := &rows[i]
		if r.under || r.over {
			continue
		}
		var next *row
		if i+1 < len(rows) {
			next = &rows[i+1]
		}
		switch {
		case next != nil && next.over:
			r.hi = math.Max(next.lo, r.lo+step)
		case next != nil && !next.gapBefore && !next.under:
			r.hi = next.lo
		case i > 0 && !r.gapBefore && !rows[i-1].under && !rows[i-1].over && next == nil:
			r.hi = r.lo + (r.lo - rows[i-1].lo) // one step of the last decade
		default:
			r.hi = r.lo + step
		}
		if !(r.hi > r.lo) {
			r.hi = r.lo + step
		}
	}
}

// isLogTable says every regular row is a log row and rows not separated by
// an elision follow each other as powers of two.
func isLogTable(rows []row) bool {
	for i, r := range rows {
		if r.under || r.over || !isLogValue(r.lo) {
			return false
		}
		if i > 0 && !r.gapBefore && logNext(rows[i-1].lo) != r.lo {
			return false
		}
		if i > 0 && r.gapBefore && r.lo <= rows[i-1].lo {
			return false
		}
	}
	return true
}

// minStep is the smallest distance between consecutive regular rows (1
// when there are fewer than two).
func minStep(rows []row) float64 {
	step := math.Inf(1)
	prev := math.NaN()
	for _, r := range rows {
		if r.under || r.over {
			continue
		}
		if d := r.lo - prev; d > 0 && d < step {
			step = d
		}
		prev = r.lo
	}
	if math.IsInf(step, 1) {
		return 1
	}
	return step
}
