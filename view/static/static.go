// Package static writes a whole recording as one image: a self-contained
// HTML page (inline SVG maps, tooltips, summary table), a standalone SVG or a
// PNG. Every format draws the same layout: for each series a frequency and an
// intensity heat map built by view/heatmap over a stream.Grid, with row
// labels, a time axis, a colour legend and the footer statistics.
package static

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// Defaults for Options fields left at zero.
const (
	DefaultMaxColumns = 1200
	DefaultMaxRows    = 24
	// minRows pads sparse series so a map keeps a readable height.
	minRows = 8
)

// Options shape an image.
type Options struct {
	// Title heads the image; empty means the source names.
	Title string
	// Scale maps values to colour levels (linear or log).
	Scale heatmap.Scale
	// ColumnWidth is the wall-clock width of one column; 0 infers it from
	// the intervals (stream.InferWidth).
	ColumnWidth time.Duration
	// MaxColumns caps the columns; a recording that needs more gets wider
	// columns (a whole multiple of ColumnWidth). 0 means DefaultMaxColumns.
	MaxColumns int
	// MaxRows caps the latency rows per map; 0 means DefaultMaxRows.
	MaxRows int
}

func (o Options) maxColumns() int {
	if o.MaxColumns <= 0 {
		return DefaultMaxColumns
	}
	return o.MaxColumns
}

func (o Options) maxRows() int {
	if o.MaxRows <= 0 {
		return DefaultMaxRows
	}
	return o.MaxRows
}

// ErrUnsupportedFormat is returned by Write for an unknown file extension.
var ErrUnsupportedFormat = errors.New("unsupported image format")

// writers maps a lower-case file extension to its writer.
func writerFor(path string) (func(io.Writer, []stream.Interval, Options) error, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".html", ".htm":
		return WriteHTML, nil
	case ".svg":
		return WriteSVG, nil
	case ".png":
		return WritePNG, nil
	default:
		return nil, fmt.Errorf("%s: %w %q (supported: .html, .htm, .svg, .png)", path, ErrUnsupportedFormat, ext)
	}
}

// Write writes the recording to path in the format its extension names:
// .html/.htm, .svg or .png. A failed write removes the partial file.
func Write(path string, ivs []stream.Interval, o Options) (err error) {
	write, err := writerFor(path)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing image: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing %s: %w", path, cerr)
		}
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	if err := write(f, ivs, o); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// report is what every format draws: the grid, one frame per series and the
// recording's extent.
type report struct {
	Title    string
	Sources  []string
	Grid     *stream.Grid
	Series   []*stream.GridSeries
	Frames   []heatmap.Frame
	Width    time.Duration // column width used
	Asked    time.Duration // column width asked for or inferred
	Columns  int
	Start    time.Time // start of the first column
	Relative bool
	Skipped  int // intervals the grid could not place
	Scale    heatmap.Scale
	// Means are the series known only as a count and a total per
	// interval, drawn as lines after the heat maps.
	Means []*stream.MeanSeries
}

// End returns the end of the last column.
func (r *report) End() time.Time { return r.Start.Add(time.Duration(r.Columns) * r.Width) }

// Empty reports whether there is nothing to draw.
func (r *report) Empty() bool { return r.Columns == 0 || len(r.Frames) == 0 && len(r.Means) == 0 }

// buildReport resamples the intervals onto a grid that fits MaxColumns and
// builds every series' frame over all its columns.
func buildReport(ivs []stream.Interval, o Options) *report {
	r := &report{Title: o.Title, Sources: sourceNames(ivs), Scale: o.Scale}
	if r.Title == "" {
		r.Title = strings.Join(r.Sources, ", ")
	}
	if r.Title == "" {
		r.Title = "latscope heat map"
	}
	r.Asked = o.ColumnWidth
	if r.Asked <= 0 {
		r.Asked = stream.InferWidth(ivs)
	}
	if r.Asked <= 0 {
		r.Asked = firstDuration(ivs)
	}
	if r.Asked <= 0 {
		return r // no interval with a duration: nothing to place
	}
	r.Width = fitWidth(ivs, r.Asked, o.maxColumns())
	g := placeAll(ivs, r.Width)
	// fitWidth mirrors the grid's column arithmetic; should they ever
	// disagree, widen again rather than build a frame of countless columns.
	for tries := 0; gridColumns(g) > o.maxColumns() && tries < 8; tries++ {
		factor := time.Duration(gridColumns(g)/o.maxColumns() + 1)
		if r.Width > math.MaxInt64/factor {
			break
		}
		r.Width *= factor
		g = placeAll(ivs, r.Width)
	}
	r.Grid, r.Skipped, r.Relative = g, g.Skipped(), g.Relative()
	r.Series = g.Series()
	hopt := heatmap.Options{MaxRows: o.maxRows(), MinRows: min(minRows, o.maxRows()), Scale: o.Scale}
	for _, s := range r.Series {
		r.Frames = append(r.Frames, heatmap.Build(g, s, hopt))
	}
	if len(r.Frames) > 0 && len(r.Frames[0].Columns) > 0 {
		r.Columns = len(r.Frames[0].Columns)
		r.Start = r.Frames[0].Columns[0].Start
	}
	r.Means = meanSeriesOf(ivs)
	if first, last, ok := g.Columns(); len(r.Frames) == 0 && len(r.Means) > 0 && ok {
		// Only mean series: the grid's columns give the time axis.
		r.Columns, r.Start = last-first+1, g.ColumnStart(first)
	}
	return r
}

func placeAll(ivs []stream.Interval, width time.Duration) *stream.Grid {
	g := stream.NewGrid(width)
	for _, iv := range ivs {
		g.Add(iv)
	}
	return g
}

func gridColumns(g *stream.Grid) int {
	first, last, ok := g.Columns()
	if !ok {
		return 0
	}
	return last - first + 1
}

// sourceNames returns the distinct source names in order of appearance.
func sourceNames(ivs []stream.Interval) []string {
	var names []string
	seen := map[string]bool{}
	for _, iv := range ivs {
		if iv.Source != "" && !seen[iv.Source] {
			seen[iv.Source] = true
			names = append(names, iv.Source)
		}
	}
	return names
}

func firstDuration(ivs []stream.Interval) time.Duration {
	for _, iv := range ivs {
		if iv.Duration > 0 {
			return iv.Duration
		}
	}
	return 0
}

// fitWidth returns the smallest whole multiple of width whose grid holds the
// recording in at most maxCols columns. Whole multiples keep every source
// interval inside a fixed number of columns, so widening adds no aliasing
// stripes; rates stay right because the grid divides by observed time.
//
// Column 0 starts at the first interval, so only unsorted input (an interval
// before the first) with maxCols < 3 can end up one column over.
func fitWidth(ivs []stream.Interval, width time.Duration, maxCols int) time.Duration {
	lo, hi, ok := extent(ivs)
	if !ok || maxCols <= 0 {
		return width
	}
	span := hi - lo
	// lower: span/(width·maxCols) columns' worth; upper: enough that the
	// partial first and last columns still fit.
	lower := max(1, span/time.Duration(maxCols)/width)
	upper := max(lower, span/time.Duration(max(maxCols-2, 1))/width+1)
	upper = min(upper, math.MaxInt64/width) // centuries apart: do not overflow
	for k := lower; k < upper && k < lower+64; k++ {
		if columnsNeeded(lo, hi, k*width) <= maxCols {
			return k * width
		}
	}
	return upper * width
}

// extent returns the offsets from the grid origin (the first interval with
// a duration, whose column the grid always keeps) of the earliest start and
// latest end the grid draws: non-gap intervals of the origin's clock kind.
func extent(ivs []stream.Interval) (lo, hi time.Duration, ok bool) {
	var origin time.Time
	relative := false
	for _, iv := range ivs {
		if iv.Duration <= 0 {
			continue
		}
		if !ok {
			origin, relative, ok = iv.Start, iv.Relative, true
			lo, hi = 0, 1 // column 0
		}
		if iv.Gap || iv.Relative != relative {
			continue
		}
		s := iv.Start.Sub(origin)
		e := s + iv.Duration
		if e < s { // saturated or overflowed far-away times
			e = s
		}
		lo, hi = min(lo, s), max(hi, e)
	}
	return lo, hi, ok
}

// columnsNeeded mirrors stream.Grid's column indexing for [lo, hi).
func columnsNeeded(lo, hi, width time.Duration) int {
	if hi <= lo {
		return 1
	}
	first, last := floorDiv(lo, width), floorDiv(hi-1, width)
	return int(last - first + 1)
}

func floorDiv(a, b time.Duration) time.Duration {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
