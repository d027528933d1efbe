// Package svg renders a flame.Profile as a self-contained interactive SVG
// flame graph with flamegraph.pl's options and inferno-flamegraph's frame
// geometry (percent x/width of the frames area, integer y/height, same
// pruning and text truncation), so the same folded input and options give
// the same frames in all three tools.
package svg

import (
	"fmt"
	"strconv"
	"strings"
)

// Defaults, flamegraph.pl's.
const (
	DefaultTitle      = "Flame Graph"
	DefaultIcicle     = "Icicle Graph" // title when Inverted
	DefaultChartTitle = "Flame Chart"  // title with FlameChart
	DefaultWidth      = 1200
	DefaultHeight     = 16 // of one frame
	DefaultMinWidth   = "0.1"
	DefaultFontType   = "Verdana"
	DefaultFontSize   = 12
	DefaultFontWidth  = 0.59
	DefaultCountName  = "samples"
	DefaultNameType   = "Function:"
	DefaultColors     = "hot"
	DefaultSearch     = "rgb(230,0,230)"
)

// Palettes lists the accepted Colors: flamegraph.pl's and inferno's
// (python, rust).
var Palettes = []string{"hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "python", "rust",
	"red", "green", "blue", "aqua", "yellow", "purple", "orange"}

// Options are flamegraph.pl's, with its names. The zero value of a field
// means its default.
type Options struct {
	Title    string // "Flame Graph"; "Icicle Graph" when Inverted, "Flame Chart" with FlameChart
	Subtitle string
	Width    int // image width in pixels (1200)
	Height   int // frame height in pixels (16)
	// MinWidth omits frames narrower than this: pixels ("0.1", the
	// default) or a percentage of the total ("1%"); "0" keeps all.
	MinWidth  string
	FontType  string  // "Verdana"
	FontSize  int     // 12
	FontWidth float64 // 0.59, average character width / font size
	CountName string  // "samples"
	NameType  string  // "Function:" (shown before the frame under the mouse)
	// Colors is the palette (see Palettes), "hot" by default.
	Colors string
	// BgColors is the background: yellow, blue, green, grey or #rrggbb
	// (default from the palette, as flamegraph.pl).
	BgColors string
	// Hash colours by flamegraph.pl's weighted name hash (similar names,
	// similar colours). Without it colours come from an FNV-1a hash of the
	// name (inferno's --deterministic): the same function always gets the
	// same colour, unlike flamegraph.pl's random default.
	Hash       bool
	Reverse    bool // reverse each stack (leaf first) before merging
	Inverted   bool // icicle graph: root at the top
	FlameChart bool // no sort, no merge of non-adjacent stacks: time order
	Negate     bool // swap the diff colours (blue = grew) and sign
	Notes      string
	// Describe, when set, explains a frame in its tooltip after the
	// counts (database layers and plan operations: decode.Describe).
	Describe func(name string) string
}

// minWidth is a parsed MinWidth.
type minWidth struct {
	value   float64
	percent bool
}

// ParseMinWidth checks a --minwidth value: pixels ("0.1") or a percent
// of the total ("1%").
func ParseMinWidth(s string) error {
	_, err := parseMinWidth(s)
	return err
}

func parseMinWidth(s string) (minWidth, error) {
	if s == "" {
		s = DefaultMinWidth
	}
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || v != v {
		return minWidth{}, fmt.Errorf("minwidth %q: want pixels (0.1) or a percentage (1%%)", s)
	}
	return minWidth{value: v, percent: pct}, nil
}

// resolved are Options with defaults filled in and values checked.
type resolved struct {
	Options
	minPct  float64 // MinWidth as a percent of the total
	palette palette
	bg1     string
	bg2     string
}

func resolve(o Options) (resolved, error) {
	r := resolved{Options: o}
	if r.Title == "" {
		r.Title = DefaultTitle
		if r.Inverted {
			r.Title = DefaultIcicle
		}
		if r.FlameChart {
			r.Title = DefaultChartTitle
		}
	}
	r.Width = orInt(r.Width, DefaultWidth)
	r.Height = orInt(r.Height, DefaultHeight)
	r.FontSize = orInt(r.FontSize, DefaultFontSize)
	if r.FontWidth <= 0 {
		r.FontWidth = DefaultFontWidth
	}
	r.FontType = orString(r.FontType, DefaultFontType)
	r.CountName = orString(r.CountName, DefaultCountName)
	r.NameType = orString(r.NameType, DefaultNameType)
	r.Colors = orString(r.Colors, DefaultColors)
	if r.Width <= 2*xpad || r.Width > 1<<20 || r.Height < 2 || r.Height > 1<<12 || r.FontSize > 1<<10 {
		return r, fmt.Errorf("flame graph size out of range: width %d, height %d, font size %d", r.Width, r.Height, r.FontSize)
	}
	mw, err := parseMinWidth(r.MinWidth)
	if err != nil {
		return r, err
	}
	r.minPct = mw.value
	if !mw.percent {
		r.minPct = mw.value * 100 / float64(r.Width-2*xpad)
	}
	var ok bool
	if r.palette, ok = parsePalette(r.Colors); !ok {
		return r, fmt.Errorf("unknown colour palette %q (want one of %s)", r.Colors, strings.Join(Palettes, ", "))
	}
	if r.bg1, r.bg2, err = background(r.BgColors, r.palette); err != nil {
		return r, err
	}
	return r, nil
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// ypad1 is the space above the frames (title, subtitle; details too
// when inverted), ypad2 the space below, as in flamegraph.pl and inferno.
func (r *resolved) ypad1() int {
	sub := 0
	if r.Subtitle != "" {
		sub = r.FontSize * 2
	}
	if r.Inverted {
		return r.FontSize*4 + sub + 4
	}
	return r.FontSize*3 + sub
}

func (r *resolved) ypad2() int {
	if r.Inverted {
		return r.FontSize + 10
	}
	return r.FontSize*2 + 10
}
