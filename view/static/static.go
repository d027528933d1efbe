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
	// MaxRows caps the latency rows per map; 0 means DefaultMaxRows
	// octaves' worth of the series' rows.
	MaxRows int
	// RowScale asks for 2^RowScale rows per power of two where the series'
	// durations are exact (stream.Grid.RowScale).
	RowScale int
	// ReportHTML is trusted markup (sections built by latscope itself, such
	// as a load test's report) that the HTML page shows before the maps;
	// the SVG and PNG images leave it out.
	ReportHTML string
	// Marks are moments drawn as labelled vertical lines across every map
	// (a load test's step boundaries).
	Marks []Mark
}

// Mark is a labelled moment on the time axis.
type Mark struct {
	At    time.Time
	Label string
}

func (o Options) maxColumns() int {
	if o.MaxColumns <= 0 {
		return DefaultMaxColumns
	}
	return o.MaxColumns
}

// frameOptions shape the frame of a series with 2^rowScale rows per
// octave: the default cap and the padding count octaves, so that finer
// rows show as many octaves as power-of-two rows do.
func (o Options) frameOptions(rowScale int) heatmap.Options {
	maxRows := o.MaxRows
	if maxRows <= 0 {
		maxRows = DefaultMaxRows << rowScale
	}
	return heatmap.Options{MaxRows: maxRows, MinRows: min(minRows<<rowScale, maxRows), Scale: o.Scale}
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
	// Panels are the charts that draw them (meanPanels).
	Panels []meanPanel
	Marks  []Mark
}

// End returns the end of the last column.
func (r *report) End() time.Time { return r.Start.Add(time.Duration(r.Columns) * r.Width) }

// Empty reports whether there is nothing to draw.
func (r *report) Empty() bool { return r.Columns == 0 || len(r.Frames) == 0 && len(r.Means) == 0 }

// buildReport resamples the intervals onto a grid that fits MaxColumns and
// builds every series' frame over all its columns.
func buildReport(ivs []stream.Interval, o Options) *report {
	r := &report{Title: o.Title, Sources: sourceNames(ivs), Scale: o.Scale, Marks: o.Marks}
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
	g := heatmap.FitGrid(ivs, r.Asked, o.maxColumns(), o.RowScale)
	r.Width = g.Width
	r.Grid, r.Skipped, r.Relative = g, g.Skipped(), g.Relative()
	r.Series = g.Series()
	for _, s := range r.Series {
		r.Frames = append(r.Frames, heatmap.Build(g, s, o.frameOptions(s.RowScale())))
	}
	if len(r.Frames) > 0 && len(r.Frames[0].Columns) > 0 {
		r.Columns = len(r.Frames[0].Columns)
		r.Start = r.Frames[0].Columns[0].Start
	}
	r.Means = meanSeriesOf(ivs)
	r.Panels = meanPanels(r.Means)
	if first, last, ok := g.Columns(); len(r.Frames) == 0 && len(r.Means) > 0 && ok {
		// Only mean series: the grid's columns give the time axis.
		r.Columns, r.Start = last-first+1, g.ColumnStart(first)
	}
	return r
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
