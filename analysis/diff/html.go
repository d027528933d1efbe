package diff

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"

	"github.com/latscope/latscope/internal/htmlpage"
)

const pageCSS = `body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:2em;border-top:1px solid #ccc;padding-top:.8em}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #eee}
th:first-child,td:first-child{text-align:left}.sig{color:#b2182b;font-weight:bold}.note{color:#555;font-size:.9em}
svg{display:block;margin:.5em 0}svg text{font:11px system-ui,sans-serif}
`

// WriteHTML writes a self-contained page (no script): the summary table,
// then per series its percentiles, the bucket-by-bucket bars of both
// sides, a diverging strip of the share difference B − A per bucket and,
// when both sides have windows, the difference heat map over aligned time.
func WriteHTML(w io.Writer, r *Result) error {
	bw := bufio.NewWriter(w)
	title := "latscope diff: " + r.A.Name + " vs " + r.B.Name
	htmlpage.WriteHead(bw, html.EscapeString(title), pageCSS)
	fmt.Fprintf(bw, "<h1>%s</h1>\n<p>%s<br>%s<br>shift marked at α = %g with %s; percentile intervals %g %%</p>\n",
		html.EscapeString(title), html.EscapeString(sideLine("A", r.A)), html.EscapeString(sideLine("B", r.B)), r.Alpha,
		html.EscapeString(r.correctionText()), 100*r.Level)
	writeSummaryTable(bw, r)
	for _, s := range r.Series {
		writeSeriesHTML(bw, s, r.Level)
	}
	fmt.Fprintf(bw, "<p class=\"note\">method: %s</p>\n</body>\n</html>\n", html.EscapeString(r.Method))
	return bw.Flush()
}

func writeSummaryTable(bw *bufio.Writer, r *Result) {
	bw.WriteString("<table><tr><th>series</th><th>in</th><th>events A</th><th>events B</th><th>rate A/s</th><th>rate B/s</th><th>rate</th><th>waited</th>")
	for _, q := range Quantiles {
		fmt.Fprintf(bw, "<th>%s</th>", qName(q))
	}
	bw.WriteString("<th>factor</th><th>p adj</th><th>shift</th></tr>\n")
	for _, s := range r.Series {
		fmt.Fprintf(bw, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>",
			html.EscapeString(s.Name()), s.In, number(s.CountA, "%.0f"), number(s.CountB, "%.0f"), number(s.RateA, "%.1f"),
			number(s.RateB, "%.1f"), times(s.RateRatio), times(s.TimeRatio))
		for _, p := range s.Percentile {
			fmt.Fprintf(bw, "<td>%s</td>", times(p.Ratio))
		}
		padj := "-"
		if s.Test != nil {
			padj = pValue(s.Test.PAdjusted)
		}
		fmt.Fprintf(bw, "<td>%s</td><td>%s</td><td%s>%s</td></tr>\n", times(s.Factor), padj, sigClass(s), html.EscapeString(s.Mark()))
	}
	bw.WriteString("</table>\n")
}

func sigClass(s Series) string {
	if s.Significant {
		return ` class="sig"`
	}
	return ""
}

func writeSeriesHTML(bw *bufio.Writer, s Series, level float64) {
	fmt.Fprintf(bw, "<h2>%s <span%s>%s</span></h2>\n", html.EscapeString(s.Name()), sigClass(s), html.EscapeString(s.Mark()))
	fmt.Fprintf(bw, "<table><tr><th></th><th>A</th><th>%g %% interval</th><th>B</th><th>%g %% interval</th><th>B/A</th><th>interval</th></tr>\n", 100*level, 100*level)
	for _, p := range s.Percentile {
		fmt.Fprintf(bw, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", qName(p.Q),
			latency(p.A), interval(latency(p.ALow), latency(p.AHigh)), latency(p.B), interval(latency(p.BLow), latency(p.BHigh)),
			times(p.Ratio), interval(times(p.RatioLo), times(p.RatioHi)))
	}
	bw.WriteString("</table>\n")
	if t := s.Test; t != nil {
		fmt.Fprintf(bw, "<p class=\"note\">χ² %s on %d df (%d cells), dispersion %s on %d df, F %s, p %s, adjusted %s; latency factor B/A %s<br>grid: %s</p>\n",
			number(t.ChiSquare, "%.4g"), t.DF, t.Cells, number(t.Dispersion, "%.3g"), t.DispersionDF, number(t.F, "%.3g"),
			pValue(t.P), pValue(t.PAdjusted), times(s.Factor), html.EscapeString(s.Grid))
	}
	if len(s.Cells) == 0 {
		return
	}
	writeBars(bw, s.Cells)
	writeStrip(bw, s.Cells)
	if s.Timeline != nil {
		writeTimeline(bw, s)
	}
}

const (
	barColourA = "#4a7ab5"
	barColourB = "#e08a2c"
)

// fit returns the size of each of n marks sharing about total pixels,
// between least and most, and how many marks one label spans (labels need
// room pixels).
func fit(n, total, least, most, room int) (size, every int) {
	size = max(least, min(most, total/max(1, n)))
	return size, (room + size - 1) / size
}

// writeBars draws each common bucket's share of A and of B side by side.
func writeBars(bw *bufio.Writer, cells []Cell) {
	const plotH, top, bottom, left = 160, 4, 44, 40
	cellW, every := fit(len(cells), 1200, 4, 36, 32)
	barW := max(1, (cellW-4)/2)
	maxShare := 0.0
	for _, c := range cells {
		maxShare = math.Max(maxShare, math.Max(finite(c.ShareA), finite(c.ShareB)))
	}
	if maxShare == 0 {
		return
	}
	width := left + cellW*len(cells) + 10
	fmt.Fprintf(bw, "<p class=\"note\">Share of events per bucket of the common grid: <span style=\"color:%s\">■ A</span> <span style=\"color:%s\">■ B</span> (top of the scale %.1f %%).</p>\n",
		barColourA, barColourB, 100*maxShare)
	fmt.Fprintf(bw, "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"share of events per bucket, A and B\">\n", width, top+plotH+bottom)
	for i, c := range cells {
		x := left + i*cellW
		for j, v := range []float64{finite(c.ShareA), finite(c.ShareB)} {
			h := plotH * v / maxShare
			colour := barColourA
			if j == 1 {
				colour = barColourB
			}
			fmt.Fprintf(bw, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>%s: %.2f %%</title></rect>\n",
				x+2+j*barW, float64(top+plotH)-h, barW, h, colour, html.EscapeString(cellLabel(c)), 100*v)
		}
		if i%every != 0 {
			continue
		}
		fmt.Fprintf(bw, "<text x=\"%d\" y=\"%d\" transform=\"rotate(45 %d %d)\">%s</text>\n", x+4, top+plotH+12, x+4, top+plotH+12, html.EscapeString(latency(c.LowerUS)))
	}
	bw.WriteString("</svg>\n")
}

// writeStrip draws the share difference B − A per bucket in diverging
// colours: red where B has more of its events, blue where it has fewer.
func writeStrip(bw *bufio.Writer, cells []Cell) {
	const h, left = 24, 40
	cellW, _ := fit(len(cells), 1200, 4, 36, 32)
	maxAbs := 0.0
	for _, c := range cells {
		maxAbs = math.Max(maxAbs, math.Abs(finite(c.ShareB)-finite(c.ShareA)))
	}
	fmt.Fprintf(bw, "<p class=\"note\">B − A share per bucket (red: B has more of its events there, blue: fewer; full colour ±%.2f points).</p>\n", 100*maxAbs)
	fmt.Fprintf(bw, "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"share difference B minus A per bucket\">\n", left+cellW*len(cells)+10, h+4)
	for i, c := range cells {
		d := finite(c.ShareB) - finite(c.ShareA)
		fmt.Fprintf(bw, "<rect x=\"%d\" y=\"2\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s: %+.2f points</title></rect>\n",
			left+i*cellW, cellW, h, diverging(d, maxAbs), html.EscapeString(cellLabel(c)), 100*d)
	}
	bw.WriteString("</svg>\n")
}

// writeTimeline draws B − A events/s per bucket and aligned column.
func writeTimeline(bw *bufio.Writer, s Series) {
	t := s.Timeline
	const colW, left, top = 12, 70, 4
	// Rows: the non-empty cells, lowest latency at the bottom.
	rows := visibleCells(s)
	rowH, every := fit(len(rows), 560, 3, 14, 12)
	maxAbs := 0.0
	for _, col := range t.Diff {
		for _, i := range rows {
			maxAbs = math.Max(maxAbs, math.Abs(finite(Num(col[i]))))
		}
	}
	height := top + rowH*len(rows) + 20
	fmt.Fprintf(bw, "<p class=\"note\">Difference heat map: B − A events/s per bucket over the time since each side's start (columns of %.3g s; red: B more, blue: B fewer, full colour ±%.3g/s; blank: a side observed nothing).</p>\n",
		t.ColumnSeconds, maxAbs)
	fmt.Fprintf(bw, "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"difference heat map B minus A over aligned time\">\n", left+colW*len(t.Diff)+10, height)
	for r, i := range rows {
		y := top + rowH*(len(rows)-1-r)
		if r%every == 0 {
			lo, _ := s.cellEdgesUS(i)
			fmt.Fprintf(bw, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left-4, y+rowH, html.EscapeString(latency(lo)))
		}
		for c, col := range t.Diff {
			v := col[i]
			if math.IsNaN(v) {
				continue
			}
			fmt.Fprintf(bw, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%.3g s: %+.3g/s</title></rect>\n",
				left+c*colW, y, colW, rowH, diverging(v, maxAbs), float64(c)*t.ColumnSeconds, v)
		}
	}
	fmt.Fprintf(bw, "<text x=\"%d\" y=\"%d\">0 s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3g s</text>\n", left, height-4,
		left+colW*len(t.Diff), height-4, t.ColumnSeconds*float64(len(t.Diff)))
	bw.WriteString("</svg>\n")
}

// visibleCells returns the grid indices of the cells either side has
// events in (s.Cells lists them), in ascending latency.
func visibleCells(s Series) []int {
	var out []int
	for _, c := range s.Cells {
		out = append(out, c.Index)
	}
	return out
}

func (s Series) cellEdgesUS(i int) (Num, Num) {
	for _, c := range s.Cells {
		if c.Index == i {
			return c.LowerUS, c.UpperUS
		}
	}
	return Num(math.NaN()), Num(math.NaN())
}

func cellLabel(c Cell) string { return latency(c.LowerUS) + " – " + latency(c.UpperUS) }

func finite(v Num) float64 {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return 0
	}
	return float64(v)
}

// diverging maps v in [−max, max] to blue – near-white – red.
func diverging(v, maxAbs float64) string {
	t := 0.0
	if maxAbs > 0 {
		t = math.Max(-1, math.Min(1, v/maxAbs))
	}
	mid := [3]float64{247, 247, 247}
	end := [3]float64{178, 24, 43}
	if t < 0 {
		end, t = [3]float64{33, 102, 172}, -t
	}
	var c [3]int
	for k := range c {
		c[k] = int(math.Round(mid[k] + (end[k]-mid[k])*t))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}
