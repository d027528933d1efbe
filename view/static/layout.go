package static

import (
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// The layout is a display list of rectangles, lines and text in pixels that
// the SVG and PNG renderers both draw, so every format shows the same
// picture.

type shapeKind int

const (
	rectShape shapeKind = iota
	lineShape
	textShape
)

type textAnchor int

const (
	anchorStart textAnchor = iota
	anchorMiddle
	anchorEnd
)

// paint is a fill: a colour, or the hatched "no data" pattern.
type paint struct {
	rgb    color.RGBA
	noData bool
}

// shape is one drawing primitive. Rects and lines use x, y, w, h (a line
// runs from (x, y) to (x+w, y+h)); text uses x, y as its baseline point.
type shape struct {
	kind   shapeKind
	x, y   float64
	w, h   float64
	fill   paint
	stroke color.RGBA // alpha 0: no stroke
	// cell marks a heat-map cell run; level is its colour level.
	cell  bool
	level int
	title string // hover text of a cell run (standalone SVG)
	class string // SVG class, e.g. "plot frequency" on a map's background

	text   string
	size   float64
	anchor textAnchor
	bold   bool
}

// mapGeom is where one heat map's cells are, for tooltips and tests.
type mapGeom struct {
	Series int
	Mode   heatmap.Mode
	X, Y   float64
	CellW  float64
	CellH  float64
	Cols   int
	Rows   int
}

// canvas is a laid-out picture.
type canvas struct {
	w, h   float64
	shapes []shape
	maps   []mapGeom
}

func (c *canvas) rect(x, y, w, h float64, fill paint) {
	c.shapes = append(c.shapes, shape{kind: rectShape, x: x, y: y, w: w, h: h, fill: fill})
}

func (c *canvas) frame(x, y, w, h float64, stroke color.RGBA) {
	c.shapes = append(c.shapes, shape{kind: rectShape, x: x, y: y, w: w, h: h, stroke: stroke})
}

func (c *canvas) line(x1, y1, x2, y2 float64, stroke color.RGBA) {
	c.shapes = append(c.shapes, shape{kind: lineShape, x: x1, y: y1, w: x2 - x1, h: y2 - y1, stroke: stroke})
}

func (c *canvas) text(x, y float64, s string, size float64, a textAnchor, bold bool, col color.RGBA) {
	c.shapes = append(c.shapes, shape{kind: textShape, x: x, y: y, text: s, size: size, anchor: a, bold: bold, fill: paint{rgb: col}})
}

// Colours of everything that is not a heat-map level.
var (
	inkColour    = color.RGBA{0x1f, 0x23, 0x28, 0xff}
	mutedColour  = color.RGBA{0x57, 0x60, 0x6a, 0xff}
	borderColour = color.RGBA{0x8c, 0x95, 0x9f, 0xff}
	// The "no data" hatching: light grey with darker diagonal lines.
	noDataBase  = color.RGBA{0xe8, 0xe8, 0xe8, 0xff}
	noDataHatch = color.RGBA{0xa8, 0xa8, 0xa8, 0xff}
	noDataPaint = paint{noData: true}
)

// levelColour returns the RGB of a colour level of a mode.
func levelColour(m heatmap.Mode, level int) color.RGBA {
	p := heatmap.Palette(m)
	level = min(max(level, 0), heatmap.Levels)
	r, g, b := heatmap.RGB(p[level])
	return color.RGBA{r, g, b, 0xff}
}

// geometry sizes a layout.
type geometry struct {
	cellW, cellH float64
	font         float64 // body text size in px
	titleFont    float64
	pad          float64
	labelW       float64 // row label column
	legendW      float64
	minWidth     float64
	titles       bool    // add hover titles to cell runs
	maxHeight    float64 // leave out series past this height (0: no limit)
}

// vectorGeometry is used by SVG and HTML: the plot is at most 940 px wide so
// a series fits the page's column unscaled; the browser scales it down on a
// narrow window.
func vectorGeometry(cols int) geometry {
	cw := 32.0
	if cols > 0 {
		cw = math.Min(32, 940/float64(cols))
		cw = math.Max(cw, minPlotW/float64(cols)) // a few columns still make a readable map
	}
	return geometry{cellW: cw, cellH: 14, font: 12, titleFont: 15, pad: 12, labelW: 64, legendW: 170, minWidth: 820}
}

// rasterGeometry is used by PNG: whole pixels per column, 2 to 32.
func rasterGeometry(cols int) geometry {
	cw := 32
	if cols > 0 {
		cw = min(max(1200/cols, 2), 32)
		cw = max(cw, (minPlotW+cols-1)/cols)
	}
	return geometry{cellW: float64(cw), cellH: 12, font: 12, titleFont: 15, pad: 12, labelW: 64, legendW: 170, minWidth: 820}
}

// minPlotW is the narrowest map in px: few columns get wider cells.
const minPlotW = 240

func (g geometry) lineH() float64 { return math.Round(g.font * 1.45) }

// textWidth estimates the width of s in the proportional body font.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * size * 0.58
}

// blockWidth is the width of every series block.
func (g geometry) blockWidth(cols int) float64 {
	w := g.pad + g.labelW + float64(cols)*g.cellW + 16 + g.legendW + g.pad
	return math.Ceil(math.Max(w, g.minWidth))
}

// layoutDocument lays out the whole recording: a header and every series
// stacked (the SVG and PNG layout).
func layoutDocument(r *report, g geometry) *canvas {
	c := &canvas{w: g.blockWidth(r.Columns)}
	y := g.pad + g.titleFont + 4
	c.text(g.pad, y, r.Title, g.titleFont+3, anchorStart, true, inkColour)
	y += 8
	for _, line := range headerLines(r) {
		y += g.lineH()
		c.text(g.pad, y, line, g.font, anchorStart, false, mutedColour)
	}
	y += g.lineH()
	if r.Empty() {
		y += g.lineH()
		c.text(g.pad, y, "No data: the input held no intervals with a duration.", g.font+2, anchorStart, false, inkColour)
		c.h = math.Ceil(y + g.pad)
		return c
	}
	truncated := false
	for i := range r.Frames {
		shapes, maps := len(c.shapes), len(c.maps)
		next := layoutSeries(c, y, r, i, g)
		if g.maxHeight > 0 && next > g.maxHeight && i > 0 {
			c.shapes, c.maps = c.shapes[:shapes], c.maps[:maps]
			y += g.lineH()
			c.text(g.pad, y, fmt.Sprintf("%s not drawn: the image would be too tall. The HTML output shows every series.",
				plural(len(r.Frames)-i, "more series", "more series")), g.font+1, anchorStart, true, inkColour)
			y += g.lineH()
			truncated = true
			break
		}
		y = next
	}
	for j := 0; j < len(r.Panels) && !truncated; j++ {
		shapes, maps := len(c.shapes), len(c.maps)
		next := layoutMeanChart(c, y, r, j, g)
		if g.maxHeight > 0 && next > g.maxHeight && (j > 0 || len(r.Frames) > 0) {
			c.shapes, c.maps = c.shapes[:shapes], c.maps[:maps]
			y += g.lineH()
			c.text(g.pad, y, fmt.Sprintf("%s not drawn: the image would be too tall. The HTML output shows every series.",
				plural(len(r.Panels)-j, "more mean chart", "more mean charts")), g.font+1, anchorStart, true, inkColour)
			y += g.lineH()
			break
		}
		y = next
	}
	c.h = math.Ceil(y)
	return c
}

// layoutSeriesBlock lays out one series on its own canvas (one inline SVG of
// the HTML page).
func layoutSeriesBlock(r *report, i int, g geometry) *canvas {
	c := &canvas{w: g.blockWidth(r.Columns)}
	c.h = math.Ceil(layoutSeries(c, 0, r, i, g))
	return c
}

// headerLines describe the recording under the title.
func headerLines(r *report) []string {
	if r.Empty() {
		return nil
	}
	var parts []string
	if r.Relative {
		parts = append(parts, fmt.Sprintf("%s of relative time (the input had no wall clock)", formatSpan(r.End().Sub(r.Start))))
	} else {
		parts = append(parts, "From "+formatRange(r.Start, r.End(), r.Width, false)+" "+zoneName(r.Start))
	}
	parts = append(parts, fmt.Sprintf("%d columns of %s", r.Columns, formatSpan(r.Width)))
	parts = append(parts, plural(len(r.Frames), "series", "series"))
	if len(r.Means) > 0 {
		parts = append(parts, plural(len(r.Means), "mean series", "mean series"))
	}
	lines := []string{strings.Join(parts, " · ")}
	if r.Width != r.Asked {
		lines = append(lines, fmt.Sprintf("Columns widened from %s to %s to fit at most %d columns.",
			formatSpan(r.Asked), formatSpan(r.Width), r.Columns))
	}
	if r.Skipped > 0 {
		lines = append(lines, fmt.Sprintf("%s skipped (no duration, or a different clock kind from the first).",
			plural(r.Skipped, "interval", "intervals")))
	}
	return lines
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// layoutSeries draws series i at y and returns the y below it.
func layoutSeries(c *canvas, y float64, r *report, i int, g geometry) float64 {
	f := &r.Frames[i]
	y += g.titleFont + 6
	c.text(g.pad, y, fmt.Sprintf("%d. %s", i+1, f.Label), g.titleFont, anchorStart, true, inkColour)
	y += 6
	for _, m := range []heatmap.Mode{heatmap.Frequency, heatmap.Intensity} {
		y = layoutMap(c, y, r, i, m, g)
	}
	for _, line := range footerLines(r, i) {
		y += g.lineH()
		c.text(g.pad, y, line, g.font, anchorStart, false, mutedColour)
	}
	return y + 2*g.lineH()
}

// mapHeader is the title of a map.
func mapHeader(m heatmap.Mode) string {
	if m == heatmap.Intensity {
		return "Intensity: time waited per second in each latency bucket"
	}
	return "Frequency: events per second in each latency bucket"
}

// layoutMap draws one heat map with its header, row labels, time axis and
// legend at y, returning the y below it.
func layoutMap(c *canvas, y float64, r *report, i int, mode heatmap.Mode, g geometry) float64 {
	f := &r.Frames[i]
	m := mapOf(f, mode)
	y += g.lineH()
	px := g.pad + g.labelW
	plotW := float64(r.Columns) * g.cellW
	c.text(px, y, mapHeader(mode), g.font, anchorStart, true, inkColour)
	if note := axisNote(r); textWidth(mapHeader(mode), g.font)+textWidth(note, g.font-1)+24 < plotW {
		c.text(px+plotW, y, note, g.font-1, anchorEnd, false, mutedColour)
	}
	y += 6
	rows := len(f.Rows)
	plotH := float64(rows) * g.cellH
	geom := mapGeom{Series: i, Mode: mode, X: px, Y: y, CellW: g.cellW, CellH: g.cellH, Cols: r.Columns, Rows: rows}
	c.maps = append(c.maps, geom)
	c.rect(px, y, plotW, plotH, paint{rgb: levelColour(mode, heatmap.LevelZero)})
	c.shapes[len(c.shapes)-1].class = "plot " + mode.String()
	drawCells(c, geom, f, m, r, g.titles)
	c.frame(px, y, plotW, plotH, borderColour)
	drawMarks(c, px, y, plotW, plotH, r, g)
	for row, rw := range f.Rows {
		if rw.Sub { // a row inside an octave: a tick at its lower edge
			edge := geom.rowY(row) + g.cellH
			c.line(px-4, edge, px, edge, borderColour)
			continue
		}
		cy := geom.rowY(row) + g.cellH/2 + g.font*0.35
		c.text(px-6, cy, rw.Label, g.font, anchorEnd, false, inkColour)
	}
	axisH := drawTimeAxis(c, px, y+plotH, r, g)
	legendH := drawLegend(c, px+plotW+16, y, m, r.Frames[i].Scale, g)
	return y + math.Max(plotH+axisH, legendH)
}

func mapOf(f *heatmap.Frame, mode heatmap.Mode) *heatmap.Map {
	if mode == heatmap.Intensity {
		return &f.Intensity
	}
	return &f.Frequency
}

// rowY is the top of row r (row 0 is the bottom, shortest latencies).
func (m mapGeom) rowY(r int) float64 { return m.Y + float64(m.Rows-1-r)*m.CellH }

// run is a stretch of equal-level cells in one row: columns [from, to).
type run struct {
	row, from, to, level int
}

// cellRuns merges each row's equal-level columns into runs, skipping the
// zero level (the plot background), ordered by level so that renderers can
// group runs of one colour.
func cellRuns(m *heatmap.Map, rows int) []run {
	byLevel := make([][]run, heatmap.Levels+2) // index level+1: gap first
	for r := range rows {
		start, cur := 0, levelAt(m, 0, r)
		for col := 1; col <= len(m.Levels); col++ {
			l := math.MinInt
			if col < len(m.Levels) {
				l = levelAt(m, col, r)
			}
			if l == cur {
				continue
			}
			if cur != heatmap.LevelZero && cur >= heatmap.LevelGap && cur <= heatmap.Levels {
				byLevel[cur+1] = append(byLevel[cur+1], run{row: r, from: start, to: col, level: cur})
			}
			start, cur = col, l
		}
	}
	var out []run
	for _, rs := range byLevel {
		out = append(out, rs...)
	}
	return out
}

func levelAt(m *heatmap.Map, col, row int) int {
	if col < len(m.Levels) && row < len(m.Levels[col]) {
		return m.Levels[col][row]
	}
	return heatmap.LevelZero
}

// drawCells adds the map's cell runs.
func drawCells(c *canvas, geom mapGeom, f *heatmap.Frame, m *heatmap.Map, r *report, titles bool) {
	for _, rn := range cellRuns(m, geom.Rows) {
		s := shape{kind: rectShape, cell: true, level: rn.level,
			x: geom.X + float64(rn.from)*geom.CellW, y: geom.rowY(rn.row),
			w: float64(rn.to-rn.from) * geom.CellW, h: geom.CellH}
		if rn.level == heatmap.LevelGap {
			s.fill = noDataPaint
		} else {
			s.fill = paint{rgb: levelColour(m.Mode, rn.level)}
		}
		if titles {
			s.title = runTitle(rn, f, m, r)
		}
		c.shapes = append(c.shapes, s)
	}
}

// runTitle is the hover text of a run: times, bucket and value range.
func runTitle(rn run, f *heatmap.Frame, m *heatmap.Map, r *report) string {
	start := r.Start.Add(time.Duration(rn.from) * r.Width)
	end := r.Start.Add(time.Duration(rn.to) * r.Width)
	parts := []string{formatRange(start, end, r.Width, r.Relative), "bucket " + bucketRange(f.Rows[rn.row])}
	if rn.level == heatmap.LevelGap {
		return strings.Join(append(parts, "no data"), "\n")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for col := rn.from; col < rn.to; col++ {
		v := m.Values[col][rn.row]
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	unit := " events/s"
	if m.Mode == heatmap.Intensity {
		unit = " waited/s"
	}
	val := formatValue(m.Mode, lo)
	if hi != lo {
		val += " – " + formatValue(m.Mode, hi)
	}
	return strings.Join(append(parts, val+unit), "\n")
}

// tick is one time-axis label.
type tick struct {
	x         float64
	label     string
	date      string // set on the first tick and when the date changes
	subsecond bool
}

// tickSteps are the candidate tick spacings.
var tickSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
	20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
	15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour,
	6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour,
	14 * 24 * time.Hour, 28 * 24 * time.Hour,
}

// timeTicks picks round tick times at least minGap px apart over the
// columns, aligned to the local day (wall clock) or to zero (relative).
func timeTicks(r *report, cellW, minGap float64) []tick {
	if r.Columns == 0 || r.Width <= 0 || cellW <= 0 {
		return nil
	}
	pxPerNs := cellW / float64(r.Width)
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if float64(s)*pxPerNs >= minGap {
			step = s
			break
		}
	}
	base := stream.RelativeStart
	if !r.Relative {
		y, mo, d := r.Start.Date()
		base = time.Date(y, mo, d, 0, 0, 0, 0, r.Start.Location())
	}
	end := r.End()
	n := r.Start.Sub(base) / step
	t := base.Add(n * step)
	if t.Before(r.Start) {
		t = t.Add(step)
	}
	layout := "15:04"
	if step%time.Minute != 0 {
		layout = "15:04:05"
	}
	if step%time.Second != 0 {
		layout = "15:04:05.000"
	}
	var ticks []tick
	prevDate := ""
	limit := int(float64(r.Columns)*cellW/minGap) + 2
	for ; !t.After(end) && len(ticks) < limit; t = t.Add(step) {
		tk := tick{x: float64(t.Sub(r.Start)) * pxPerNs}
		if r.Relative {
			tk.label = relativeLabel(t.Sub(stream.RelativeStart))
		} else {
			tk.label = t.Format(layout)
			if d := t.Format("2006-01-02"); d != prevDate {
				tk.date, prevDate = d, d
			}
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// markColour draws step boundaries: dark enough over any level.
var markColour = color.RGBA{0x6e, 0x40, 0xc9, 0xff}

// drawMarks draws each mark inside the plot's time span as a vertical line
// across the plot, labelled at its top.
func drawMarks(c *canvas, px, y, plotW, plotH float64, r *report, g geometry) {
	if r.Width <= 0 {
		return
	}
	pxPerNs := g.cellW / float64(r.Width)
	for _, m := range r.Marks {
		x := px + float64(m.At.Sub(r.Start))*pxPerNs
		if x < px || x > px+plotW {
			continue
		}
		c.line(x, y, x, y+plotH, markColour)
		c.text(x+2, y+g.font, m.Label, g.font-1, anchorStart, true, markColour)
	}
}

// drawTimeAxis draws ticks and labels under a plot and returns its height.
func drawTimeAxis(c *canvas, px, y float64, r *report, g geometry) float64 {
	plotW := float64(r.Columns) * g.cellW
	lh := g.lineH()
	for _, tk := range timeTicks(r, g.cellW, 110) {
		x := px + tk.x
		label := tk.label
		if w := math.Max(textWidth(label, g.font), textWidth(tk.date, g.font)); x+w/2 > px+plotW+12 {
			continue // would run into the legend
		}
		c.line(x, y, x, y+4, borderColour)
		c.text(x, y+4+g.font, label, g.font, anchorMiddle, false, mutedColour)
		if tk.date != "" {
			c.text(x, y+4+g.font+lh-2, tk.date, g.font, anchorMiddle, false, mutedColour)
		}
	}
	return 4 + g.font + lh + 4
}

// axisNote says what the columns are, right of each map's header.
func axisNote(r *report) string {
	if r.Relative {
		return "columns of " + formatSpan(r.Width) + ", relative time"
	}
	return "columns of " + formatSpan(r.Width) + ", times " + zoneName(r.Start)
}

// drawLegend draws the colour legend of a map at (x, y) and returns its
// height.
func drawLegend(c *canvas, x, y float64, m *heatmap.Map, scale heatmap.Scale, g geometry) float64 {
	lh := g.lineH()
	sw := g.font
	unit := "events/s"
	if m.Mode == heatmap.Intensity {
		unit = "time waited/s"
	}
	yy := y + g.font
	c.text(x, yy, unit+" ("+scale.String()+")", g.font, anchorStart, true, inkColour)
	entry := func(fill paint, label string) {
		yy += lh
		c.rect(x, yy-sw+2, sw, sw, fill)
		c.frame(x, yy-sw+2, sw, sw, borderColour)
		c.text(x+sw+6, yy, label, g.font, anchorStart, false, inkColour)
	}
	entry(noDataPaint, "no data")
	entry(paint{rgb: levelColour(m.Mode, heatmap.LevelZero)}, "0")
	for l, label := range levelRanges(m, scale) {
		if label != "" {
			entry(paint{rgb: levelColour(m.Mode, l)}, label)
		}
	}
	yy += lh
	c.text(x, yy, "max "+formatValue(m.Mode, m.Max), g.font, anchorStart, false, mutedColour)
	yy += lh
	c.text(x, yy, "max column sum "+formatValue(m.Mode, m.MaxColumnSum), g.font, anchorStart, false, mutedColour)
	return yy - y + 6
}

// levelRanges labels levels 1..6 with the values they cover (index 0 and
// levels that cannot occur stay empty).
func levelRanges(m *heatmap.Map, scale heatmap.Scale) [heatmap.Levels + 1]string {
	var out [heatmap.Levels + 1]string
	if m.Max <= 0 {
		return out
	}
	if scale == heatmap.Log && m.MinNonZero > 0 {
		if m.Max <= m.MinNonZero {
			out[heatmap.Levels] = formatValue(m.Mode, m.Max)
			return out
		}
		ratio := m.Max / m.MinNonZero
		for l := 1; l <= heatmap.Levels; l++ {
			lo := m.MinNonZero * math.Pow(ratio, float64(l-1)/heatmap.Levels)
			hi := m.MinNonZero * math.Pow(ratio, float64(l)/heatmap.Levels)
			out[l] = formatValue(m.Mode, lo) + " – " + formatValue(m.Mode, hi)
		}
		return out
	}
	for l := 1; l <= heatmap.Levels; l++ {
		lo := m.Max * float64(l-1) / heatmap.Levels
		hi := m.Max * float64(l) / heatmap.Levels
		out[l] = formatValue(m.Mode, lo) + " – " + formatValue(m.Mode, hi)
	}
	return out
}

// footerLines are the statistics under a series' maps.
func footerLines(r *report, i int) []string {
	f, s := &r.Frames[i], r.Series[i]
	st := f.Stats
	waited := s.Unit.Nanos(s.Total.Sum)
	kind := "estimated from bucket midpoints"
	if st.SumExact {
		kind = "exact"
	}
	lines := []string{fmt.Sprintf("Total: %s events · mean %s · p50 %s · p99 %s · time waited %s (%s)",
		formatEvents(st.Events), formatLatency(st.AvgLatency), formatLatency(st.P50), formatLatency(st.P99),
		formatLatency(waited), kind)}
	if !st.LatestEnd.IsZero() {
		end := st.LatestEnd.Format("2006-01-02 15:04:05")
		if st.Relative {
			end = relativeLabel(st.LatestEnd.Sub(stream.RelativeStart))
		}
		lines = append(lines, fmt.Sprintf("Latest interval (%s ending %s): %s events · mean %s · p50 %s · p99 %s",
			formatSpan(time.Duration(st.LatestSeconds*float64(time.Second))), end, formatEvents(st.LatestEvents),
			formatLatency(st.LatestAvg), formatLatency(st.LatestP50), formatLatency(st.LatestP99)))
	}
	scale := fmt.Sprintf("Colour: %s scale, %d levels up to each map's maximum; hatched grey: no data.", f.Scale, heatmap.Levels)
	if st.TopCapped {
		scale += " The source's top bucket has no upper bound: it is drawn as [edge, 2·edge)."
	}
	return append(lines, scale)
}
