package static

import (
	"bufio"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/stream"
)

// Mean series (pg_stat_statements, block read time) have a count and a
// total per interval and no distribution, so they are drawn as a line of
// per-interval means under the heat maps, on the same time axis, never as a
// map.

// meanChartH is the height of a mean chart's plot in px.
const meanChartH = 110

// meanColour draws the mean line.
var meanColour = color.RGBA{0x1f, 0x5f, 0xbf, 0xff}

// meanSeriesOf gathers the intervals' mean series (nil when none has any).
func meanSeriesOf(ivs []stream.Interval) []*stream.MeanSeries {
	rec := &stream.Recording{}
	has := false
	for _, iv := range ivs {
		if len(iv.Means) > 0 {
			has = true
		}
	}
	if !has {
		return nil
	}
	for _, iv := range ivs {
		rec.Add(iv)
	}
	return rec.MeanSeries()
}

// meanPanel is one chart under the heat maps: a latency mean series alone,
// or up to maxPanelLines host series of one event and quantity, a line per
// instance (disk.%util of vda, sda and loop0 in one chart).
type meanPanel struct {
	series []*stream.MeanSeries
}

// maxPanelLines caps the lines of one chart: more instances (CPUs of a big
// machine) continue in the next chart.
const maxPanelLines = 6

// meanPanels groups mean series into charts, in the series' order: host
// figures (docs/host.md) by event and quantity, every other series alone.
func meanPanels(ms []*stream.MeanSeries) []meanPanel {
	var out []meanPanel
	open := map[string]int{} // event and quantity → its last chart
	for _, s := range ms {
		if !fromHost(s) {
			out = append(out, meanPanel{series: []*stream.MeanSeries{s}})
			continue
		}
		k := s.Key.Event + "\x00" + s.Key.Source + "\x00" + string(s.Quantity) + "\x00" + s.Unit.String()
		if i, ok := open[k]; ok && len(out[i].series) < maxPanelLines {
			out[i].series = append(out[i].series, s)
			continue
		}
		open[k] = len(out)
		out = append(out, meanPanel{series: []*stream.MeanSeries{s}})
	}
	return out
}

// fromHost reports whether a series is a host figure: one with a
// quantity, or a latency (disk.r_await) of the host: source only, whose
// windows are named "host:" and the host name.
func fromHost(s *stream.MeanSeries) bool {
	if !s.Quantity.IsLatency() {
		return true
	}
	for _, src := range s.Sources {
		if !strings.HasPrefix(src, "host:") {
			return false
		}
	}
	return len(s.Sources) > 0
}

// panelOf returns the chart that draws mean series j.
func panelOf(r *report, j int) int {
	for k, p := range r.Panels {
		for _, s := range p.series {
			if s == r.Means[j] {
				return k
			}
		}
	}
	return 0
}

// meanTitle heads chart k.
func meanTitle(r *report, k int) string {
	p := r.Panels[k]
	s := p.series[0]
	if len(p.series) > 1 || !s.Quantity.IsLatency() {
		key := s.Key.String()
		if len(p.series) > 1 {
			key = stream.Key{Event: s.Key.Event, Source: s.Key.Source}.String()
		}
		return fmt.Sprintf("%d. %s — %s per interval", len(r.Frames)+k+1, key, quantityName(s.Quantity))
	}
	return fmt.Sprintf("%d. %s — mean per interval (no distribution)", len(r.Frames)+k+1, s.Key)
}

// quantityNames say in words what a host figure measures, for titles and
// axis labels.
var quantityNames = map[stream.Quantity]string{stream.Percent: "percent", stream.PerSecond: "per second",
	stream.KBPerSecond: "kB per second", stream.KB: "kB", stream.Count: "average count", stream.Latency: "mean latency"}

func quantityName(q stream.Quantity) string {
	if name, ok := quantityNames[q]; ok {
		return name
	}
	return "value"
}

// formatMeanValue prints a mean of quantity q: a latency as a duration
// (v in ns), a host figure with its symbol.
func formatMeanValue(v float64, q stream.Quantity) string {
	if q.IsLatency() {
		return formatLatency(v)
	}
	if math.IsNaN(v) {
		return formatNumber(v) // no data: a dash without a unit
	}
	return formatNumber(v) + q.Symbol()
}

// meanAxis maps a latency in ns to a y offset in [0, meanChartH] from the
// plot's bottom: logarithmic when the means span more than 10×, else linear
// from zero.
type meanAxis struct {
	log    bool
	lo, hi float64 // ns at the bottom and top
	ticks  []float64
}

func newMeanAxis(p meanPanel) meanAxis {
	lo, hi, ok := math.Inf(1), math.Inf(-1), false
	for _, s := range p.series {
		if l, h, has := s.MeanRange(); has {
			lo, hi, ok = math.Min(lo, l), math.Max(hi, h), true
		}
	}
	if !ok || hi <= 0 {
		if !p.series[0].Quantity.IsLatency() {
			return meanAxis{lo: 0, hi: 1, ticks: []float64{0, 1}} // no data, or all zero: 0 – 1
		}
		return meanAxis{lo: 0, hi: 1000, ticks: []float64{0, 1000}} // no events, or all zero: 0 – 1µs
	}
	if lo > 0 && hi/lo > 10 {
		a := meanAxis{log: true, lo: math.Pow(10, math.Floor(math.Log10(lo))), hi: math.Pow(10, math.Ceil(math.Log10(hi)))}
		for v := a.lo; v <= a.hi*1.0001; v *= 10 {
			a.ticks = append(a.ticks, v)
		}
		return a
	}
	step := niceStep(hi / 4)
	a := meanAxis{lo: 0, hi: math.Ceil(hi/step) * step}
	for v := 0.0; v <= a.hi+step/2; v += step {
		a.ticks = append(a.ticks, v)
	}
	return a
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*p >= v {
			return f * p
		}
	}
	return 10 * p
}

// y returns the height above the plot's bottom of latency ns.
func (a meanAxis) y(ns float64) float64 {
	var f float64
	if a.log {
		f = math.Log(ns/a.lo) / math.Log(a.hi/a.lo)
	} else {
		f = (ns - a.lo) / (a.hi - a.lo)
	}
	return math.Min(math.Max(f, 0), 1) * meanChartH
}

// meanColours draw the lines of a chart, the first for a chart of one.
var meanColours = []color.RGBA{meanColour, {0xd9, 0x5f, 0x02, 0xff}, {0x1b, 0x9e, 0x77, 0xff}, {0xe7, 0x29, 0x8a, 0xff},
	{0x75, 0x70, 0xb3, 0xff}, {0x66, 0x66, 0x66, 0xff}}

// layoutMeanChart draws chart k at y and returns the y below it. Each
// interval with events is a short horizontal segment at its mean spanning its
// window (hover: time, mean, count); consecutive windows are joined by a
// vertical step; gaps are hatched and break the line, as do windows without
// events. A chart of several host series has a line and a legend entry per
// instance.
func layoutMeanChart(c *canvas, y float64, r *report, k int, g geometry) float64 {
	p := r.Panels[k]
	s := p.series[0]
	y += g.titleFont + 6
	c.text(g.pad, y, meanTitle(r, k), g.titleFont, anchorStart, true, inkColour)
	y += 6 + g.lineH()
	px := g.pad + g.labelW
	plotW := float64(r.Columns) * g.cellW
	axis := newMeanAxis(p)
	scale := "linear scale"
	if axis.log {
		scale = "log scale"
	}
	what := "Mean latency"
	if !s.Quantity.IsLatency() {
		what = s.Key.Event + " (" + quantityName(s.Quantity) + ")"
	}
	c.text(px, y, what+" per interval ("+scale+")", g.font, anchorStart, true, inkColour)
	if note := axisNote(r); textWidth(what+" per interval (linear scale)", g.font)+textWidth(note, g.font-1)+24 < plotW {
		c.text(px+plotW, y, note, g.font-1, anchorEnd, false, mutedColour)
	}
	if len(p.series) > 1 {
		y += g.lineH()
		x := px
		for i, ls := range p.series {
			c.rect(x, y-g.font*0.8, g.font*0.8, g.font*0.8, paint{rgb: meanColours[i]})
			name := ls.Key.Instance
			c.text(x+g.font, y, name, g.font, anchorStart, false, inkColour)
			x += g.font*2 + textWidth(name, g.font)
		}
	}
	y += 6
	bottom := y + meanChartH
	c.rect(px, y, plotW, meanChartH, paint{rgb: color.RGBA{0xff, 0xff, 0xff, 0xff}})
	c.shapes[len(c.shapes)-1].class = "mean-plot"
	for _, v := range axis.ticks {
		ty := bottom - axis.y(v)
		c.line(px-4, ty, px, ty, borderColour)
		c.text(px-6, ty+g.font*0.35, formatMeanValue(v, s.Quantity), g.font, anchorEnd, false, inkColour)
	}
	xOf := func(t time.Time) float64 {
		x := px + float64(t.Sub(r.Start))/float64(r.Width)*g.cellW
		return math.Min(math.Max(x, px), px+plotW)
	}
	for i, ls := range p.series {
		drawMeanLine(c, r, ls, meanColours[i], i == 0, xOf, axis, y, bottom)
	}
	c.frame(px, y, plotW, meanChartH, borderColour)
	axisH := drawTimeAxis(c, px, bottom, r, g)
	y = bottom + axisH
	for _, line := range panelFooterLines(p) {
		y += g.lineH()
		c.text(g.pad, y, line, g.font, anchorStart, false, mutedColour)
	}
	return y + 2*g.lineH()
}

// drawMeanLine draws one series of a chart in colour; hatch draws its gaps
// (once per chart: the series of a chart share their source's gaps).
func drawMeanLine(c *canvas, r *report, s *stream.MeanSeries, colour color.RGBA, hatch bool, xOf func(time.Time) float64, axis meanAxis, top, bottom float64) {
	prevEnd, prevY, joined := time.Time{}, 0.0, false
	for _, p := range s.Points {
		x0, x1 := xOf(p.Start), xOf(p.Start.Add(p.Duration))
		m := p.Mean(s.Unit)
		if p.Gap {
			if hatch {
				c.rect(x0, top, x1-x0, meanChartH, noDataPaint)
			}
			joined = false
			continue
		}
		if math.IsNaN(m) {
			joined = false
			continue
		}
		my := bottom - axis.y(m)
		if joined && p.Start.Equal(prevEnd) && my != prevY {
			c.line(x0, prevY, x0, my, colour)
		}
		c.shapes = append(c.shapes, shape{kind: rectShape, x: x0, y: my - 1, w: math.Max(x1-x0, 1), h: 2,
			fill: paint{rgb: colour}, class: "mean-point", title: meanPointTitle(r, s, p)})
		prevEnd, prevY, joined = p.Start.Add(p.Duration), my, true
	}
}

// meanPointTitle is the hover text of one interval: time, mean, count.
func meanPointTitle(r *report, s *stream.MeanSeries, p stream.MeanPoint) string {
	when := formatRange(p.Start, p.Start.Add(p.Duration), p.Duration, r.Relative)
	if !s.Quantity.IsLatency() {
		return when + "\n" + s.Key.String() + " " + formatMeanValue(p.Mean(s.Unit), s.Quantity)
	}
	rate := ""
	if r := p.Rate(); !math.IsNaN(r) {
		rate = " (" + formatNumber(r) + "/s)"
	}
	return when + "\nmean " + formatLatency(p.Mean(s.Unit)) + "\ncount " + formatEvents(p.Count) + rate
}

// panelFooterLines summarise a chart's series under it.
func panelFooterLines(p meanPanel) []string {
	s := p.series[0]
	if len(p.series) == 1 && s.Quantity.IsLatency() {
		return meanFooterLines(s)
	}
	var out []string
	for _, ls := range p.series {
		line := "Over the observed time: " + formatMeanValue(ls.Mean(), ls.Quantity)
		if len(p.series) > 1 {
			line = ls.Key.Instance + ": " + formatMeanValue(ls.Mean(), ls.Quantity)
		}
		if lo, hi, ok := ls.MeanRange(); ok {
			line += " · interval values " + formatMeanValue(lo, ls.Quantity) + " – " + formatMeanValue(hi, ls.Quantity)
		}
		out = append(out, line)
	}
	return append(out, "A host figure sampled each interval (docs/host.md). Hatched grey: no data.")
}

// meanFooterLines summarise a latency mean series under its chart.
func meanFooterLines(s *stream.MeanSeries) []string {
	line := "Total: " + formatEvents(s.Count) + " events"
	if rate := s.Rate(); !math.IsNaN(rate) {
		line += " (" + formatNumber(rate) + "/s)"
	}
	line += " · mean " + formatLatency(s.Mean())
	if lo, hi, ok := s.MeanRange(); ok {
		line += " · interval means " + formatLatency(lo) + " – " + formatLatency(hi)
	}
	return []string{line, "The source reports only a count and a total per interval: no percentiles, no distribution. Hatched grey: no data."}
}

// layoutMeanBlock lays out chart k on its own canvas (one inline SVG of
// the HTML page).
func layoutMeanBlock(r *report, k int, g geometry) *canvas {
	c := &canvas{w: g.blockWidth(r.Columns)}
	c.h = math.Ceil(layoutMeanChart(c, 0, r, k, g))
	return c
}

func meanAnchor(j int) string { return "mean-" + strconv.Itoa(j+1) }

// writeMeanSection writes one mean series' inline SVG; its segments carry
// native <title> tooltips (time, mean, count).
func writeMeanSection(w *bufio.Writer, r *report, j int, block *canvas) {
	fmt.Fprintf(w, `<section class="card means" id="%s"><a class="up" href="#summary">↑ summary</a>`+"\n", meanAnchor(j))
	attrs := fmt.Sprintf(` class="mean-chart" data-mean="%d" role="img" aria-label="%s"`, j,
		escapeText(meanLabel(r.Panels[j])))
	renderSVG(w, block, svgStyle{idPrefix: "m" + strconv.Itoa(j+1), attrs: attrs})
	w.WriteString("</section>\n")
}

// meanLabel says what chart p draws, for screen readers.
func meanLabel(p meanPanel) string {
	s := p.series[0]
	if len(p.series) == 1 && s.Quantity.IsLatency() {
		return "mean latency per interval of " + s.Key.String()
	}
	names := make([]string, len(p.series))
	for i, ls := range p.series {
		names[i] = ls.Key.String()
	}
	return quantityName(s.Quantity) + " per interval of " + strings.Join(names, ", ")
}
