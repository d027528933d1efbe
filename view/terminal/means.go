package terminal

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/latscope/latscope/stream"
)

// Mean series (pg_stat_statements, block read time) have only a count and a
// total per interval: the live view lists them under the heat map, one line
// each with the last interval's mean and rate and a sparkline of recent
// interval means, never as a map.

// meanHistory is how many recent intervals a mean line remembers.
const meanHistory = 256

// MeanLine is one mean series as the terminal shows it.
type MeanLine struct {
	Name string
	// Quantity is what the means measure: a latency (LastMean and Recent
	// in ns), or a host figure (in the quantity; LastRate unused).
	Quantity stream.Quantity
	// LastMean is the last observed interval's mean in ns (NaN: no events
	// or no data); LastRate its events per second (NaN: no data).
	LastMean, LastRate float64
	// Recent are the recent interval means in ns, oldest first (NaN: no
	// events or a gap).
	Recent []float64
}

// newMeanTracker returns the tracker of a live view's mean lines: each
// series from its first report on, in the source that reported it first,
// its latest meanHistory intervals.
func newMeanTracker() *stream.MeanTracker {
	return stream.NewMeanTracker(stream.MeanOptions{History: meanHistory, FromFirstReport: true})
}

// meanLines returns the mean lines of the tracked series, in order of first
// appearance.
func meanLines(t *stream.MeanTracker) []MeanLine {
	series := t.Series()
	lines := make([]MeanLine, 0, len(series))
	for _, s := range series {
		l := MeanLine{Name: sanitize(s.Key.String()), Quantity: s.Quantity, LastMean: math.NaN(), LastRate: math.NaN()}
		for _, p := range s.Points {
			l.Recent = append(l.Recent, p.Mean(s.Unit))
		}
		if n := len(s.Points); n > 0 {
			l.LastMean, l.LastRate = l.Recent[n-1], s.Points[n-1].Rate()
		}
		lines = append(lines, l)
	}
	return lines
}

// meanHeader heads the mean lines.
const meanHeader = "Means (no distribution: count and total per interval)"

// MeanLinesNeeded is how many screen lines RenderMeans uses for n series at
// most height lines (0 without series).
func MeanLinesNeeded(n, height int) int {
	if n == 0 || height < 2 {
		return 0
	}
	return min(n+1, height)
}

// RenderMeans draws a header and one line per mean series, at most height
// lines of at most width cells: name, last mean, count/s and a sparkline of
// recent interval means (▁..█; ASCII in plain mode; blank for no events or
// no data).
func RenderMeans(w *bytes.Buffer, lines []MeanLine, width, height int, plain bool) {
	n := MeanLinesNeeded(len(lines), height)
	if n == 0 || width <= 0 {
		return
	}
	w.WriteString(clip(meanHeader, width) + "\n")
	for _, l := range lines[:n-1] {
		w.WriteString(meanLine(l, width, plain) + "\n")
	}
}

// meanLine lays out one series: a sparkline of what fits, then the figures.
func meanLine(l MeanLine, width int, plain bool) string {
	rate := "no data"
	if !math.IsNaN(l.LastRate) {
		rate = formatMeanRate(l.LastRate) + "/s"
	}
	figures := fmt.Sprintf(" mean %s %s", latency(l.LastMean), rate)
	if !l.Quantity.IsLatency() {
		figures = " " + formatQuantity(l.LastMean, l.Quantity)
	}
	name := l.Name
	nameW := min(utf8.RuneCountInString(name), max(width/3, 12))
	sparkW := width - nameW - utf8.RuneCountInString(figures) - 2
	if sparkW < 4 {
		return clip(name+figures, width)
	}
	recent := l.Recent[max(0, len(l.Recent)-sparkW):]
	return clip(clip(name, nameW)+"  "+sparkline(recent, plain)+figures, width)
}

// formatQuantity prints a host figure with its symbol ("-": no data).
func formatQuantity(v float64, q stream.Quantity) string {
	if math.IsNaN(v) {
		return "-"
	}
	return formatMeanRate(v) + q.Symbol()
}

func formatMeanRate(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// sparkBlocks and sparkASCII are the eight levels of a sparkline.
var (
	sparkBlocks = []rune("▁▂▃▄▅▆▇█")
	sparkASCII  = []rune("_.-:=+*#")
)

// sparkline draws values between their own minimum and maximum (all equal:
// the lowest level); NaN is a blank.
func sparkline(vals []float64, plain bool) string {
	levels := sparkBlocks
	if plain {
		levels = sparkASCII
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	var b strings.Builder
	for _, v := range vals {
		switch {
		case math.IsNaN(v):
			b.WriteByte(' ')
		case hi <= lo:
			b.WriteRune(levels[0])
		default:
			i := int(math.Round((v - lo) / (hi - lo) * float64(len(levels)-1)))
			b.WriteRune(levels[min(max(i, 0), len(levels)-1)])
		}
	}
	return b.String()
}

// clip cuts s to at most n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:max(n, 0)])
}
