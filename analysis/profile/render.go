package profile

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/latscope/latscope/internal/htmlpage"
)

// Rounding states how exact the figures are; every output says it.
const Rounding = "tim, e=, c= and ela= are whole microseconds: every figure is exact to 1 µs"

// SpanText says how the span was measured, and what the other rule gives.
func (p *Profile) SpanText() string {
	if p.Span == SpanStart {
		return fmt.Sprintf("last tim − the earliest start a line implies (tim − e, tim − ela) of each trace, as TVD$XTAT measures it (last tim − first tim: %s s)", seconds(p.TimSpanUS))
	}
	return fmt.Sprintf("last tim − first tim of each trace (from the earliest start a line implies, tim − e or tim − ela, as TVD$XTAT measures it: %s s, --span start)", seconds(p.StartSpanUS))
}

// WriteJSON writes the whole profile as JSON (times in µs).
func WriteJSON(w io.Writer, p *Profile) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Rounding string `json:"rounding"`
		SpanText string `json:"span_text"`
		*Profile
	}{Rounding, p.SpanText(), p})
}

// seconds formats µs as seconds, exactly.
func seconds(us int64) string { return fmt.Sprintf("%.6f", float64(us)/1e6) }

// millis formats µs as milliseconds.
func millis(us float64) string { return fmt.Sprintf("%.3f", us/1e3) }

func percent(part, whole int64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// OrphanComponent names the row of the recursive calls' CPU that no
// top-level call's c= includes.
const OrphanComponent = "CPU (orphan recursive calls, c=)"

// Line is one row of the response-time profile: CPU, an event, or the
// unaccounted-for time.
type Line struct {
	Component      string
	US             int64
	Count          int64 // 0 for CPU and unaccounted
	WithinCallsUS  int64
	BetweenCallsUS int64
	Waited         bool
}

// Lines returns the profile's rows in order of time, the unaccounted-for
// row last.
func (p *Profile) Lines() []Line {
	lines := []Line{{Component: "CPU (top-level calls, c=)", US: p.CPUUS, Count: p.topLevelCalls(), WithinCallsUS: p.CPUUS}}
	for _, e := range p.Events {
		lines = append(lines, Line{Component: e.Name, US: e.US, Count: e.Count, WithinCallsUS: e.WithinCallsUS, BetweenCallsUS: e.BetweenCallsUS, Waited: true})
	}
	// CPU is placed among the events by its time.
	for i := 1; i < len(lines) && lines[i].US > lines[i-1].US; i++ {
		lines[i], lines[i-1] = lines[i-1], lines[i]
	}
	if p.OrphanCalls > 0 {
		orphans := Line{Component: OrphanComponent, US: p.OrphanCPUUS, Count: p.OrphanCalls, WithinCallsUS: p.OrphanCPUUS}
		i, _ := slices.BinarySearchFunc(lines, orphans.US, func(l Line, us int64) int { return cmp.Compare(us, l.US) })
		lines = slices.Insert(lines, i, orphans)
	}
	return append(lines, Line{Component: "unaccounted-for", US: p.UnaccountedUS})
}

func (p *Profile) topLevelCalls() int64 {
	var n int64
	for _, c := range p.Calls {
		if !c.Recursive {
			n += c.Count
		}
	}
	return n
}

// WriteTable writes the profile as text tables: the response-time profile,
// the calls, the statements and, for the top statements, their calls,
// waits and latency distribution.
func WriteTable(w io.Writer, p *Profile, top int) error {
	bw := bufio.NewWriter(w)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(bw, "Response-time profile of %s\n", traceNames(p))
	fmt.Fprintf(bw, "span %s s: %s;\n%s\n\n", seconds(p.SpanUS), p.SpanText(), Rounding)
	fmt.Fprintln(tw, "component\tseconds\tshare\tcalls/waits\tmean ms\tinside calls s\tbetween calls s\t")
	for _, l := range p.Lines() {
		mean := ""
		if l.Count > 0 && l.Waited {
			mean = millis(float64(l.US) / float64(l.Count))
		}
		count, within, between := "", "", ""
		if l.Count > 0 {
			count = fmt.Sprint(l.Count)
			within, between = seconds(l.WithinCallsUS), seconds(l.BetweenCallsUS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", l.Component, seconds(l.US), percent(l.US, p.SpanUS), count, mean, within, between)
	}
	fmt.Fprintf(tw, "total (span)\t%s\t%s\t\t\t\t\t\n", seconds(p.SpanUS), percent(p.SpanUS, p.SpanUS))
	tw.Flush()
	for _, l := range p.transactionLines() {
		fmt.Fprintf(bw, "\n%s", l)
	}
	fmt.Fprintln(bw)

	fmt.Fprintf(bw, "\nDatabase calls\n")
	fmt.Fprintln(tw, "depth\tcall\tcount\tcpu s\telapsed s\tdisk\tquery\tcurrent\trows\t")
	for _, c := range p.Calls {
		depth := "top-level"
		if c.Recursive {
			depth = "recursive"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", depth, c.Type, figureCells(c.Figures))
	}
	tw.Flush()

	fmt.Fprintf(bw, "\nStatements by elapsed time (%d)\n", len(p.Statements))
	fmt.Fprintln(tw, "rank\tstatement\tdep\texecs\trows\telapsed s\tcpu s\twaits s\tms/exec\tcpu ms/exec\trows/exec\t")
	for i, s := range p.Statements {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%.1f\t\n", i+1, s.Key, s.Dep, s.Executions, s.Total.Rows,
			seconds(s.Total.ElapsedUS), seconds(s.Total.CPUUS), seconds(s.WaitUS()), millis(s.ElapsedPerExecUS), millis(s.CPUPerExecUS), s.RowsPerExec)
	}
	tw.Flush()

	for i, s := range p.Statements[:min(top, len(p.Statements))] {
		fmt.Fprintf(bw, "\n#%d %s (dep %d)\n%s\n\n", i+1, s.Key, s.Dep, indent(s.Text))
		fmt.Fprintln(tw, "call\tcount\tcpu s\telapsed s\tdisk\tquery\tcurrent\trows\t")
		for _, r := range s.rows() {
			fmt.Fprintf(tw, "%s\t%s\n", r.name, figureCells(r.f))
		}
		tw.Flush()
		if len(s.Events) > 0 {
			fmt.Fprintln(bw)
			fmt.Fprintln(tw, "event waited on\twaits\tmax ms\ttotal s\t")
			for _, e := range s.Events {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t\n", e.Name, e.Count, millis(float64(e.MaxUS)), seconds(e.US))
			}
			tw.Flush()
		}
		writeDistributions(bw, s)
	}
	return bw.Flush()
}

func traceNames(p *Profile) string {
	names := make([]string, len(p.Traces))
	for i, t := range p.Traces {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func figureCells(f Figures) string {
	return fmt.Sprintf("%d\t%s\t%s\t%d\t%d\t%d\t%d\t", f.Count, seconds(f.CPUUS), seconds(f.ElapsedUS), f.Disk, f.Query, f.Current, f.Rows)
}

type figureRow struct {
	name string
	f    Figures
}

// rows are tkprof's rows of a statement, and CLOSE when it has any.
func (s *Statement) rows() []figureRow {
	rows := []figureRow{{"Parse", s.Parse}, {"Execute", s.Exec}, {"Fetch", s.Fetch}, {"total", s.Total}}
	if s.Close.Count > 0 {
		rows = append(rows, figureRow{"Close", s.Close})
	}
	return rows
}

// String reads "commits C, rollbacks R (read-only N)".
func (t Transactions) String() string {
	return fmt.Sprintf("commits %d, rollbacks %d (read-only %d)", t.Commits, t.Rollbacks, t.ReadOnly)
}

// transactionLines are the transactions' total and, when a trace has
// several sessions, each session's.
func (p *Profile) transactionLines() []string {
	lines := []string{"transactions (XCTEND): " + p.Transactions.String()}
	for _, t := range p.Traces {
		if len(t.Sessions) < 2 {
			continue
		}
		for _, s := range t.Sessions {
			lines = append(lines, fmt.Sprintf("  %s pid %s: %s", t.Name, s.Process, s.Transactions))
		}
	}
	return lines
}

// WaitUS is the time waited on the statement's cursor.
func (s *Statement) WaitUS() int64 {
	var us int64
	for _, e := range s.Events {
		us += e.US
	}
	return us
}

func indent(text string) string {
	return "  " + strings.ReplaceAll(text, "\n", "\n  ")
}

// bucketLabel names [low, 2·low) in readable units.
func bucketLabel(low float64) string {
	if low == 0 {
		return "< 1µs"
	}
	return formatUS(low) + " – " + formatUS(2*low)
}

func formatUS(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%gs", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%gms", us/1e3)
	}
	return fmt.Sprintf("%gµs", us)
}

// summary is a distribution's one-line summary.
func (d Distribution) summary() string {
	return fmt.Sprintf("%d calls, p50 %s ms, p90 %s ms, p99 %s ms, max %s ms",
		d.Count, millis(d.P50US), millis(d.P90US), millis(d.P99US), millis(float64(d.MaxUS)))
}

// writeDistributions writes the calls' latency distribution, and their
// CPU's summary (its buckets are in the JSON and the page).
func writeDistributions(w *bufio.Writer, s *Statement) {
	d := s.Latency
	if d.Count == 0 {
		return
	}
	fmt.Fprintf(w, "\ncall latency (PARSE, EXEC, FETCH e=): %s\n", d.summary())
	fmt.Fprintf(w, "call CPU (c=): %s\n", s.CPU.summary())
	var most int64
	for _, b := range d.Buckets {
		most = max(most, b.Count)
	}
	for _, b := range d.Buckets {
		bar := strings.Repeat("#", int((b.Count*40+most-1)/most))
		fmt.Fprintf(w, "  %17s %8d %s\n", bucketLabel(b.LowUS), b.Count, bar)
	}
}

const pageCSS = `body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
th:first-child,td:first-child,td.l{text-align:left}
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap}
.bar{background:#c0392b;height:.8em;display:inline-block}
small{color:#666}
`

// WriteHTML writes the profile as one self-contained page (no script runs;
// the JSON profile is embedded for tools that read the page).
func WriteHTML(w io.Writer, p *Profile, top int) error {
	bw := bufio.NewWriter(w)
	title := "Response-time profile of " + traceNames(p)
	htmlpage.WriteHead(bw, html.EscapeString(title), pageCSS)
	fmt.Fprintf(bw, "<h1>%s</h1>\n<p>span %s s <small>(%s; %s)</small></p>\n", html.EscapeString(title), seconds(p.SpanUS), html.EscapeString(p.SpanText()), html.EscapeString(Rounding))
	bw.WriteString("<table><tr><th>component</th><th>seconds</th><th>share</th><th>calls/waits</th><th>inside calls s</th><th>between calls s</th><th></th></tr>\n")
	for _, l := range p.Lines() {
		count, within, between := "", "", ""
		if l.Count > 0 {
			count = fmt.Sprint(l.Count)
			within, between = seconds(l.WithinCallsUS), seconds(l.BetweenCallsUS)
		}
		width := 0.0
		if p.SpanUS > 0 && l.US > 0 {
			width = 300 * float64(l.US) / float64(p.SpanUS)
		}
		fmt.Fprintf(bw, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=l><span class=bar style=\"width:%.0fpx\"></span></td></tr>\n",
			html.EscapeString(l.Component), seconds(l.US), percent(l.US, p.SpanUS), count, within, between, width)
	}
	fmt.Fprintf(bw, "<tr><th>total (span)</th><th>%s</th><th>100.0%%</th><th></th><th></th><th></th><th></th></tr></table>\n", seconds(p.SpanUS))
	fmt.Fprintf(bw, "<p>%s</p>\n", html.EscapeString(strings.Join(p.transactionLines(), "\n")))
	bw.WriteString("<h2>Statements by elapsed time</h2>\n<table><tr><th>rank</th><th>statement</th><th>dep</th><th>execs</th><th>rows</th><th>elapsed s</th><th>cpu s</th><th>waits s</th><th>ms/exec</th><th>text</th></tr>\n")
	for i, s := range p.Statements {
		fmt.Fprintf(bw, "<tr><td>%d</td><td class=l>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=l>%s</td></tr>\n", i+1, html.EscapeString(s.Key), s.Dep,
			s.Executions, s.Total.Rows, seconds(s.Total.ElapsedUS), seconds(s.Total.CPUUS), seconds(s.WaitUS()), millis(s.ElapsedPerExecUS), html.EscapeString(firstLine(s.Text, 80)))
	}
	bw.WriteString("</table>\n")
	for i, s := range p.Statements[:min(top, len(p.Statements))] {
		fmt.Fprintf(bw, "<h3>#%d %s (dep %d)</h3>\n<pre>%s</pre>\n<table><tr><th>call</th><th>count</th><th>cpu s</th><th>elapsed s</th><th>disk</th><th>query</th><th>current</th><th>rows</th></tr>\n", i+1, html.EscapeString(s.Key), s.Dep, html.EscapeString(s.Text))
		for _, r := range s.rows() {
			f := r.f
			fmt.Fprintf(bw, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td></tr>\n", r.name, f.Count, seconds(f.CPUUS), seconds(f.ElapsedUS), f.Disk, f.Query, f.Current, f.Rows)
		}
		bw.WriteString("</table>\n")
		if len(s.Events) > 0 {
			bw.WriteString("<table><tr><th>event waited on</th><th>waits</th><th>max ms</th><th>total s</th></tr>\n")
			for _, e := range s.Events {
				fmt.Fprintf(bw, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td></tr>\n", html.EscapeString(e.Name), e.Count, millis(float64(e.MaxUS)), seconds(e.US))
			}
			bw.WriteString("</table>\n")
		}
		writeDistributionsHTML(bw, s)
	}
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encoding the profile: %w", err)
	}
	htmlpage.WriteTail(bw, "profile-data", data, "")
	return bw.Flush()
}

// writeDistributionsHTML writes the calls' elapsed and CPU distributions
// side by side, bucket by bucket.
func writeDistributionsHTML(bw *bufio.Writer, s *Statement) {
	el, cpu := s.Latency, s.CPU
	if el.Count == 0 {
		return
	}
	fmt.Fprintf(bw, "<p>call latency (e=): %s<br>call CPU (c=): %s</p>\n", el.summary(), cpu.summary())
	bw.WriteString("<table><tr><th>bucket</th><th>calls by e=</th><th></th><th>calls by c=</th><th></th></tr>\n")
	counts := map[float64][2]int64{}
	var lows []float64
	var most int64
	for i, d := range []Distribution{el, cpu} {
		for _, b := range d.Buckets {
			c, seen := counts[b.LowUS]
			if !seen {
				lows = append(lows, b.LowUS)
			}
			c[i] = b.Count
			counts[b.LowUS] = c
			most = max(most, b.Count)
		}
	}
	slices.Sort(lows)
	for _, low := range lows {
		c := counts[low]
		fmt.Fprintf(bw, "<tr><td>%s</td><td>%d</td><td class=l><span class=bar style=\"width:%dpx\"></span></td><td>%d</td><td class=l><span class=bar style=\"width:%dpx\"></span></td></tr>\n",
			html.EscapeString(bucketLabel(low)), c[0], c[0]*200/most, c[1], c[1]*200/most)
	}
	bw.WriteString("</table>\n")
}

func firstLine(text string, n int) string {
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i] + " …"
	}
	if len(text) > n {
		text = text[:n] + "…"
	}
	return text
}
