package audittimeline

import (
	"bufio"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/latscope/latscope/audit/correlate"
)

// The timeline's geometry, in SVG user units (the image scales to the page).
const (
	svgWidth   = 1200.0
	labelWidth = 170.0
	rightPad   = 20.0
	axisHeight = 28.0
	markerRow  = 26.0
	spanRow    = 17.0
	lanePad    = 6.0
)

// lane is one host, or one database of a host.
type lane struct {
	host, db string
	chains   []*correlate.Chain
	spans    []span
	rows     int
}

// span is a login span: from a chain's login, or from the login of one
// of an ambiguous chain's candidates, to the subject.
type span struct {
	chain     *correlate.Chain
	login     *correlate.Login
	candidate bool
	row       int
}

func (l *lane) label() string {
	host := l.host
	if host == "" {
		host = "host not named (no node=)"
	}
	if l.db == "" {
		return host
	}
	return host + " · " + l.db
}

func (l *lane) height() float64 { return markerRow + float64(l.rows)*spanRow + lanePad }

// timeline is the page's picture: lanes and the time range.
type timeline struct {
	lanes  []*lane
	t0, t1 time.Time
}

// layout puts each chain in its lane (Oracle subjects in their host's
// database lane, clusterware commands in the host's lane) and gives each
// login span the first row of the lane where it overlaps no other.
func layout(chains []correlate.Chain) timeline {
	var tl timeline
	byKey := map[string]*lane{}
	for i := range chains {
		c := &chains[i]
		db := c.Subject.DB
		if c.Subject.Kind == "clusterware" {
			db = ""
		}
		key := strings.ToLower(shortHost(c.Subject.Host)) + "\x00" + strings.ToUpper(db)
		l := byKey[key]
		if l == nil {
			l = &lane{host: c.Subject.Host, db: db}
			byKey[key] = l
			tl.lanes = append(tl.lanes, l)
		}
		l.chains = append(l.chains, c)
		tl.include(c.Subject.Time)
		if c.Login != nil {
			l.spans = append(l.spans, span{chain: c, login: c.Login})
			tl.include(c.Login.Time)
		}
		for _, cand := range c.Candidates {
			if cand.Login != nil {
				l.spans = append(l.spans, span{chain: c, login: cand.Login, candidate: true})
				tl.include(cand.Login.Time)
			}
		}
	}
	sort.SliceStable(tl.lanes, func(i, j int) bool {
		a, b := tl.lanes[i], tl.lanes[j]
		if !strings.EqualFold(a.host, b.host) {
			return strings.ToLower(a.host) < strings.ToLower(b.host)
		}
		return a.db < b.db
	})
	for _, l := range tl.lanes {
		sort.SliceStable(l.chains, func(i, j int) bool { return l.chains[i].Subject.Time.Before(l.chains[j].Subject.Time) })
		l.packSpans()
	}
	pad := tl.t1.Sub(tl.t0) / 20
	if pad < time.Minute {
		pad = time.Minute
	}
	tl.t0, tl.t1 = tl.t0.Add(-pad), tl.t1.Add(pad)
	return tl
}

func (tl *timeline) include(t time.Time) {
	if tl.t0.IsZero() || t.Before(tl.t0) {
		tl.t0 = t
	}
	if tl.t1.IsZero() || t.After(tl.t1) {
		tl.t1 = t
	}
}

// packSpans assigns rows greedily in order of login time: a span goes in
// the first row whose last span ended before it begins.
func (l *lane) packSpans() {
	sort.SliceStable(l.spans, func(a, b int) bool { return l.spans[a].login.Time.Before(l.spans[b].login.Time) })
	var ends []time.Time
	for i := range l.spans {
		sp := &l.spans[i]
		row := 0
		for row < len(ends) && !ends[row].Before(sp.login.Time) {
			row++
		}
		if row == len(ends) {
			ends = append(ends, time.Time{})
		}
		ends[row] = sp.chain.Subject.Time
		sp.row = row
	}
	l.rows = len(ends)
}

// shortHost is a host name's first label: db1.example.com and DB1 are one host.
func shortHost(h string) string {
	h, _, _ = strings.Cut(h, ".")
	return h
}

func (tl timeline) x(t time.Time) float64 {
	span := tl.t1.Sub(tl.t0)
	return labelWidth + (svgWidth-labelWidth-rightPad)*float64(t.Sub(tl.t0))/float64(span)
}

func writeSVG(w *bufio.Writer, tl timeline) {
	if len(tl.lanes) == 0 {
		return
	}
	height := axisHeight
	for _, l := range tl.lanes {
		height += l.height()
	}
	fmt.Fprintf(w, `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" role="img" aria-label="timeline of the subjects and their logins">`+"\n", svgWidth, height)
	writeAxis(w, tl, height)
	y := axisHeight
	for _, l := range tl.lanes {
		fmt.Fprintf(w, `<rect class="lane" x="0" y="%.1f" width="%.0f" height="%.1f"/><text x="4" y="%.1f">%s</text>`+"\n",
			y+1, svgWidth, l.height()-2, y+markerRow/2+4, esc(l.label()))
		for _, sp := range l.spans {
			writeSpan(w, tl, sp, y+markerRow+float64(sp.row)*spanRow)
		}
		prev := -markerGap
		for _, c := range l.chains { // in time order
			prev = writeMarker(w, tl, c, y+markerRow/2, prev)
		}
		y += l.height()
	}
	w.WriteString("</svg>\n")
}

// tickSteps are the axis's candidate intervals.
var tickSteps = []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute,
	5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour, 365 * 24 * time.Hour}

func writeAxis(w *bufio.Writer, tl timeline, height float64) {
	span := tl.t1.Sub(tl.t0)
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s <= 8 {
			step = s
			break
		}
	}
	layout := "15:04:05"
	if span > 24*time.Hour {
		layout = "2006-01-02 15:04"
	}
	fmt.Fprintf(w, `<text x="4" y="16">UTC</text>`+"\n")
	for t := tl.t0.Truncate(step).Add(step); t.Before(tl.t1); t = t.Add(step) {
		x := tl.x(t)
		fmt.Fprintf(w, `<line class="grid" x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f"/><text x="%.1f" y="16" text-anchor="middle">%s</text>`+"\n",
			x, axisHeight-6, x, height, x, t.UTC().Format(layout))
	}
}

// writeSpan draws a login span: a bar from the login to the subject,
// labelled with the user and address, its title the full chain. An
// ambiguous chain's candidates are drawn dashed, their labels marked "?".
func writeSpan(w *bufio.Writer, tl timeline, sp span, y float64) {
	c := sp.chain
	x0, x1 := tl.x(sp.login.Time), tl.x(c.Subject.Time)
	label := orDash(sp.login.User)
	if sp.login.Addr != "" {
		label += " from " + sp.login.Addr
	}
	class, what := "span "+confClass(c.Confidence), "login span"
	if sp.candidate {
		class, what, label = class+" cand", "candidate login span (ambiguous: not taken)", "? "+label
	}
	fmt.Fprintf(w, `<a href="#%s"><g class="%s"><title>%s: %s
%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f"/><text x="%.1f" y="%.1f">%s</text></g></a>`+"\n",
		chainID(*c), class, what, esc(loginText(sp.login)), esc(chainText(*c)),
		x0, y+2, max(x1-x0, 2), spanRow-5, x0+3, y+spanRow-6, esc(label))
}

// markerGap: markers closer than this are moved right so that each can be
// seen and hovered; a tick marks the true time of a moved one.
const markerGap = 13.0

// writeMarker draws a subject: a circle for a database record, a diamond
// for a clusterware command, no closer than markerGap to the previous
// marker of its lane (at prev); it returns where it drew.
func writeMarker(w *bufio.Writer, tl timeline, c *correlate.Chain, y, prev float64) float64 {
	at := tl.x(c.Subject.Time)
	x := max(at, prev+markerGap)
	if x != at {
		fmt.Fprintf(w, `<line class="moved" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", at, y+7, x, y+3)
	}
	shape := fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="6"/>`, x, y)
	if c.Subject.Kind == "clusterware" {
		shape = fmt.Sprintf(`<path d="M%.1f %.1fl7 7l-7 7l-7-7z"/>`, x, y-7)
	}
	fmt.Fprintf(w, `<a href="#%s"><g class="m %s" data-kind="%s"><title>%s</title>%s</g></a>`+"\n",
		chainID(*c), subjectClass(c.Subject), esc(c.Subject.Action), esc(chainText(*c)), shape)
	return x
}
