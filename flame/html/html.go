// Package html writes a flame graph as one self-contained HTML page: the
// profile embedded compactly (a frame-name table and the merged tree
// flattened in pre-order as integer arrays) and a canvas viewer with
// search, next/previous match, a function table, a sandwich view (callers
// and callees of one function) and a differential mode. The page fetches
// nothing: no network, no external fonts.
package html

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/internal/htmlpage"
)

// The viewer's stylesheet and script, inlined into every page.
var (
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// Options tune the page. The zero value gives flamegraph.pl's defaults.
type Options struct {
	// Title heads the page ("Flame Graph", "Icicle Graph" when Inverted,
	// "Differential Flame Graph" for a diff, "Flame Chart" for FlameChart).
	Title string
	// Subtitle is printed under the title when set.
	Subtitle string
	// Inverted starts in icicle orientation (root at the top); the page
	// toggles it with the "i" key.
	Inverted bool
	// CountName names the counts ("samples" by default).
	CountName string
	// NameType prefixes a frame's name in the tooltip ("Function:" by default).
	NameType string
	// FlameChart keeps the input order of stacks (time order) instead of
	// sorting them by frames before merging.
	FlameChart bool
	// Reverse merges stacks from the leaf end (flamegraph.pl --reverse).
	Reverse bool
	// MinWidth is the narrowest frame drawn, in CSS pixels (0.5 by default);
	// narrower subtrees are culled, their samples still count everywhere.
	MinWidth float64
	// Describe, when set, explains a frame in its tooltip (database
	// layers and plan operations: decode.Describe).
	Describe func(name string) string
}

// pageData is the JSON the script reads. The tree is flattened in
// pre-order: frame i has name Names[N[i]], depth D[i] (root 0) and T[i]
// samples in its subtree; starts, self counts and subtree ends are derived
// by the script in one pass. B holds base counts of a differential.
type pageData struct {
	Title     string   `json:"title"`
	Subtitle  string   `json:"subtitle,omitempty"`
	CountName string   `json:"countName"`
	NameType  string   `json:"nameType"`
	Inverted  bool     `json:"inverted"`
	Diff      bool     `json:"diff"`
	MinWidth  float64  `json:"minWidth"`
	Names     []string `json:"names"`
	// Notes[k] describes Names[k] (database decoding), "" when unknown.
	Notes []string `json:"notes,omitempty"`
	N     []int32  `json:"n"`
	D     []int32  `json:"d"`
	T     []int64  `json:"t"`
	B     []int64  `json:"b,omitempty"`
}

// Write writes p as a self-contained HTML flame graph viewer.
func Write(w io.Writer, p *flame.Profile, opts Options) error {
	data, err := json.Marshal(buildData(p, opts)) // escapes <, > and & for <script>
	if err != nil {
		return fmt.Errorf("encoding flame graph data: %w", err)
	}
	title := pageTitle(p, opts)
	bw := bufio.NewWriterSize(w, 64<<10)
	htmlpage.WriteHead(bw, escapeText(title), pageCSS)
	htmlpage.WriteTail(bw, "flame-data", data, pageJS)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing HTML flame graph: %w", err)
	}
	return nil
}

func pageTitle(p *flame.Profile, opts Options) string {
	switch {
	case opts.Title != "":
		return opts.Title
	case p.Diff:
		return "Differential Flame Graph"
	case opts.FlameChart:
		return "Flame Chart"
	case opts.Inverted:
		return "Icicle Graph"
	}
	return "Flame Graph"
}

// buildData merges the profile and flattens the tree.
func buildData(p *flame.Profile, opts Options) *pageData {
	d := &pageData{
		Title: pageTitle(p, opts), Subtitle: opts.Subtitle, CountName: opts.CountName, NameType: opts.NameType,
		Inverted: opts.Inverted, Diff: p.Diff, MinWidth: opts.MinWidth,
	}
	if d.CountName == "" {
		d.CountName = "samples"
	}
	if d.NameType == "" {
		d.NameType = "Function:"
	}
	if d.MinWidth <= 0 {
		d.MinWidth = 0.5
	}
	if opts.Reverse {
		p = reversed(p)
	}
	f := flattener{d: d, index: map[string]int32{}, describe: opts.Describe}
	f.walk(p.Tree(opts.FlameChart), 0)
	return d
}

type flattener struct {
	d        *pageData
	index    map[string]int32
	describe func(string) string
}

// walk appends n and its subtree in pre-order. It recurses once per depth
// level: stacks are at most a few thousand frames deep.
func (f *flattener) walk(n *flame.Node, depth int32) {
	id, ok := f.index[n.Name]
	if !ok {
		id = int32(len(f.d.Names))
		f.index[n.Name] = id
		f.d.Names = append(f.d.Names, n.Name)
		if f.describe != nil {
			f.d.Notes = append(f.d.Notes, f.describe(n.Name))
		}
	}
	f.d.N = append(f.d.N, id)
	f.d.D = append(f.d.D, depth)
	f.d.T = append(f.d.T, n.Total)
	if f.d.Diff {
		f.d.B = append(f.d.B, n.Base)
	}
	for _, c := range n.Children {
		f.walk(c, depth+1)
	}
}

// reversed returns p with every stack's frames in reverse order (leaf
// first), for caller analysis as flamegraph.pl --reverse.
func reversed(p *flame.Profile) *flame.Profile {
	r := flame.New()
	r.Diff = p.Diff
	for _, s := range p.InOrder() {
		frames := strings.Split(s.Frames, ";")
		for i, j := 0, len(frames)-1; i < j; i, j = i+1, j-1 {
			frames[i], frames[j] = frames[j], frames[i]
		}
		r.AddDiff(strings.Join(frames, ";"), s.Base, s.Count)
	}
	return r
}

var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func escapeText(s string) string { return textEscaper.Replace(s) }
