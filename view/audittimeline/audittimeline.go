// Package audittimeline writes `latscope audit`'s self-contained HTML page:
// an SVG timeline with a lane per host and database, a marker per subject
// (start, stop, mount, open, SYSDBA connection, clusterware command), each
// chain's login span from the login to the subject, and below it the chains,
// the files read and their problems. The page fetches nothing and needs no
// script: hover titles carry the full chains.
package audittimeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/latscope/latscope/audit/correlate"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/htmlpage"
)

// Report is what the page shows: `latscope audit -o FILE.html` fills it
// from the files read; the serve job can fill it from its own model.
type Report struct {
	Title  string
	Files  []correlate.FileSummary
	Chains []correlate.Chain
	// Problems: the input skipped per file (input.Diagnostics.Problems).
	Problems []input.SourceProblems
	// Warnings: input.Diagnostics.Warnings.
	Warnings []string
}

// timeLayout: every time on the page is UTC.
const timeLayout = "2006-01-02 15:04:05Z"

// Write writes r as one HTML document.
func Write(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	title := r.Title
	if title == "" {
		title = "latscope audit: who started or stopped the database"
	}
	htmlpage.WriteHead(bw, html.EscapeString(title), pageCSS)
	fmt.Fprintf(bw, "<h1>%s</h1>\n", html.EscapeString(title))
	writeSummary(bw, r)
	writeSVG(bw, layout(r.Chains))
	writeLegend(bw)
	writeChains(bw, r.Chains)
	writeFiles(bw, r)
	data, err := json.Marshal(struct {
		Files  []correlate.FileSummary `json:"files"`
		Chains []correlate.Chain       `json:"chains"`
	}{r.Files, r.Chains})
	if err != nil {
		return err
	}
	htmlpage.WriteTail(bw, "audit-data", data, "")
	return bw.Flush()
}

func writeSummary(w *bufio.Writer, r Report) {
	counts := map[correlate.Confidence]int{}
	for _, c := range r.Chains {
		counts[c.Confidence]++
	}
	fmt.Fprintf(w, "<p>%d subjects", len(r.Chains))
	if len(r.Files) > 0 { // a serve watch's page has chains, not files
		fmt.Fprintf(w, " from %d files", len(r.Files))
	}
	if len(r.Chains) > 0 {
		fmt.Fprintf(w, ", %s – %s", r.Chains[0].Subject.Time.UTC().Format(timeLayout), r.Chains[len(r.Chains)-1].Subject.Time.UTC().Format(timeLayout))
	}
	w.WriteString(". Chains by confidence:")
	for _, conf := range confidenceOrder {
		if counts[conf] > 0 {
			fmt.Fprintf(w, " <span class=\"conf %s\">%s</span> %d", confClass(conf), html.EscapeString(string(conf)), counts[conf])
		}
	}
	w.WriteString("</p>\n")
	if len(r.Chains) == 0 {
		w.WriteString("<p>No database start, stop, SYSDBA/SYSOPER connection or clusterware command in the files read.</p>\n")
	}
}

var confidenceOrder = []correlate.Confidence{correlate.Exact, correlate.ExactProcess, correlate.ByProcessID,
	correlate.ByTerminal, correlate.ByWatch, correlate.ByAddressTime, correlate.Ambiguous, correlate.Unknown}

// confClass groups the confidences in three colours: exact, by a
// circumstance (process id, terminal, watch, address and time), and not
// known (unknown, ambiguous).
func confClass(c correlate.Confidence) string {
	switch c {
	case correlate.Exact, correlate.ExactProcess:
		return "c-exact"
	case correlate.Unknown, correlate.Ambiguous:
		return "c-unknown"
	}
	return "c-by"
}

// subjectClass colours a marker by what happened.
func subjectClass(s correlate.Subject) string {
	if s.Kind == "clusterware" {
		return "k-crs"
	}
	switch s.Action {
	case "STARTUP":
		return "k-startup"
	case "SHUTDOWN":
		return "k-shutdown"
	case "ALTER DATABASE MOUNT", "ALTER DATABASE OPEN":
		return "k-mount"
	}
	return "k-connect"
}

func writeLegend(w *bufio.Writer) {
	w.WriteString(`<p class="legend">`)
	for _, k := range [][2]string{{"k-startup", "STARTUP"}, {"k-shutdown", "SHUTDOWN"}, {"k-mount", "MOUNT / OPEN"},
		{"k-connect", "SYSDBA / SYSOPER connect"}, {"k-crs", "clusterware command"}} {
		fmt.Fprintf(w, `<span class="sw %s"></span>%s `, k[0], k[1])
	}
	w.WriteString(`· login span: <span class="bar c-exact"></span>exact <span class="bar c-by"></span>by process, terminal, watch or address and time <span class="bar c-unknown"></span>ambiguous or unknown (dashed: a candidate, not taken). Hover a marker or span for its chain.</p>` + "\n")
}

// subjectText is a subject in one line: action, command, privilege.
func subjectText(s correlate.Subject) string {
	what := s.Action
	if s.Command != "" {
		what += ": " + s.Command
	}
	if s.Privilege != "" {
		what += " (" + s.Privilege + ")"
	}
	return what
}

// whoText is a chain's login in one line, or "unknown".
func whoText(c correlate.Chain) string { return loginText(c.Login) }

func loginText(l *correlate.Login) string {
	if l == nil {
		return "unknown"
	}
	var b strings.Builder
	b.WriteString(orDash(l.User))
	if l.Addr != "" {
		b.WriteString(" from " + l.Addr)
		if l.Port != 0 {
			fmt.Fprintf(&b, " port %d", l.Port)
		}
	}
	fmt.Fprintf(&b, ", login %s, auid %s ses %s", l.Time.UTC().Format(timeLayout), orDash(l.AUID), orDash(l.Session))
	return b.String()
}

// chainText is the full chain as plain text, for hover titles.
func chainText(c correlate.Chain) string {
	s := c.Subject
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s  %s  [%s:%d]\nwho: %s — %s", s.Time.UTC().Format(timeLayout), orDash(s.Host), orDash(s.DB),
		subjectText(s), s.Source, s.Line, whoText(c), c.Confidence)
	for _, l := range c.Links {
		b.WriteString("\nlink  " + string(l.Confidence) + "  " + l.What)
		if l.Source != "" {
			fmt.Fprintf(&b, "  [%s:%d]", l.Source, l.Line)
		}
	}
	for _, st := range c.Steps {
		b.WriteString("\nstep  " + st)
	}
	for _, cand := range c.Candidates {
		b.WriteString("\ncandidate  " + cand.Link.What + " → " + loginText(cand.Login))
	}
	return b.String()
}

func writeChains(w *bufio.Writer, chains []correlate.Chain) {
	if len(chains) == 0 {
		return
	}
	w.WriteString("<h2>Chains</h2>\n<table class=\"chains\"><tr><th>time (UTC)</th><th>host</th><th>db</th><th>subject</th><th>who</th><th>confidence</th><th>links and steps</th></tr>\n")
	for _, c := range chains {
		s := c.Subject
		fmt.Fprintf(w, "<tr id=\"%s\"><td class=\"t\">%s</td><td>%s</td><td>%s</td><td><span class=\"sw %s\"></span>%s<br><small>%s:%d</small></td><td>%s</td><td><span class=\"conf %s\">%s</span></td><td><ol>",
			chainID(c), s.Time.UTC().Format(timeLayout), esc(orDash(s.Host)), esc(orDash(s.DB)), subjectClass(s), esc(subjectText(s)),
			esc(s.Source), s.Line, esc(whoText(c)), confClass(c.Confidence), esc(string(c.Confidence)))
		for _, l := range c.Links {
			at := ""
			if !l.Time.IsZero() {
				at = l.Time.UTC().Format("15:04:05Z") + " "
			}
			fmt.Fprintf(w, "<li><span class=\"conf %s\">%s</span> %s%s", confClass(l.Confidence), esc(string(l.Confidence)), at, esc(l.What))
			if l.Source != "" {
				fmt.Fprintf(w, " <small>%s:%d</small>", esc(l.Source), l.Line)
			}
			w.WriteString("</li>")
		}
		w.WriteString("</ol>")
		for _, st := range c.Steps {
			fmt.Fprintf(w, "<div class=\"step\">step %s</div>", esc(st))
		}
		for _, cand := range c.Candidates {
			fmt.Fprintf(w, "<div class=\"cand\"><span class=\"conf c-unknown\">candidate</span> %s → %s <small>%s:%d</small></div>",
				esc(cand.Link.What), esc(loginText(cand.Login)), esc(cand.Link.Source), cand.Link.Line)
		}
		w.WriteString("</td></tr>\n")
	}
	w.WriteString("</table>\n")
}

// chainID anchors a chain's row, for the timeline's links.
func chainID(c correlate.Chain) string {
	return fmt.Sprintf("chain-%d-%d", c.Subject.Time.UnixNano(), c.Subject.Line)
}

func writeFiles(w *bufio.Writer, r Report) {
	skipped := map[string]input.SourceProblems{}
	for _, p := range r.Problems {
		skipped[p.Source] = p
	}
	w.WriteString("<h2>Files read</h2>\n<table class=\"files\"><tr><th>file</th><th>format</th><th>read</th><th>kept</th><th>skipped</th></tr>\n")
	for _, f := range r.Files {
		unit := "records"
		if f.Format == "linux-audit" {
			unit = "events"
		}
		fmt.Fprintf(w, "<tr><td>%s</td><td>%s</td><td>%d %s</td><td>%d</td><td>%d</td></tr>\n", esc(f.Name), esc(f.Format), f.Read, unit, f.Kept, skipped[f.Name].Count)
	}
	w.WriteString("</table>\n")
	if len(r.Problems) == 0 && len(r.Warnings) == 0 {
		w.WriteString("<p>No input skipped, no warning.</p>\n")
		return
	}
	w.WriteString("<h2>Problems</h2>\n<ul class=\"problems\">\n")
	for _, p := range r.Problems {
		for _, first := range p.First {
			fmt.Fprintf(w, "<li>skipped %s</li>\n", esc(first.String()))
		}
		if p.Count > len(p.First) {
			fmt.Fprintf(w, "<li>%s: %d skipped in all</li>\n", esc(p.Source), p.Count)
		}
	}
	for _, m := range r.Warnings {
		fmt.Fprintf(w, "<li>warning: %s</li>\n", esc(m))
	}
	w.WriteString("</ul>\n")
}

func esc(s string) string { return html.EscapeString(s) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

const pageCSS = `body{font:14px system-ui,sans-serif;margin:1em 2em;color:#222}h1{font-size:1.4em;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:3px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}
.chains ol{margin:0;padding-left:1.4em}.chains small,.files small{color:#666}.step{color:#555}
.conf{padding:0 4px;border-radius:3px;white-space:nowrap}.c-exact{background:#cdeccd}.c-by{background:#fbe3b0}.c-unknown{background:#f6c4c4}
.sw{display:inline-block;width:10px;height:10px;border-radius:5px;margin:0 4px 0 8px}.bar{display:inline-block;width:22px;height:8px;margin:0 4px 0 8px}
.k-startup{background:#2e9b3e;fill:#2e9b3e}.k-shutdown{background:#d23a2e;fill:#d23a2e}.k-mount{background:#2f6fd0;fill:#2f6fd0}
.k-connect{background:#8a5ac8;fill:#8a5ac8}.k-crs{background:#e08a00;fill:#e08a00}
svg.timeline{display:block;width:100%;height:auto;margin:.5em 0}svg text{font:11px system-ui,sans-serif;fill:#444}
svg .lane{fill:#f6f6f6}svg .moved{stroke:#888}svg .grid{stroke:#ddd}svg .span rect{stroke:#777;stroke-width:.5}
svg .span.cand rect{stroke-dasharray:4 2;stroke:#a33}svg .span.c-exact rect{fill:#cdeccd}svg .span.c-by rect{fill:#fbe3b0}svg .span.c-unknown rect{fill:#f6c4c4}
svg .m circle,svg .m path{stroke:#222;stroke-width:.6}svg a:hover circle,svg a:hover path,svg a:hover rect{stroke-width:2}
.legend{color:#444}.t{white-space:nowrap}
`
