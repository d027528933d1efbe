// Package terminal draws latency heat maps in a terminal, in the layout
// OraLatencyMap users know: a frequency map above an intensity map, latency
// rows labelled on the left, the newest values and a colour legend on the
// right, a time axis under each map and a footer of averages, percentiles
// and flags. Render draws one screen from a heatmap.Frame; Run is the live
// and replay loop with keys (pause, maps, log scale, series).
package terminal

import (
	"bytes"
	"math"
	"strconv"
	"time"

	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// RenderOptions shape one screen.
type RenderOptions struct {
	// Width and Height are the screen size in cells; nothing is drawn
	// outside it.
	Width, Height int
	// Plain draws without escape codes: cells are ' ' (gap), '.' (zero) and
	// '1'..'6' (levels).
	Plain bool
	Show  Show
	// SeriesIndex (from 1) and SeriesCount place the series in the footer
	// ("Series 2/7"); a zero SeriesCount leaves them out.
	SeriesIndex, SeriesCount int
	// Paused marks the title with PAUSED.
	Paused bool
	// Help adds the key summary to the title line when it fits.
	Help bool
	// Status is appended to the title: what a live source is doing now
	// (e.g. a load test's current step).
	Status string
}

// Escape sequences.
const (
	escReset = "\x1b[0m"
	escBold  = "\x1b[1m"
)

// helpText lists the keys Run understands.
const helpText = "space pause  f/i/b maps  l log  n/p series  q quit"

// Render draws frame f as one screen of o.Width × o.Height cells into w.
// Every line ends with a newline; lines never hold more than o.Width visible
// cells and there are never more than o.Height lines. Build f with the
// columns and rows Layout returns for the same size, or the map is clipped.
func Render(w *bytes.Buffer, f heatmap.Frame, o RenderOptions) {
	if w == nil || o.Width <= 0 || o.Height <= 0 {
		return
	}
	f.Label = sanitize(f.Label)
	r := renderer{buf: w, f: &f, o: o, l: plan(o.Width, o.Height, o.Show), linesLeft: o.Height}
	r.screen()
}

// renderer holds the state of one Render call.
type renderer struct {
	buf       *bytes.Buffer
	f         *heatmap.Frame
	o         RenderOptions
	l         layout
	linesLeft int
	ln        line
}

func (r *renderer) screen() {
	if r.l.title {
		r.titleLine()
	}
	if len(r.f.Columns) == 0 || len(r.f.Rows) == 0 {
		r.textLine("no data yet")
		return
	}
	for i := 0; i < r.l.maps; i++ {
		if i > 0 && r.l.separator {
			r.textLine("")
		}
		r.mapSection(r.l.modes[i])
	}
	r.footer()
}

// begin starts a line; false when the screen is full.
func (r *renderer) begin() bool {
	if r.linesLeft <= 0 {
		return false
	}
	r.linesLeft--
	r.ln = line{buf: r.buf, free: r.o.Width, colour: !r.o.Plain}
	return true
}

// end finishes a line, resetting colours it set.
func (r *renderer) end() {
	if r.ln.escaped {
		r.buf.WriteString(escReset)
	}
	r.buf.WriteByte('\n')
}

func (r *renderer) textLine(s string) {
	if r.begin() {
		r.ln.text(s)
		r.end()
	}
}

func (r *renderer) titleLine() {
	if !r.begin() {
		return
	}
	title := "latscope: " + r.f.Label
	if r.o.Paused {
		title = "PAUSED  " + title
	}
	if r.o.Status != "" {
		title += "  —  " + r.o.Status
	}
	r.ln.raw(escBold)
	r.ln.text(title)
	r.ln.raw(escReset)
	if r.o.Help && r.ln.free >= width(helpText)+3 {
		r.ln.spaces(r.ln.free - width(helpText))
		r.ln.text(helpText)
	}
	r.end()
}

// mapSection draws one map: header, rows, time axis.
func (r *renderer) mapSection(mode heatmap.Mode) {
	m := &r.f.Frequency
	if mode == heatmap.Intensity {
		m = &r.f.Intensity
	}
	unit, factor := mapUnit(mode, m)
	if r.l.headers {
		r.headerLine(mode, unit)
	}
	first := max(0, len(r.f.Columns)-r.l.mapW)
	pad := r.l.mapW - (len(r.f.Columns) - first)
	nrows := min(len(r.f.Rows), r.l.rows)
	legend := r.legend(m, factor, nrows)
	esc := paletteEscapes(mode)
	latest := m.Latest()
	for k := 0; k < nrows; k++ {
		row := len(r.f.Rows) - 1 - k // top row first
		if !r.begin() {
			return
		}
		if r.l.labelW > 0 {
			r.ln.field(rowLabel(r.f.Rows[row]), r.l.labelW-1, true)
			r.ln.spaces(1)
		}
		r.ln.spaces(pad)
		for c := first; c < len(r.f.Columns); c++ {
			level := levelAt(m, c, row)
			r.ln.cell(esc, level)
		}
		r.ln.defaultBackground()
		if r.l.latestW > 0 {
			v := math.NaN()
			if row < len(latest) {
				v = latest[row]
			}
			r.ln.spaces(1)
			r.ln.field(compact(v*factor), r.l.latestW-1, true)
		}
		if k < len(legend) {
			r.legendEntry(legend[k], esc)
		}
		r.end()
	}
	if r.l.axes {
		r.axisLine(m, factor, first, pad)
	}
}

// mapUnit returns the unit a map's numbers are shown in and the factor
// from the frame's values to it: intensity (seconds waited per second) is
// shown in ms/s unless some column reaches a second per second.
func mapUnit(mode heatmap.Mode, m *heatmap.Map) (unit string, factor float64) {
	switch {
	case mode == heatmap.Frequency:
		return "ev/s", 1
	case m.MaxColumnSum >= 1:
		return "s/s", 1
	}
	return "ms/s", 1000
}

func (r *renderer) headerLine(mode heatmap.Mode, unit string) {
	if !r.begin() {
		return
	}
	titles := [...]string{"Frequency heat map: events per second", "Frequency (events/s)", "Frequency"}
	if mode == heatmap.Intensity {
		titles = [...]string{"Intensity heat map: time waited per second (" + unit + ")", "Intensity (" + unit + ")", "Intensity"}
	}
	span := r.l.labelW + r.l.mapW
	title := titles[len(titles)-1]
	for _, t := range titles {
		if width(t) <= span {
			title = t
			break
		}
	}
	if width(title) <= r.l.mapW {
		r.ln.spaces(r.l.labelW + (r.l.mapW-width(title))/2)
		r.ln.field(title, r.l.mapW-(r.l.mapW-width(title))/2, false)
	} else {
		r.ln.field(title, span, false)
	}
	if r.l.latestW > 0 {
		r.ln.spaces(1)
		r.ln.field(unit, r.l.latestW-1, true)
	}
	if r.l.legendW > 0 {
		r.ln.spaces(r.legendGap())
		r.ln.text("Legend")
	}
	r.end()
}

// axisLine draws the start and end times of the visible columns under the
// map, the newest column's total under the latest values and the largest
// column total under the legend.
func (r *renderer) axisLine(m *heatmap.Map, factor float64, first, pad int) {
	if !r.begin() {
		return
	}
	cols := r.f.Columns
	last := len(cols) - 1
	relative := r.f.Stats.Relative
	start := clock(cols[first].Start, relative)
	end := clock(cols[last].Start.Add(r.f.ColumnWidth), relative)
	r.ln.spaces(r.l.labelW)
	switch {
	case pad+width(start)+1+width(end) <= r.l.mapW:
		r.ln.spaces(pad)
		r.ln.text(start)
		r.ln.spaces(r.l.mapW - pad - width(start) - width(end))
		r.ln.text(end)
	case width(start)+3+width(end) <= r.l.mapW:
		// Too few columns to put the start under the first one: print the
		// span at the right.
		span := start + " - " + end
		r.ln.spaces(r.l.mapW - width(span))
		r.ln.text(span)
	case width(end) <= r.l.mapW:
		r.ln.spaces(r.l.mapW - width(end))
		r.ln.text(end)
	default:
		r.ln.spaces(r.l.mapW)
	}
	if r.l.latestW > 0 {
		sum := math.NaN()
		if last < len(m.ColumnSums) {
			sum = m.ColumnSums[last]
		}
		r.ln.spaces(1)
		r.ln.field("Σ"+compact(sum*factor), r.l.latestW-1, true)
	}
	if r.l.legendW > 0 {
		r.ln.spaces(r.legendGap())
		r.ln.text("maxΣ " + compact(m.MaxColumnSum*factor))
	}
	r.end()
}

// legendItem is one legend line: a swatch of a level with the values it
// stands for, or (level < 0) a line of text.
type legendItem struct {
	level int
	text  string
}

// legend returns the legend lines for a map of nrows rows: the seven levels
// and the largest cell when there is room, else as many levels as fit,
// spread from zero to the top level.
func (r *renderer) legend(m *heatmap.Map, factor float64, nrows int) []legendItem {
	if r.l.legendW == 0 || nrows <= 0 {
		return nil
	}
	all := make([]legendItem, 0, heatmap.Levels+2)
	for level := 0; level <= heatmap.Levels; level++ {
		all = append(all, legendItem{level: level, text: levelRange(m, factor, level, r.f.Scale)})
	}
	switch {
	case nrows > heatmap.Levels+1:
		return append(all, legendItem{level: -1, text: "max " + compact(m.Max*factor)})
	case nrows == heatmap.Levels+1:
		return all
	case nrows == 1:
		return all[heatmap.Levels:]
	}
	picked := make([]legendItem, nrows)
	for i := range picked {
		picked[i] = all[(i*heatmap.Levels+(nrows-1)/2)/(nrows-1)]
	}
	return picked
}

// levelRange describes the values a colour level stands for: linear level
// i holds values above (i−1)/6 of the maximum, log level i values from
// min·(max/min)^((i−1)/6) up, as heatmap.Level assigns them.
func levelRange(m *heatmap.Map, factor float64, level int, scale heatmap.Scale) string {
	switch {
	case level == heatmap.LevelZero:
		return "0"
	case m.Max <= 0:
		return ""
	case scale == heatmap.Log:
		if m.Max <= m.MinNonZero {
			if level == heatmap.Levels {
				return "≥" + compact(m.MinNonZero*factor)
			}
			return ""
		}
		lower := m.MinNonZero * math.Pow(m.Max/m.MinNonZero, float64(level-1)/heatmap.Levels)
		return "≥" + compact(lower*factor)
	}
	return ">" + compact(m.Max*float64(level-1)/heatmap.Levels*factor)
}

func (r *renderer) legendGap() int {
	if r.l.legendW == legendWide {
		return 2
	}
	return 1
}

func (r *renderer) legendEntry(it legendItem, esc [heatmap.Levels + 1]string) {
	r.ln.spaces(r.legendGap())
	if it.level < 0 {
		r.ln.text(it.text)
		return
	}
	for range r.l.swatchW {
		r.ln.cell(esc, it.level)
	}
	r.ln.spaces(1)
	r.ln.text(it.text)
}

// footer draws the statistics: four lines when there is room, else one.
func (r *renderer) footer() {
	st := r.f.Stats
	switch {
	case r.l.footer >= footerLines:
		r.textLine("Overall  avg " + latency(st.AvgLatency) + "  p50 " + latency(st.P50) + "  p99 " + latency(st.P99) +
			"  events " + compact(st.Events))
		r.textLine("Latest   avg " + latency(st.LatestAvg) + "  p50 " + latency(st.LatestP50) + "  p99 " + latency(st.LatestP99) +
			"  events " + compact(st.LatestEvents) + "  interval " + seconds(st.LatestSeconds) + "  sample " + strconv.Itoa(st.Samples))
		r.textLine(r.dateText() + "  " + r.seriesText())
		flags := r.f.Scale.String() + " scale"
		if !st.SumExact {
			flags += "  sum estimated from bucket midpoints"
		}
		if st.TopCapped {
			flags += "  top bucket capped"
		}
		r.textLine(flags)
	case r.l.footer > 0:
		short := ""
		if !st.SumExact {
			short += "  est. sum"
		}
		if st.TopCapped {
			short += "  top capped"
		}
		if r.o.SeriesCount > 0 {
			short = "  series " + r.seriesIndex() + short
		}
		r.textLine("avg " + latency(st.AvgLatency) + "  p50 " + latency(st.P50) + "  p99 " + latency(st.P99) + short)
	}
}

// seriesText names the series and its place: "Series 2/7, n/p to switch:
// label" (the hint first, as the label is also in the title).
func (r *renderer) seriesText() string {
	if r.o.SeriesCount <= 0 {
		return "Series: " + r.f.Label
	}
	s := "Series " + r.seriesIndex()
	if r.o.SeriesCount > 1 {
		s += ", n/p to switch"
	}
	return s + ": " + r.f.Label
}

func (r *renderer) seriesIndex() string {
	return strconv.Itoa(r.o.SeriesIndex) + "/" + strconv.Itoa(r.o.SeriesCount)
}

// dateText is the end of the newest column: RFC 3339 with its offset, or
// the time since the start for relative grids.
func (r *renderer) dateText() string {
	end := r.f.Stats.LatestEnd
	if n := len(r.f.Columns); n > 0 {
		end = r.f.Columns[n-1].Start.Add(r.f.ColumnWidth)
	}
	if r.f.Stats.Relative {
		return "Elapsed " + elapsed(end.Sub(stream.RelativeStart))
	}
	return "Date " + end.Format(time.RFC3339)
}

// levelAt returns the level of a cell, a gap when the frame lacks it.
func levelAt(m *heatmap.Map, c, row int) int {
	if c < len(m.Levels) && row < len(m.Levels[c]) {
		return m.Levels[c][row]
	}
	return heatmap.LevelGap
}

// paletteEscapes returns the background escape of each level of a map.
func paletteEscapes(mode heatmap.Mode) (esc [heatmap.Levels + 1]string) {
	for i, colour := range heatmap.Palette(mode) {
		esc[i] = "\x1b[48;5;" + strconv.Itoa(colour) + "m"
	}
	return esc
}

// line writes one screen line, counting the cells left so nothing goes
// past the screen's width.
type line struct {
	buf     *bytes.Buffer
	free    int
	colour  bool
	bg      string // the background escape in force, "" for the default
	escaped bool
}

// raw writes an escape sequence (no cells) in colour mode.
func (l *line) raw(esc string) {
	if l.colour {
		l.buf.WriteString(esc)
		l.escaped = true
		l.bg = ""
	}
}

// defaultBackground ends a run of coloured cells.
func (l *line) defaultBackground() {
	if l.bg != "" {
		l.buf.WriteString(escReset)
		l.bg = ""
	}
}

// text writes s, cut to the cells left.
func (l *line) text(s string) {
	l.defaultBackground()
	s = truncate(s, l.free)
	l.buf.WriteString(s)
	l.free -= width(s)
}

// spaces writes n blank cells.
func (l *line) spaces(n int) {
	l.defaultBackground()
	for n = min(n, l.free); n > 0; n-- {
		l.buf.WriteByte(' ')
		l.free--
	}
}

// field writes s in exactly w cells, aligned right or left.
func (l *line) field(s string, w int, right bool) {
	s = truncate(s, w)
	if right {
		l.spaces(w - width(s))
		l.text(s)
		return
	}
	l.text(s)
	l.spaces(w - width(s))
}

// cell writes one heat-map cell: ESC[48;5;<colour>m and a blank, or the
// level's character in plain mode. Gaps keep the terminal's default
// background.
func (l *line) cell(esc [heatmap.Levels + 1]string, level int) {
	if l.free <= 0 {
		return
	}
	l.free--
	switch {
	case !l.colour:
		l.buf.WriteByte(plainCell(level))
		return
	case level < 0:
		l.defaultBackground()
	default:
		l.bg = esc[min(level, heatmap.Levels)]
		l.buf.WriteString(l.bg)
		l.escaped = true
	}
	l.buf.WriteByte(' ')
}

// plainCell is the character of a level in plain mode.
func plainCell(level int) byte {
	switch {
	case level < 0:
		return ' '
	case level == 0:
		return '.'
	case level > heatmap.Levels:
		return '0' + heatmap.Levels
	}
	return '0' + byte(level)
}

// rowLabel is a row's axis label: rows inside an octave get a tick.
func rowLabel(row heatmap.Row) string {
	if row.Sub {
		return "-"
	}
	return row.Label
}
