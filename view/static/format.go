package static

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// The page's script formats tooltip values with the same rules (fmtNum,
// fmtDur and the time functions in page.js): keep them in step.

// formatNumber prints a rate or count with about three significant digits
// and k/M/G suffixes: 0, 0.0012, 0.25, 12.3, 456, 12.3k, 4.56M.
func formatNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "–"
	case a == 0:
		return "0"
	case a >= 1e9:
		return hist.FormatSignificant(v/1e9) + "G"
	case a >= 1e6:
		return hist.FormatSignificant(v/1e6) + "M"
	case a >= 1e3:
		return hist.FormatSignificant(v/1e3) + "k"
	case a >= 0.01:
		return hist.FormatSignificant(v)
	default:
		return compactG(v, 2)
	}
}

// formatEvents prints an event count: whole numbers with thousands
// separators, fractions (resampled columns) with three digits.
func formatEvents(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if v != math.Trunc(v) || math.Abs(v) >= 1e15 {
		return formatNumber(v)
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatLatency prints a latency in nanoseconds, "–" when unknown.
func formatLatency(ns float64) string { return hist.FormatLatency(ns, "–") }

// formatWaitRate prints an intensity (seconds waited per second) as a
// duration: 0.759 → "759ms".
func formatWaitRate(v float64) string { return formatLatency(v * 1e9) }

// formatValue prints a map cell value without its "/s".
func formatValue(m heatmap.Mode, v float64) string {
	if m == heatmap.Intensity {
		return formatWaitRate(v)
	}
	return formatNumber(v)
}

// bucketRange names a row's latency range: "1.02ms – 2.05ms", "< 1µs",
// "≥ 1.05s".
func bucketRange(r heatmap.Row) string {
	switch {
	case r.FoldsAbove || math.IsInf(r.Upper, 1):
		return "≥ " + hist.FormatDuration(r.Lower)
	case r.FoldsBelow || r.Lower <= 0:
		return "< " + hist.FormatDuration(r.Upper)
	default:
		return hist.FormatDuration(r.Lower) + " – " + hist.FormatDuration(r.Upper)
	}
}

// formatSpan prints a column width or interval length compactly: 3s,
// 1m30s, 250ms, 2h.
func formatSpan(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return hist.FormatDuration(float64(d))
	}
	s := d.Round(time.Millisecond).String()
	// time.Duration prints 1m0s and 2h0m0s; drop the zero tails.
	for _, tail := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, tail) {
			s = strings.TrimSuffix(s, tail[1:])
		}
	}
	return s
}

// relativeLabel prints an offset from the start of a relative recording:
// +0s, +45s, +1m30s, +2h.
func relativeLabel(d time.Duration) string {
	if d == 0 {
		return "+0s"
	}
	if d < 0 {
		return "-" + formatSpan(-d)
	}
	return "+" + formatSpan(d)
}

// zoneName prints a time's UTC offset: "UTC" or "UTC+02:00".
func zoneName(t time.Time) string {
	_, off := t.Zone()
	if off == 0 {
		return "UTC"
	}
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("UTC%c%02d:%02d", sign, off/3600, off/60%60)
}

// clockLayout returns the time-of-day layout that shows the width's
// precision.
func clockLayout(width time.Duration, start time.Time) string {
	if width%time.Second != 0 || start.Nanosecond() != 0 {
		return "15:04:05.000"
	}
	return "15:04:05"
}

// formatRange prints a column's time range as the tooltip does: the date
// once, "2024-01-02 03:04:05 – 03:04:08", or "+12s – +15s" when relative.
func formatRange(start, end time.Time, width time.Duration, relative bool) string {
	if relative {
		return relativeLabel(start.Sub(stream.RelativeStart)) + " – " + relativeLabel(end.Sub(stream.RelativeStart))
	}
	clock := clockLayout(width, start)
	s := start.Format("2006-01-02 " + clock)
	if end.Year() == start.Year() && end.YearDay() == start.YearDay() {
		return s + " – " + end.Format(clock)
	}
	return s + " – " + end.Format("2006-01-02 "+clock)
}
