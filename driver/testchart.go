package driver

import (
	"fmt"
	"math"
	"strings"

	"github.com/latscope/latscope/probe/iotest"
)

// chart is a latency-against-throughput chart: one point per step (or
// interval), the knee and a fitted model's curve when there are.
type chart struct {
	Points []chartPoint
	// Knee is the index of the knee's point, -1 for none.
	Knee int
	// Fit is the model's mean latency along the throughput axis.
	Fit      []xy
	FitLabel string
	// Joined draws each latency as a line through the points in order
	// (steps of rising load); otherwise the points stand alone (intervals
	// of one load).
	Joined bool
}

// chartPoint is one measurement: throughput X (per second) and its mean,
// p50 and p99 latency, µs.
type chartPoint struct{ X, Mean, P50, P99 float64 }

type xy struct{ X, Y float64 }

// ioChart draws an iotest report's steps, knee and fit.
func ioChart(rep iotest.Report) chart {
	c := chart{Knee: -1, Joined: true}
	maxN, maxX := 0, 0.0
	for _, s := range rep.Steps {
		c.Points = append(c.Points, chartPoint{X: s.IOPS, Mean: s.MeanUS, P50: s.P50US, P99: s.P99US})
		maxN, maxX = max(maxN, s.Concurrency), max(maxX, s.IOPS)
	}
	if rep.Knee != nil {
		c.Knee = rep.Knee.Index
	}
	switch {
	case rep.USL != nil:
		// Little's law turns the fitted X(N) into a mean latency N / X(N).
		for n := 1.0; n <= float64(maxN)+1e-9; n += 0.25 {
			if x := rep.USL.Throughput(n); x > 0 {
				c.Fit = append(c.Fit, xy{x, n / x * 1e6})
			}
		}
		c.FitLabel = "USL fit (mean)"
	case rep.Queue != nil:
		top := math.Min(maxX*1.05, 0.98*rep.Queue.SaturationIOPS)
		for i := 0; i <= 40; i++ {
			x := top * float64(i) / 40
			if r := rep.Queue.Latency(x); !math.IsInf(r, 0) {
				c.Fit = append(c.Fit, xy{x, r})
			}
		}
		c.FitLabel = "queueing fit (mean)"
	}
	return c
}

// Chart geometry, in SVG user units.
const (
	chartW, chartH                   = 760.0, 360.0
	chartLeft, chartRight            = 70.0, 180.0
	chartTop, chartBottom            = 20.0, 50.0
	p50Colour, p99Colour, meanColour = "#0969da", "#cf222e", "#1a7f37"
	fitColour, kneeColour            = "#8250df", "#9a6700"
)

// writeChart writes the chart as an inline SVG with a heading; x is the
// throughput axis's name. Latency is on a log axis (p99 can be many times
// p50), throughput on a linear one from 0.
func writeChart(b *strings.Builder, title, xName string, c chart) {
	fmt.Fprintf(b, `<section class="card" id="chart"><h2>%s</h2>`+"\n", esc(title))
	if len(c.Points) == 0 {
		b.WriteString("<p>No measurement to draw.</p>\n</section>\n")
		return
	}
	ax := newChartAxes(c)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s" style="max-width:100%%;height:auto;font:12px system-ui,sans-serif">`+"\n",
		chartW, chartH, chartW, chartH, esc(title))
	ax.draw(b, xName)
	if len(c.Fit) > 1 {
		writePolyline(b, ax, c.Fit, fitColour, "6 4", "fit")
	}
	if c.Knee >= 0 && c.Knee < len(c.Points) {
		k := c.Points[c.Knee]
		x := ax.x(k.X)
		fmt.Fprintf(b, `<line class="knee" x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="%s" stroke-dasharray="3 3"/>`+
			`<text x="%.1f" y="%g" fill="%s">knee</text>`+"\n",
			x, chartTop, x, chartH-chartBottom, kneeColour, x+4, chartTop+12, kneeColour)
	}
	for _, s := range []struct {
		name, colour string
		y            func(chartPoint) float64
	}{
		{"p99", p99Colour, func(p chartPoint) float64 { return p.P99 }},
		{"p50", p50Colour, func(p chartPoint) float64 { return p.P50 }},
		{"mean", meanColour, func(p chartPoint) float64 { return p.Mean }},
	} {
		pts := make([]xy, 0, len(c.Points))
		for _, p := range c.Points {
			pts = append(pts, xy{p.X, s.y(p)})
		}
		if c.Joined {
			writePolyline(b, ax, pts, s.colour, "", s.name)
		}
		for _, p := range pts {
			if p.Y > 0 {
				fmt.Fprintf(b, `<circle class="%s" cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s %s at %.0f/s</title></circle>`+"\n",
					s.name, ax.x(p.X), ax.y(p.Y), s.colour, s.name, esc(usText(p.Y)), p.X)
			}
		}
	}
	writeLegend(b, c)
	b.WriteString("</svg>\n</section>\n")
}

// chartAxes maps values to the plot: x linear from 0, y log10.
type chartAxes struct{ maxX, lo, hi float64 }

func newChartAxes(c chart) chartAxes {
	ax := chartAxes{lo: math.Inf(1), hi: 0}
	for _, p := range c.Points {
		ax.maxX = max(ax.maxX, p.X)
		for _, v := range []float64{p.Mean, p.P50, p.P99} {
			if v > 0 {
				ax.lo, ax.hi = min(ax.lo, v), max(ax.hi, v)
			}
		}
	}
	if ax.hi == 0 {
		ax.lo, ax.hi = 1, 10
	}
	ax.lo = math.Pow(10, math.Floor(math.Log10(ax.lo)))
	ax.hi = math.Pow(10, math.Ceil(math.Log10(ax.hi*1.0001)))
	if ax.maxX <= 0 {
		ax.maxX = 1
	}
	ax.maxX = niceCeil(ax.maxX * 1.05)
	return ax
}

func (a chartAxes) x(v float64) float64 {
	return chartLeft + (chartW-chartLeft-chartRight)*math.Max(0, v)/a.maxX
}

func (a chartAxes) y(us float64) float64 {
	us = math.Min(math.Max(us, a.lo), a.hi)
	f := (math.Log10(us) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	return chartH - chartBottom - f*(chartH-chartTop-chartBottom)
}

// draw writes the frame, the ticks (decades of latency, fifths of the
// throughput range) and the axis names.
func (a chartAxes) draw(b *strings.Builder, xName string) {
	left, right, top, bottom := chartLeft, chartW-chartRight, chartTop, chartH-chartBottom
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="#fff" stroke="#8c959f"/>`+"\n", left, top, right-left, bottom-top)
	for us := a.lo; us <= a.hi*1.0001; us *= 10 {
		y := a.y(us)
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#eaeef2"/><text x="%g" y="%.1f" text-anchor="end" fill="#57606a">%s</text>`+"\n",
			left, y, right, y, left-6, y+4, esc(usText(us)))
	}
	for i := 0; i <= 5; i++ {
		v := a.maxX * float64(i) / 5
		x := a.x(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#8c959f"/><text x="%.1f" y="%g" text-anchor="middle" fill="#57606a">%s</text>`+"\n",
			x, bottom, x, bottom+4, x, bottom+18, compactCount(v))
	}
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle" fill="#1f2328">%s</text>`+"\n", (left+right)/2, chartH-10, esc(xName))
	fmt.Fprintf(b, `<text x="14" y="%g" text-anchor="middle" fill="#1f2328" transform="rotate(-90 14 %g)">latency (log)</text>`+"\n",
		(top+bottom)/2, (top+bottom)/2)
}

func writePolyline(b *strings.Builder, ax chartAxes, pts []xy, colour, dash, class string) {
	var p strings.Builder
	for _, v := range pts {
		if v.Y > 0 {
			fmt.Fprintf(&p, "%.1f,%.1f ", ax.x(v.X), ax.y(v.Y))
		}
	}
	extra := ""
	if dash != "" {
		extra = ` stroke-dasharray="` + dash + `"`
	}
	fmt.Fprintf(b, `<polyline class="%s" points="%s" fill="none" stroke="%s" stroke-width="1.8"%s/>`+"\n",
		class, strings.TrimSpace(p.String()), colour, extra)
}

func writeLegend(b *strings.Builder, c chart) {
	x, y := chartW-chartRight+16, chartTop+8
	items := [][2]string{{"p99", p99Colour}, {"p50", p50Colour}, {"mean", meanColour}}
	if len(c.Fit) > 1 {
		items = append(items, [2]string{c.FitLabel, fitColour})
	}
	if c.Knee >= 0 {
		items = append(items, [2]string{"saturation knee", kneeColour})
	}
	for _, it := range items {
		fmt.Fprintf(b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"/><text x="%g" y="%g" fill="#1f2328">%s</text>`+"\n",
			x, y, x+18, y, it[1], x+24, y+4, esc(wrapLabel(it[0])))
		y += 20
	}
}

// wrapLabel shortens a legend label to fit right of the plot.
func wrapLabel(s string) string {
	if r := []rune(s); len(r) > 24 {
		return string(r[:23]) + "…"
	}
	return s
}

// niceCeil rounds v up to a round multiple of a power of ten whose fifths
// make round ticks.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// compactCount prints a tick count: 0, 500, 1.5k, 20k.
func compactCount(v float64) string {
	if v >= 1000 {
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v/1000), "0"), ".") + "k"
	}
	return fmt.Sprintf("%.0f", v)
}
