package awrstats

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/latscope/latscope/internal/htmlpage"
)

// Output formats.
const (
	FormatTable = "table"
	FormatCSV   = "csv"
	FormatJSON  = "json"
	FormatHTML  = "html"
)

// timeLayout prints snapshot times as the AWR queries do, in their zone.
const timeLayout = "2006-01-02 15:04:05"

// Write writes the analysis in format (table, csv, json or html); title
// names the page.
func Write(w io.Writer, a *Analysis, format, title string) error {
	bw := bufio.NewWriter(w)
	switch format {
	case FormatCSV:
		writeCSV(bw, a)
	case FormatJSON:
		if err := writeJSON(bw, a); err != nil {
			return err
		}
	case FormatHTML:
		if err := writeHTML(bw, a, title); err != nil {
			return err
		}
	case FormatTable, "":
		writeTable(bw, a)
	default:
		return fmt.Errorf("awr: unknown format %q: want table, csv, json or html", format)
	}
	return bw.Flush()
}

// num prints a figure with at most 6 decimals and no trailing zeros, the
// same in every format.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64) }

// writeCSV writes the long, pivot-ready table: one row per snapshot,
// instance and event.
func writeCSV(w *bufio.Writer, a *Analysis) {
	w.WriteString("snapshot_time,instance,wait_class,event,waits,time_s,mean_ms\n")
	for _, r := range a.Rows {
		fmt.Fprintf(w, "%s,%s,%s,%s,%s,%s,%s\n", r.SnapshotTime.Format(timeLayout), csvField(r.Instance), csvField(r.WaitClass),
			csvField(r.Event), num(r.Waits), num(r.TimeS), num(r.MeanMs()))
	}
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

type jsonAnalysis struct {
	*Analysis
	Rows []jsonRow `json:"rows"`
}

type jsonRow struct {
	Row
	MeanMs float64 `json:"mean_ms"`
}

func writeJSON(w io.Writer, a *Analysis) error {
	ja := jsonAnalysis{Analysis: a, Rows: make([]jsonRow, len(a.Rows))}
	for i, r := range a.Rows {
		ja.Rows[i] = jsonRow{Row: r, MeanMs: r.MeanMs()}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ja)
}

func writeTable(w *bufio.Writer, a *Analysis) {
	fmt.Fprintf(w, "AWR wait events %s – %s: %s s waited", a.From.Format(timeLayout), a.To.Format(timeLayout), num(round3(a.TimeS)))
	if a.IdleLeftOut {
		w.WriteString(" (Idle class left out)")
	}
	w.WriteString("\n")
	eachRanking(a, func(title string, ts []Total, what string) {
		fmt.Fprintf(w, "\n%s\n", title)
		writeTotals(w, ts, what)
	})
	w.WriteString("\nTime waited (s) by day and hour of the snapshot time\n")
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	tw.Write([]byte("\t"))
	for h := range 24 {
		fmt.Fprintf(tw, "%02d\t", h)
	}
	tw.Write([]byte("\n"))
	for d, day := range a.Pivot.Days {
		tw.Write([]byte(day + "\t"))
		for h := range 24 {
			fmt.Fprintf(tw, "%.0f\t", a.Pivot.TimeS[d][h])
		}
		tw.Write([]byte("\n"))
	}
	tw.Flush()
}

// eachRanking hands every ranking the table and the page show, in order,
// with its title and what its rows are.
func eachRanking(a *Analysis, f func(title string, ts []Total, what string)) {
	f("Top events", a.Events, "event")
	f("Wait classes", a.WaitClass, "wait class")
	for _, it := range a.Instances {
		f(fmt.Sprintf("Instance %s: %s s", it.Instance, num(round3(it.TimeS))), it.Events, "event")
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func writeTotals(w *bufio.Writer, ts []Total, what string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  %s\twaits\ttime_s\tmean_ms\tshare\n", what)
	for _, t := range ts {
		fmt.Fprintf(tw, "  %s\t%s\t%.3f\t%.3f\t%.1f%%\n", t.Name, num(t.Waits), t.TimeS, t.MeanMs, 100*t.Share)
	}
	tw.Flush()
}

// writeHTML writes a self-contained page: the rankings as tables, the pivot
// as a shaded grid and the trends as SVG line charts drawn here (no script
// is needed to read them; the analysis is embedded as JSON for reuse).
func writeHTML(w *bufio.Writer, a *Analysis, title string) error {
	htmlpage.WriteHead(w, html.EscapeString(title), pageCSS)
	fmt.Fprintf(w, "<h1>%s</h1>\n<p>%s – %s · %s s waited", html.EscapeString(title), a.From.Format(timeLayout), a.To.Format(timeLayout), num(round3(a.TimeS)))
	if a.IdleLeftOut {
		w.WriteString(" · Idle class left out")
	}
	w.WriteString("</p>\n")
	eachRanking(a, func(title string, ts []Total, what string) {
		fmt.Fprintf(w, "<h2>%s</h2>\n", html.EscapeString(title))
		htmlTotals(w, ts, what)
	})
	w.WriteString("<h2>Time waited (s) by day and hour</h2>\n")
	htmlPivot(w, a.Pivot)
	w.WriteString("<h2>Trends of the top events</h2>\n")
	for _, tr := range a.Trends {
		fmt.Fprintf(w, "<h3>%s @%s</h3>\n", html.EscapeString(tr.Event), html.EscapeString(tr.Instance))
		lineChart(w, tr.Points, "mean ms", func(p TrendPoint) float64 { return p.MeanMs })
		lineChart(w, tr.Points, "waits", func(p TrendPoint) float64 { return p.Waits })
	}
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	htmlpage.WriteTail(w, "awr-data", data, "")
	return nil
}

const pageCSS = `body{font:14px system-ui,sans-serif;margin:1em 2em;color:#222}h1{overflow-wrap:anywhere;font-size:1.5em}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}
td:first-child,th:first-child{text-align:left}.pivot td{font-size:11px;padding:2px 3px}
svg{display:block;margin:.2em 0 .8em}svg text{font:10px sans-serif;fill:#555}
`

func htmlTotals(w *bufio.Writer, ts []Total, what string) {
	// A wait class's own class would repeat its name: only events show it.
	classColumn := what == "event"
	fmt.Fprintf(w, "<table><tr><th>%s</th>", what)
	if classColumn {
		w.WriteString("<th>wait class</th>")
	}
	w.WriteString("<th>waits</th><th>time s</th><th>mean ms</th><th>share</th></tr>\n")
	for _, t := range ts {
		fmt.Fprintf(w, "<tr><td>%s</td>", html.EscapeString(t.Name))
		if classColumn {
			fmt.Fprintf(w, "<td>%s</td>", html.EscapeString(t.WaitClass))
		}
		fmt.Fprintf(w, "<td>%s</td><td>%.3f</td><td>%.3f</td><td>%.1f%%</td></tr>\n", num(t.Waits), t.TimeS, t.MeanMs, 100*t.Share)
	}
	w.WriteString("</table>\n")
}

func htmlPivot(w *bufio.Writer, p Pivot) {
	peak := 0.0
	for _, day := range p.TimeS {
		for _, v := range day {
			peak = max(peak, v)
		}
	}
	w.WriteString("<table class=\"pivot\"><tr><th></th>")
	for h := range 24 {
		fmt.Fprintf(w, "<th>%02d</th>", h)
	}
	w.WriteString("</tr>\n")
	for d, day := range p.Days {
		fmt.Fprintf(w, "<tr><th>%s</th>", day)
		for h := range 24 {
			v := p.TimeS[d][h]
			shade := 0.0
			if peak > 0 {
				shade = v / peak
			}
			fmt.Fprintf(w, `<td style="background:rgba(214,39,40,%.2f)">%.0f</td>`, shade, v)
		}
		w.WriteString("</tr>\n")
	}
	w.WriteString("</table>\n")
}

// lineChart draws one figure of a trend as an SVG polyline over the
// snapshot times.
func lineChart(w *bufio.Writer, pts []TrendPoint, label string, value func(TrendPoint) float64) {
	const width, height, pad = 720.0, 120.0, 30.0
	if len(pts) == 0 {
		return
	}
	t0, t1 := pts[0].SnapshotTime, pts[len(pts)-1].SnapshotTime
	span := max(t1.Sub(t0).Seconds(), 1)
	peak := 0.0
	for _, p := range pts {
		peak = max(peak, value(p))
	}
	if peak == 0 {
		peak = 1
	}
	fmt.Fprintf(w, `<svg width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, width, height, width, height, label)
	fmt.Fprintf(w, `<text x="2" y="10">%s (max %s)</text><text x="%.0f" y="%.0f">%s</text><text x="%.0f" y="%.0f" text-anchor="end">%s</text>`,
		label, num(round3(peak)), pad, height-2, t0.Format(time.DateTime), width-2, height-2, t1.Format(time.DateTime))
	w.WriteString(`<polyline fill="none" stroke="#1f77b4" stroke-width="1.2" points="`)
	for i, p := range pts {
		x := pad + (width-2*pad)*p.SnapshotTime.Sub(t0).Seconds()/span
		y := height - pad + 14 - (height-2*pad)*value(p)/peak
		if i > 0 {
			w.WriteByte(' ')
		}
		fmt.Fprintf(w, "%.1f,%.1f", x, y)
	}
	w.WriteString("\"/></svg>\n")
}
