package tracehist

import "strings"

// RawKind classifies a line of raw DTrace quantize() or SystemTap
// @hist_log output, as PyLatencyMap records carry it (its dtrace and
// systemtap connectors fed such records to the engine).
type RawKind int

// Kinds of raw histogram lines.
const (
	// RawNone: not a raw histogram line.
	RawNone RawKind = iota
	// RawHeader: "value  ---- Distribution ---- count" or "value |---- count".
	RawHeader
	// RawRow: "   8192 |@@@@   12": a lower-bound power-of-two bucket.
	RawRow
	// RawElision: SystemTap's "~", elided zero rows.
	RawElision
)

// ParseRawLine reads one line of raw DTrace/SystemTap log2 histogram
// output. For RawRow, value is the bucket's lower edge (it may be negative)
// and count its count; reason is set when the line is shaped like a row but
// is not a usable one (a bad count, or an lquantize "< N"/">= N" row, which
// is no power-of-two bucket).
func ParseRawLine(line string) (kind RawKind, value, count float64, reason string) {
	t := strings.TrimSpace(line)
	if t == "~" {
		return RawElision, 0, 0, ""
	}
	if h, ok := parseHeader(t); ok && (h.dialect == dialectDTrace || h.dialect == dialectSystemTap) {
		return RawHeader, 0, 0, ""
	}
	r, shaped, reason := parseValueRow(t)
	if !shaped || (reason != "" && !startsLikeValue(t)) {
		return RawNone, 0, 0, ""
	}
	if reason != "" {
		return RawRow, 0, 0, reason
	}
	if r.under || r.over {
		value, _, _ := strings.Cut(t, "|")
		return RawRow, 0, 0, "row " + quoteShort(strings.TrimSpace(value)) + " is an lquantize bound, not a power-of-two bucket"
	}
	return RawRow, r.lo, r.count, ""
}

// startsLikeValue says a line starts with a row's value column: an
// optional '<' or '>', a sign and a digit.
func startsLikeValue(t string) bool {
	t = strings.TrimLeft(t, "<>= ")
	t = strings.TrimPrefix(t, "-")
	return t != "" && t[0] >= '0' && t[0] <= '9'
}
