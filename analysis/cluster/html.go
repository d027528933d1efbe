package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/latscope/latscope/internal/htmlpage"
)

// palette colours the clusters (Tableau 10), cycling past ten.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

func colour(cluster int) string { return palette[(cluster-1)%len(palette)] }

const clusterCSS = `body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;display:block;overflow-x:auto}
th,td{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
td.l,th.l{text-align:left}
.sw{display:inline-block;width:.8em;height:.8em;margin-right:.3em}
svg{display:block;margin:.5em 0 1.5em;font-size:10px}
small{color:#666}
`

// dendrogramLeaves bounds the leaves drawn: above it the dendrogram shows
// the last merges only, each leaf a subtree labelled by its size (SciPy's
// truncate_mode="lastp").
const dendrogramLeaves = 60

func writeHTML(w *bufio.Writer, r *Result) error {
	title := fmt.Sprintf("Workload clusters of %d statements", len(r.Members))
	htmlpage.WriteHead(w, html.EscapeString(title), clusterCSS)
	fmt.Fprintf(w, "<h1>%s</h1>\n<p>from %s<br>%s; %s</p>\n", html.EscapeString(title), html.EscapeString(sourceNames(r)),
		html.EscapeString(r.Describe()), html.EscapeString(r.KReason()))
	w.WriteString("<h2>Centroids (mean demand per execution)</h2>\n<table><tr><th class=l>cluster</th><th>statements</th><th>executions</th>")
	writeHeaderCells(w, r.Features)
	w.WriteString("</tr>\n")
	for _, c := range r.Clusters {
		fmt.Fprintf(w, "<tr><td class=l><span class=sw style=\"background:%s\"></span>%d</td><td>%d</td><td>%d</td>%s</tr>\n", colour(c.ID), c.ID, len(c.Members), c.Executions, htmlCells(c.Centroid))
	}
	w.WriteString("</table>\n<h2>Totals (demand over all executions)</h2>\n<table><tr><th class=l>cluster</th>")
	writeHeaderCells(w, r.Features)
	w.WriteString("</tr>\n")
	for _, c := range r.Clusters {
		fmt.Fprintf(w, "<tr><td class=l><span class=sw style=\"background:%s\"></span>%d</td>%s</tr>\n", colour(c.ID), c.ID, htmlCells(c.Totals))
	}
	w.WriteString("</table>\n")
	writeCandidates(w, r)
	if len(r.Merges) > 0 {
		w.WriteString("<h2>Dendrogram</h2>\n")
		writeDendrogram(w, r)
		fmt.Fprintf(w, "<h2>Principal components</h2>\n<p><small>PC1 carries %.1f%% of the scaled demands' variance, PC2 %.1f%%; crosses mark the clusters' centres.</small></p>\n",
			100*r.Explained[0], 100*r.Explained[1])
		writeProjection(w, r)
	}
	w.WriteString("<h2>Members (demand per execution)</h2>\n<table><tr><th class=l>cluster</th><th class=l>statement</th><th>executions</th>")
	writeHeaderCells(w, r.Features)
	w.WriteString("<th class=l>text</th></tr>\n")
	for _, c := range r.Clusters {
		for _, i := range c.Members {
			m := r.Members[i]
			fmt.Fprintf(w, "<tr><td class=l><span class=sw style=\"background:%s\"></span>%d</td><td class=l>%s</td><td>%d</td>%s<td class=l>%s</td></tr>\n",
				colour(c.ID), c.ID, html.EscapeString(displayKey(m.Key)), m.Executions, htmlCells(m.Demands), html.EscapeString(firstLine(m.Text, 80)))
		}
	}
	w.WriteString("</table>\n")
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the clusters: %w", err)
	}
	htmlpage.WriteTail(w, "cluster-data", data, "")
	return nil
}

// writeCandidates lists the numbers of clusters the suggestion weighed,
// the suggested and the chosen one marked.
func writeCandidates(w *bufio.Writer, r *Result) {
	if len(r.Candidates) == 0 {
		return
	}
	w.WriteString("<h2>Number of clusters</h2>\n<table><tr><th>k</th><th>gap below the next merge</th>")
	if r.SuggestedBy == SuggestSilhouette {
		w.WriteString("<th>mean silhouette</th>")
	}
	w.WriteString("<th class=l></th></tr>\n")
	for _, c := range r.Candidates {
		fmt.Fprintf(w, "<tr><td>%d</td><td>%s</td>", c.K, short(c.Gap))
		if r.SuggestedBy == SuggestSilhouette {
			s := "-"
			if c.Silhouette != nil {
				s = fmt.Sprintf("%.3f", *c.Silhouette)
			}
			w.WriteString("<td>" + s + "</td>")
		}
		var marks []string
		if c.K == r.Suggested {
			marks = append(marks, "suggested")
		}
		if c.K == r.K {
			marks = append(marks, "shown")
		}
		w.WriteString("<td class=l>" + strings.Join(marks, ", ") + "</td></tr>\n")
	}
	w.WriteString("</table>\n")
}

func writeHeaderCells(w *bufio.Writer, features []string) {
	for _, f := range features {
		w.WriteString("<th>" + html.EscapeString(f) + "</th>")
	}
}

func htmlCells(v []float64) string {
	var b strings.Builder
	for _, x := range v {
		b.WriteString("<td>" + short(x) + "</td>")
	}
	return b.String()
}

// dendrogram lays out the last merges: each node's x (leaves 0, 1, ... in
// SciPy's order, a merge midway between its children), its height, and
// its cluster when all its points are in one (else 0).
type dendrogram struct {
	n, firstShown int
	merges        []Merge
	x, y          map[int]float64
	cluster       map[int]int
	leaves        []int
}

func newDendrogram(r *Result) *dendrogram {
	n := len(r.Merges) + 1
	d := &dendrogram{n: n, merges: r.Merges, x: map[int]float64{}, y: map[int]float64{}, cluster: map[int]int{}}
	d.firstShown = max(0, n-dendrogramLeaves) // merges before it are folded into leaves
	for i, m := range r.Members {
		d.cluster[i] = m.Cluster
	}
	for i, m := range r.Merges {
		node := n + i
		if a, b := d.cluster[m.A], d.cluster[m.B]; a == b {
			d.cluster[node] = a
		}
	}
	d.place(2*n - 2)
	return d
}

// place sets a node's position after its children's (depth-first, A first).
func (d *dendrogram) place(node int) {
	if node < d.n+d.firstShown {
		d.x[node] = float64(len(d.leaves))
		d.leaves = append(d.leaves, node)
		return
	}
	m := d.merges[node-d.n]
	d.place(m.A)
	d.place(m.B)
	d.x[node] = (d.x[m.A] + d.x[m.B]) / 2
	d.y[node] = m.Height
}

// size is how many points a node holds.
func (d *dendrogram) size(node int) int {
	if node < d.n {
		return 1
	}
	return d.merges[node-d.n].Size
}

func writeDendrogram(w *bufio.Writer, r *Result) {
	d := newDendrogram(r)
	const width, plotH, top, left, labelH = 900.0, 300.0, 10.0, 50.0, 110.0
	maxH := r.Merges[len(r.Merges)-1].Height
	if maxH <= 0 {
		maxH = 1
	}
	step := (width - left - 10) / float64(len(d.leaves))
	px := func(node int) float64 { return left + step*(d.x[node]+0.5) }
	py := func(h float64) float64 { return top + plotH*(1-h/maxH) }
	fmt.Fprintf(w, "<svg width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"dendrogram\">\n", width, top+plotH+labelH)
	fmt.Fprintf(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n", left, top, left, top+plotH)
	for _, t := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(w, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left-4, py(t*maxH)+3, short(t*maxH))
	}
	for i := d.firstShown; i < len(r.Merges); i++ {
		node, m := d.n+i, r.Merges[i]
		stroke := "#888"
		if c := d.cluster[node]; c > 0 {
			stroke = colour(c)
		}
		fmt.Fprintf(w, "<path d=\"M%.1f %.1fV%.1fH%.1fV%.1f\" fill=\"none\" stroke=\"%s\"><title>height %s, %d statements</title></path>\n",
			px(m.A), py(d.y[m.A]), py(m.Height), px(m.B), py(d.y[m.B]), stroke, short(m.Height), m.Size)
	}
	if r.CutHeight > 0 || len(r.Clusters) > 1 {
		cut := r.CutHeight
		for _, m := range r.Merges {
			if m.Height > r.CutHeight {
				cut = (r.CutHeight + m.Height) / 2
				break
			}
		}
		fmt.Fprintf(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" stroke-dasharray=\"4 3\"><title>cut: %d clusters</title></line>\n",
			left, py(cut), width-10, py(cut), len(r.Clusters))
	}
	for _, leaf := range d.leaves {
		label := fmt.Sprintf("(%d)", d.size(leaf))
		if leaf < d.n {
			label = displayKey(r.Members[leaf].Key)
		}
		fill := "#222"
		if c := d.cluster[leaf]; c > 0 {
			fill = colour(c)
		}
		x, y := px(leaf), top+plotH+4
		fmt.Fprintf(w, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"end\" dy=\"3\" fill=\"%s\">%s</text>\n", x, y, fill, html.EscapeString(firstLine(label, 20)))
	}
	w.WriteString("</svg>\n")
}

func writeProjection(w *bufio.Writer, r *Result) {
	const width, height, pad = 640.0, 420.0, 30.0
	lo := [2]float64{math.Inf(1), math.Inf(1)}
	hi := [2]float64{math.Inf(-1), math.Inf(-1)}
	for _, p := range r.Points {
		for c := range 2 {
			lo[c], hi[c] = min(lo[c], p[c]), max(hi[c], p[c])
		}
	}
	scale := func(c int, v float64, size float64) float64 {
		if hi[c] == lo[c] {
			return size / 2
		}
		return pad + (size-2*pad)*(v-lo[c])/(hi[c]-lo[c])
	}
	px := func(v float64) float64 { return scale(0, v, width) }
	py := func(v float64) float64 { return height - scale(1, v, height) }
	fmt.Fprintf(w, "<svg width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"principal components\">\n", width, height)
	fmt.Fprintf(w, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#ccc\"/>\n", pad/2, pad/2, width-pad, height-pad)
	fmt.Fprintf(w, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">PC1 →</text><text x=\"%.0f\" y=\"%.0f\">↑ PC2</text>\n", width-pad/2, height-pad/2-4, pad/2+4, pad/2+12)
	centres := make([][2]float64, len(r.Clusters)+1)
	for i, p := range r.Points {
		m := r.Members[i]
		fmt.Fprintf(w, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" fill-opacity=\"0.8\"><title>%s: cluster %d</title></circle>\n",
			px(p[0]), py(p[1]), colour(m.Cluster), html.EscapeString(firstLine(m.Key, 40)), m.Cluster)
		centres[m.Cluster][0] += p[0]
		centres[m.Cluster][1] += p[1]
	}
	for _, c := range r.Clusters {
		n := float64(len(c.Members))
		x, y := px(centres[c.ID][0]/n), py(centres[c.ID][1]/n)
		fmt.Fprintf(w, "<path d=\"M%.1f %.1fl12 12m0 -12l-12 12\" stroke=\"%s\" stroke-width=\"3\"><title>cluster %d centre</title></path>\n", x-6, y-6, colour(c.ID), c.ID)
	}
	w.WriteString("</svg>\n")
}
