package terminal

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/latscope/latscope/hist"
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
	// LastMean is the last observed interval's mean in ns (NaN: no events
	// or no data); LastRate its events per second (NaN: no data).
	LastMean, LastRate float64
	// Recent are the recent interval means in ns, oldest first (NaN: no
	// events or a gap).
	Recent []float64
}

// MeanTracker keeps recent per-interval means of every mean series in a
// feed, in order of first appearance.
type MeanTracker struct {
	lines    []MeanLine
	index    map[stream.Key]int
	bySource map[string][]stream.Key
}

// Add takes one interval: its mean series, zero for series its source
// reported before but not now, no data for a gap.
func (t *MeanTracker) Add(iv stream.Interval) {
	if t.index == nil {
		t.index, t.bySource = map[stream.Key]int{}, map[string][]stream.Key{}
	}
	for _, m := range iv.Means {
		if _, ok := t.index[m.Key]; !ok {
			t.index[m.Key] = len(t.lines)
			t.lines = append(t.lines, MeanLine{Name: sanitize(m.Key.String()), LastMean: math.NaN(), LastRate: math.NaN()})
			t.bySource[iv.Source] = append(t.bySource[iv.Source], m.Key)
		}
	}
	secs := iv.Duration.Seconds()
	for _, k := range t.bySource[iv.Source] {
		mean, rate := math.NaN(), math.NaN()
		if !iv.Gap {
			var v stream.SeriesMean
			for _, m := range iv.Means {
				if m.Key == k {
					v.Count += m.Count
					v.Sum += m.Unit.Nanos(m.Sum)
				}
			}
			v.Unit = hist.Nanosecond
			mean = v.Mean()
			if secs > 0 {
				rate = v.Count / secs
			}
		}
		l := &t.lines[t.index[k]]
		l.LastMean, l.LastRate = mean, rate
		l.Recent = append(l.Recent, mean)
		if len(l.Recent) > meanHistory {
			l.Recent = append(l.Recent[:0], l.Recent[len(l.Recent)-meanHistory:]...)
		}
	}
}

// Lines returns the mean series seen so far.
func (t *MeanTracker) Lines() []MeanLine { return t.lines }

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
	figures := fmt.Sprintf(" mean %s %s", meanText(l.LastMean), rate)
	name := l.Name
	nameW := min(utf8.RuneCountInString(name), max(width/3, 12))
	sparkW := width - nameW - utf8.RuneCountInString(figures) - 2
	if sparkW < 4 {
		return clip(name+figures, width)
	}
	recent := l.Recent[max(0, len(l.Recent)-sparkW):]
	return clip(clip(name, nameW)+"  "+sparkline(recent, plain)+figures, width)
}

func meanText(ns float64) string {
	if math.IsNaN(ns) {
		return "-"
	}
	return hist.FormatDuration(ns)
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
