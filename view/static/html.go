package static

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/latscope/latscope/internal/htmlpage"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// The page's stylesheet and script, inlined into every HTML file.
var (
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// WriteHTML writes the recording as one self-contained HTML page: a summary
// table, then each series' maps as inline SVG with a tooltip script that
// reads the cell values from embedded JSON.
func WriteHTML(w io.Writer, ivs []stream.Interval, o Options) error {
	r := buildReport(ivs, o)
	g := vectorGeometry(r.Columns)
	bw := bufio.NewWriter(w)
	var blocks []*canvas // each series' layout, drawn and described to the script
	title := escapeText(r.Title)
	htmlpage.WriteHead(bw, title, pageCSS)
	bw.WriteString("<main>\n")
	bw.WriteString("<header id=\"top\"><h1>" + title + "</h1>\n")
	for _, line := range headerLines(r) {
		bw.WriteString(`<p class="meta">` + escapeText(line) + "</p>\n")
	}
	bw.WriteString("</header>\n")
	bw.WriteString(o.ReportHTML)
	if r.Empty() {
		bw.WriteString(`<section class="card"><p>No data: the input held no intervals with a duration.</p></section>` + "\n")
	} else {
		writeSummary(bw, r)
		writeHowTo(bw, r)
		for i := range r.Frames {
			blocks = append(blocks, layoutSeriesBlock(r, i, g))
			writeSeriesSection(bw, r, i, blocks[i])
		}
		for k := range r.Panels {
			writeMeanSection(bw, r, k, layoutMeanBlock(r, k, g))
		}
	}
	bw.WriteString("</main>\n<div id=\"tip\" role=\"tooltip\" hidden></div>\n<pre id=\"selftest-result\" hidden></pre>\n")
	data, err := json.Marshal(pageDataOf(r, blocks)) // escapes <, > and & for <script>
	if err != nil {
		return fmt.Errorf("encoding page data: %w", err)
	}
	htmlpage.WriteTail(bw, "latscope-data", data, pageJS)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing HTML: %w", err)
	}
	return nil
}

// seriesAnchor is the id of series i's section.
func seriesAnchor(i int) string { return "series-" + strconv.Itoa(i+1) }

// writeSummary writes the per-series table, ordered like the maps.
func writeSummary(w *bufio.Writer, r *report) {
	w.WriteString(`<section class="card" id="summary"><h2>Summary</h2>` + "\n<table>\n<thead><tr>" +
		"<th>#</th><th>Series</th><th>Events</th><th>Time waited</th><th>Mean</th><th>p50</th><th>p90</th><th>p99</th>" +
		"</tr></thead>\n<tbody>\n")
	for i, s := range r.Series {
		t := s.Total
		u := s.Unit
		kind := "estimated"
		if t.SumExact {
			kind = "exact"
		}
		idle := ""
		if s.Idle {
			idle = ` <span class="kind">(idle)</span>`
		}
		fmt.Fprintf(w, `<tr><td>%d</td><td><a href="#%s">%s</a>%s</td><td>%s</td><td>%s <span class="kind">%s</span></td>`+
			"<td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			i+1, seriesAnchor(i), escapeText(s.Key.String()), idle, formatEvents(t.Count()),
			formatLatency(u.Nanos(t.Sum)), kind, formatLatency(u.Nanos(t.Mean())),
			formatLatency(u.Nanos(t.Quantile(0.5))), formatLatency(u.Nanos(t.Quantile(0.9))),
			formatLatency(u.Nanos(t.Quantile(0.99))))
	}
	for j, m := range r.Means {
		if !m.Quantity.IsLatency() {
			fmt.Fprintf(w, `<tr><td>%d</td><td><a href="#%s">%s</a> <span class="kind">(%s)</span></td><td>–</td>`+
				`<td>–</td><td>%s</td><td>–</td><td>–</td><td>–</td></tr>`+"\n",
				len(r.Series)+j+1, meanAnchor(panelOf(r, j)), escapeText(m.Key.String()), escapeText(quantityName(m.Quantity)),
				formatMeanValue(m.Mean(), m.Quantity))
			continue
		}
		fmt.Fprintf(w, `<tr><td>%d</td><td><a href="#%s">%s</a> <span class="kind">(mean only)</span></td><td>%s</td>`+
			`<td>%s <span class="kind">exact</span></td><td>%s</td><td>–</td><td>–</td><td>–</td></tr>`+"\n",
			len(r.Series)+j+1, meanAnchor(panelOf(r, j)), escapeText(m.Key.String()), formatEvents(m.Count),
			formatLatency(m.Unit.Nanos(m.Sum)), formatLatency(m.Mean()))
	}
	w.WriteString("</tbody>\n</table>\n</section>\n")
}

// writeHowTo writes the short note on reading the maps.
func writeHowTo(w *bufio.Writer, r *report) {
	fmt.Fprintf(w, `<section class="card howto"><h2>How to read the maps</h2>
<p>Each column is %s of wall-clock time, oldest on the left. Each row is a power-of-two latency bucket, shortest at the
bottom; a row labelled &lt; or &gt; also holds every latency below or above it.</p>
<p><b>Frequency</b> (blue) colours a cell by the events per second that fell in that bucket: where most waits are.
<b>Intensity</b> (yellow to red) colours it by the time waited per second in that bucket (events per second times
their latency): where the time goes. A few slow waits can dominate the intensity map while barely showing in the
frequency map.</p>
<p>Colours have %d levels scaled to each map's own maximum (%s scale; see each legend). White: observed, no events.
Hatched grey: no data, a window the source could not observe. Hover over a cell for its time, bucket and rates.</p>
</section>
`, escapeText(formatSpan(r.Width)), heatmap.Levels, r.Scale)
}

// writeSeriesSection writes one series' inline SVG.
func writeSeriesSection(w *bufio.Writer, r *report, i int, block *canvas) {
	fmt.Fprintf(w, `<section class="card series" id="%s"><a class="up" href="#summary">↑ summary</a>`+"\n", seriesAnchor(i))
	attrs := fmt.Sprintf(` class="maps" data-series="%d" role="img" aria-label="%s"`, i, escapeText("heat maps of "+r.Frames[i].Label))
	renderSVG(w, block, svgStyle{idPrefix: "s" + strconv.Itoa(i+1), attrs: attrs})
	w.WriteString("</section>\n")
}

// pageData is the JSON the tooltip script reads.
type pageData struct {
	// T0 is the start of column 0 in ms since the Unix epoch (relative
	// recordings: since stream.RelativeStart, which is the epoch).
	T0 float64 `json:"t0"`
	// Off is the wall-clock zone's offset east of UTC in seconds.
	Off int `json:"off"`
	// W is the column width in ms; Ms says times show milliseconds.
	W      float64      `json:"w"`
	Ms     bool         `json:"ms"`
	Rel    bool         `json:"rel"`
	N      int          `json:"n"`
	Series []seriesData `json:"series"`
}

// seriesData holds one series' rows and cell values. F and I are the
// frequency and intensity values column by column (index col·rows+row), as
// comma-separated numbers with "" for zero.
type seriesData struct {
	Label string    `json:"label"`
	Rows  []string  `json:"rows"`
	Gaps  []int     `json:"gaps"`
	F     string    `json:"f"`
	I     string    `json:"i"`
	Maps  []mapData `json:"maps"`
}

// mapData is a map's plot position in its series' SVG coordinates.
type mapData struct {
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	CW float64 `json:"cw"`
	CH float64 `json:"ch"`
}

func pageDataOf(r *report, blocks []*canvas) pageData {
	d := pageData{N: r.Columns, Rel: r.Relative, Series: []seriesData{}}
	if r.Empty() {
		return d
	}
	_, off := r.Start.Zone()
	d.T0 = float64(r.Start.UnixNano()) / 1e6
	d.Off = off
	d.W = float64(r.Width) / 1e6
	d.Ms = clockLayout(r.Width, r.Start) != "15:04:05"
	for i := range r.Frames {
		f := &r.Frames[i]
		sd := seriesData{Label: f.Label, Gaps: gapColumns(f), F: encodeValues(f.Frequency.Values), I: encodeValues(f.Intensity.Values)}
		for _, row := range f.Rows {
			sd.Rows = append(sd.Rows, bucketRange(row))
		}
		for _, m := range blocks[i].maps {
			sd.Maps = append(sd.Maps, mapData{X: m.X, Y: m.Y, CW: m.CellW, CH: m.CellH})
		}
		d.Series = append(d.Series, sd)
	}
	return d
}

// gapColumns lists the frame's gap columns.
func gapColumns(f *heatmap.Frame) []int {
	gaps := []int{}
	for i, c := range f.Columns {
		if c.Gap {
			gaps = append(gaps, i)
		}
	}
	return gaps
}

// encodeValues writes cell values with four significant digits, zeros and
// gaps as empty fields, so sparse maps cost about a byte per cell.
func encodeValues(cols [][]float64) string {
	var b strings.Builder
	first := true
	for _, col := range cols {
		for _, v := range col {
			if !first {
				b.WriteByte(',')
			}
			first = false
			if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			b.WriteString(compactFloat(v))
		}
	}
	return b.String()
}

// compactFloat prints v with four significant digits in its shortest form:
// 12.5, 0.0031, 1.235e-7.
func compactFloat(v float64) string { return compactG(v, 4) }

// compactG formats v like %g with the given significant digits, without
// trailing zeros or a zero-padded exponent (1.2e-5, not 1.20e-05), as
// JavaScript prints numbers.
func compactG(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'g', digits, 64)
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		sign := ""
		if exp[0] == '-' {
			sign = "-"
		}
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + sign + exp
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
