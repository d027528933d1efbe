package static

import (
	"bufio"
	"fmt"
	"image/color"
	"math"
	"strconv"
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

// meanTitle heads mean chart j.
func meanTitle(r *report, j int) string {
	if q := r.Means[j].Quantity; !q.IsLatency() {
		return fmt.Sprintf("%d. %s — %s per interval", len(r.Frames)+j+1, r.Means[j].Key, quantityName(q))
	}
	return fmt.Sprintf("%d. %s — mean per interval (no distribution)", len(r.Frames)+j+1, r.Means[j].Key)
}

// quantityName says in words what a host figure measures, for titles and
// axis labels.
func quantityName(q stream.Quantity) string {
	switch q {
	case stream.Percent:
		return "percent"
	case stream.PerSecond:
		return "per second"
	case stream.KBPerSecond:
		return "kB per second"
	case stream.KB:
		return "kB"
	case stream.Count:
		return "average count"
	}
	return "value"
}

// formatMeanValue prints a mean of quantity q: a latency as a duration
// (v in ns), a host figure with its symbol.
func formatMeanValue(v float64, q stream.Quantity) string {
	if q.IsLatency() {
		return formatLatency(v)
	}
	sym := q.Symbol()
	if sym != "" && sym != "%" && sym != "/s" {
		sym = " " + sym
	}
	return formatNumber(v) + sym
}

// meanAxis maps a latency in ns to a y offset in [0, meanChartH] from the
// plot's bottom: logarithmic when the means span more than 10×, else linear
// from zero.
type meanAxis struct {
	log    bool
	lo, hi float64 // ns at the bottom and top
	ticks  []float64
}

func newMeanAxis(s *stream.MeanSeries) meanAxis {
	lo, hi, ok := s.MeanRange()
	if !ok || hi <= 0 {
		if !s.Quantity.IsLatency() {
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

// layoutMeanChart draws mean series j at y and returns the y below it. Each
// interval with events is a short horizontal segment at its mean spanning its
// window (hover: time, mean, count); consecutive windows are joined by a
// vertical step; gaps are hatched and break the line, as do windows without
// events.
func layoutMeanChart(c *canvas, y float64, r *report, j int, g geometry) float64 {
	s := r.Means[j]
	y += g.titleFont + 6
	c.text(g.pad, y, meanTitle(r, j), g.titleFont, anchorStart, true, inkColour)
	y += 6 + g.lineH()
	px := g.pad + g.labelW
	plotW := float64(r.Columns) * g.cellW
	axis := newMeanAxis(s)
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
	prevEnd, prevY, joined := time.Time{}, 0.0, false
	for _, p := range s.Points {
		x0, x1 := xOf(p.Start), xOf(p.Start.Add(p.Duration))
		m := p.Mean(s.Unit)
		if p.Gap {
			c.rect(x0, y, x1-x0, meanChartH, noDataPaint)
			joined = false
			continue
		}
		if math.IsNaN(m) {
			joined = false
			continue
		}
		my := bottom - axis.y(m)
		if joined && p.Start.Equal(prevEnd) && my != prevY {
			c.line(x0, prevY, x0, my, meanColour)
		}
		c.shapes = append(c.shapes, shape{kind: rectShape, x: x0, y: my - 1, w: math.Max(x1-x0, 1), h: 2,
			fill: paint{rgb: meanColour}, class: "mean-point", title: meanPointTitle(r, s, p)})
		prevEnd, prevY, joined = p.Start.Add(p.Duration), my, true
	}
	c.frame(px, y, plotW, meanChartH, borderColour)
	axisH := drawTimeAxis(c, px, bottom, r, g)
	y = bottom + axisH
	for _, line := range meanFooterLines(s) {
		y += g.lineH()
		c.text(g.pad, y, line, g.font, anchorStart, false, mutedColour)
	}
	return y + 2*g.lineH()
}

// meanPointTitle is the hover text of one interval: time, mean, count.
func meanPointTitle(r *report, s *stream.MeanSeries, p stream.MeanPoint) string {
	when := formatRange(p.Start, p.Start.Add(p.Duration), p.Duration, r.Relative)
	if !s.Quantity.IsLatency() {
		return when + "\n" + s.Key.Event + " " + formatMeanValue(p.Mean(s.Unit), s.Quantity)
	}
	rate := ""
	if r := p.Rate(); !math.IsNaN(r) {
		rate = " (" + formatNumber(r) + "/s)"
	}
	return when + "\nmean " + formatLatency(p.Mean(s.Unit)) + "\ncount " + formatEvents(p.Count) + rate
}

// meanFooterLines summarise a mean series under its chart.
func meanFooterLines(s *stream.MeanSeries) []string {
	if !s.Quantity.IsLatency() {
		line := "Over the observed time: " + formatMeanValue(s.Mean(), s.Quantity)
		if lo, hi, ok := s.MeanRange(); ok {
			line += " · interval values " + formatMeanValue(lo, s.Quantity) + " – " + formatMeanValue(hi, s.Quantity)
		}
		return []string{line, "A host figure sampled each interval (docs/host.md). Hatched grey: no data."}
	}
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

// layoutMeanBlock lays out mean series j on its own canvas (one inline SVG
// of the HTML page).
func layoutMeanBlock(r *report, j int, g geometry) *canvas {
	c := &canvas{w: g.blockWidth(r.Columns)}
	c.h = math.Ceil(layoutMeanChart(c, 0, r, j, g))
	return c
}

func meanAnchor(j int) string { return "mean-" + strconv.Itoa(j+1) }

// writeMeanSection writes one mean series' inline SVG; its segments carry
// native <title> tooltips (time, mean, count).
func writeMeanSection(w *bufio.Writer, r *report, j int, block *canvas) {
	fmt.Fprintf(w, `<section class="card means" id="%s"><a class="up" href="#summary">↑ summary</a>`+"\n", meanAnchor(j))
	attrs := fmt.Sprintf(` class="mean-chart" data-mean="%d" role="img" aria-label="%s"`, j,
		escapeText("mean latency per interval of "+r.Means[j].Key.String()))
	renderSVG(w, block, svgStyle{idPrefix: "m" + strconv.Itoa(j+1), attrs: attrs})
	w.WriteString("</section>\n")
}
