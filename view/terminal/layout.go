package terminal

import (
	"fmt"
	"slices"

	"github.com/latscope/latscope/view/heatmap"
)

// Show selects which maps a screen shows.
type Show int

// What a screen shows.
const (
	Both Show = iota
	FrequencyOnly
	IntensityOnly
)

// showNames name what a screen shows, as --show takes them.
var showNames = [...]string{Both: "both", FrequencyOnly: "frequency", IntensityOnly: "intensity"}

// String returns "both", "frequency" or "intensity".
func (s Show) String() string {
	if s < 0 || int(s) >= len(showNames) {
		return showNames[Both]
	}
	return showNames[s]
}

// ParseShow reads what a screen shows: both, frequency or intensity.
func ParseShow(name string) (Show, error) {
	if i := slices.Index(showNames[:], name); i >= 0 {
		return Show(i), nil
	}
	return Both, fmt.Errorf("show %q: want both, frequency or intensity", name)
}

// modes returns the maps shown, top first.
func (s Show) modes() (m [2]heatmap.Mode, n int) {
	switch s {
	case FrequencyOnly:
		return [2]heatmap.Mode{heatmap.Frequency}, 1
	case IntensityOnly:
		return [2]heatmap.Mode{heatmap.Intensity}, 1
	}
	return [2]heatmap.Mode{heatmap.Frequency, heatmap.Intensity}, 2
}

// Horizontal parts of a map line, in terminal cells.
const (
	labelWidth  = 8 // a 7-cell row label and a space
	latestWidth = 8 // a space and a 7-cell value
	// The wide legend: two spaces, a two-cell swatch, a space, 8 cells of text.
	legendWide   = 13
	swatchWide   = 2
	legendNarrow = 9 // a space, a one-cell swatch, a space, 6 cells of text
	swatchNarrow = 1
	// A map keeps at least this many columns before the wide legend gives way
	// to the narrow one, the narrow one to none, and so on.
	minColumnsWideLegend   = 30
	minColumnsNarrowLegend = 12
	minColumnsLatest       = 8
	minColumnsLabels       = 4
	footerLines            = 4
)

// layout is where everything goes on a screen of width × height cells.
type layout struct {
	width, height int

	labelW, mapW, latestW, legendW, swatchW int

	modes [2]heatmap.Mode
	maps  int
	rows  int // latency rows per map

	title     bool // the series title line
	headers   bool // a header line above each map
	axes      bool // a time axis under each map
	separator bool // a blank line between the maps
	footer    int  // footer lines
}

// verticalPlan is one way to spend the screen's lines; plans are tried from
// the richest to the barest until the maps get enough rows.
type verticalPlan struct {
	title, headers, axes, separator bool
	footer                          int
	minRows                         int
}

func verticalPlans() [6]verticalPlan {
	return [...]verticalPlan{
		{title: true, headers: true, axes: true, separator: true, footer: footerLines, minRows: 4},
		{title: true, headers: true, axes: true, footer: footerLines, minRows: 4},
		{title: true, headers: true, axes: true, footer: 1, minRows: 3},
		{title: true, headers: true, footer: 1, minRows: 2},
		{headers: true, footer: 1, minRows: 2},
		{minRows: 1},
	}
}

// Layout returns how many columns and how many latency rows per map fit on
// a width × height terminal showing show; build frames with
// heatmap.Options{Columns: columns, MaxRows: rowsPerMap, MinRows:
// min(rowsPerMap, 10)}. Both are at least 1 whatever the size.
func Layout(width, height int, show Show) (columns, rowsPerMap int) {
	l := plan(width, height, show)
	return l.mapW, l.rows
}

// plan lays out a screen; tiny terminals lose the legend, the latest values,
// the labels, the footer and the headers in turn, but never get negative or
// zero sizes.
func plan(width, height int, show Show) layout {
	width, height = max(width, 0), max(height, 0)
	l := layout{width: width, height: height}
	l.modes, l.maps = show.modes()
	l.horizontal()
	l.vertical()
	return l
}

func (l *layout) horizontal() {
	w := l.width
	l.labelW, l.latestW, l.legendW, l.swatchW = labelWidth, latestWidth, legendWide, swatchWide
	if w-l.labelW-l.latestW-l.legendW < minColumnsWideLegend {
		l.legendW, l.swatchW = legendNarrow, swatchNarrow
	}
	if w-l.labelW-l.latestW-l.legendW < minColumnsNarrowLegend {
		l.legendW, l.swatchW = 0, 0
	}
	if w-l.labelW-l.latestW < minColumnsLatest {
		l.latestW = 0
	}
	if w-l.labelW < minColumnsLabels {
		l.labelW = 0
	}
	l.mapW = max(1, w-l.labelW-l.latestW-l.legendW)
}

func (l *layout) vertical() {
	for _, p := range verticalPlans() {
		fixed := b2i(p.title) + p.footer + l.maps*(b2i(p.headers)+b2i(p.axes))
		if p.separator {
			fixed += l.maps - 1
		}
		rows := (l.height - fixed) / l.maps
		if rows >= p.minRows || p.minRows == 1 {
			l.title, l.headers, l.axes, l.separator, l.footer = p.title, p.headers, p.axes, p.separator, p.footer
			l.rows = rows
			break
		}
	}
	if l.rows < 1 && l.maps > 1 {
		// Not even a line per map: show the first map only.
		l.maps = 1
		l.rows = l.height
	}
	l.rows = max(l.rows, 1)
}

// lines returns how many lines a screen with n rows per map takes.
func (l *layout) lines(n int) int {
	total := b2i(l.title) + l.footer + l.maps*(n+b2i(l.headers)+b2i(l.axes))
	if l.separator {
		total += l.maps - 1
	}
	return total
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
