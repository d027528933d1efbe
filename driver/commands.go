package driver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
	"github.com/latscope/latscope/view/report"
	"github.com/latscope/latscope/view/reportset"
	"github.com/latscope/latscope/view/static"
	"github.com/latscope/latscope/view/terminal"
)

// ReportConfig configures `latscope report`.
type ReportConfig struct {
	Config
	// Format is table, json or csv for stdout.
	Format string
	// Output, when set, writes the report (or an image) to a file whose
	// extension picks the format: .json .csv .txt .html .svg .png.
	Output    string
	Intervals bool
	// Set prints the host series in one of reportset's layouts (sar -u,
	// iostat -x ...) instead of the per-series summary.
	Set string
	// MapStyle draws the heat maps of an image output.
	MapStyle
}

// Report summarises the sources per series.
func Report(ctx context.Context, rc ReportConfig) error {
	o, err := rc.open(ctx)
	if err != nil {
		return err
	}
	rec, err := rc.collect(ctx, o)
	if err != nil {
		return err
	}
	o.finish(rc.Stderr)
	if rc.Set != "" {
		return rc.writeSet(rec)
	}
	r := report.Build(rec, o.diag)
	for _, src := range o.sources {
		if s, ok := src.(stream.Sampler); ok {
			r.AddSampler(src.Name(), o.stats.Fill(s.SamplerStats()))
		}
	}
	if rc.Output != "" {
		if isImage(rc.Output) {
			rc.noteOctaveRows(rc.Stderr, rec.Intervals())
			return static.Write(rc.Output, rec.Intervals(), static.Options{Title: strings.Join(rc.Sources, ", "), Scale: rc.Scale, RowScale: rc.RowScale})
		}
		return writeFile(rc.Output, func(f *bufio.Writer) error {
			return report.Write(f, r, formatOf(rc.Output), report.Options{Intervals: true})
		})
	}
	return report.Write(rc.Stdout, r, rc.Format, report.Options{Intervals: rc.Intervals})
}

// writeSet prints the recording's host series in the layout of a report
// set, on stdout or in -o FILE (by extension: .json, .csv, else a table).
func (rc ReportConfig) writeSet(rec *stream.Recording) error {
	set, err := reportset.Lookup(rc.Set)
	if err != nil {
		return err
	}
	t := reportset.Build(rec.Intervals(), set, rc.Read.Interval)
	if rc.Output == "" {
		return reportset.Write(rc.Stdout, t, rc.Format)
	}
	if isImage(rc.Output) {
		return fmt.Errorf("-o %s: a report set is written as .txt, .json or .csv", rc.Output)
	}
	return writeFile(rc.Output, func(f *bufio.Writer) error { return reportset.Write(f, t, formatOf(rc.Output)) })
}

// HeatmapConfig configures `latscope heatmap`.
type HeatmapConfig struct {
	Config
	// Output writes the whole recording as .html, .svg or .png.
	Output string
	MapStyle
	Show  terminal.Show
	Once  bool
	Plain bool
	// Speed paces replays at N× recorded time (0: one column per frame).
	Speed float64
	// ColumnWidth is the heat-map column width (0: from the data).
	ColumnWidth time.Duration
	// Format "json" or "csv" prints the whole heat-map matrix of every
	// series instead of drawing ("" or "table": draw).
	Format string
}

// MapStyle is how heat maps are drawn, by every command that draws them.
type MapStyle struct {
	Scale heatmap.Scale
	// RowScale asks for 2^RowScale latency rows per power of two where a
	// series' durations are exact (--rows-per-octave).
	RowScale int
}

// Heatmap draws terminal heat maps and/or writes an image of the recording.
func Heatmap(ctx context.Context, hc HeatmapConfig) error {
	o, err := hc.open(ctx)
	if err != nil {
		return err
	}
	if hc.Output != "" && !isImage(hc.Output) {
		return fmt.Errorf("-o %s: heat maps are written as .html, .svg or .png", hc.Output)
	}
	if hc.Format == "json" || hc.Format == "csv" {
		return hc.writeMatrix(ctx, o)
	}
	// A finished recording written to a file needs no terminal replay.
	if hc.Output != "" && !o.live {
		rec, err := hc.collect(ctx, o)
		if err != nil {
			return err
		}
		o.finish(hc.Stderr)
		hc.noteOctaveRows(hc.Stderr, rec.Intervals())
		return hc.writeImage(rec.Intervals())
	}
	all, err := hc.show(ctx, o, nil, nil)
	hc.noteOctaveRows(hc.Stderr, all)
	if err != nil {
		return err
	}
	if hc.Output != "" {
		return hc.writeImage(all)
	}
	return nil
}

// show draws o's sources on the terminal (live ones as their intervals
// come, finished ones replayed) and returns every interval. tee, when set,
// also receives every interval of a live source as it comes; status, when
// set, is shown in the title.
func (hc HeatmapConfig) show(ctx context.Context, o *opened, tee func(stream.Interval) error, status func() string) ([]stream.Interval, error) {
	plain := hc.Plain || !hc.StdoutTTY
	topts := terminal.Options{
		Out: hc.Stdout, Plain: plain, Once: hc.Once, Scale: hc.Scale, Show: hc.Show, RowScale: hc.RowScale,
		Replay: !o.live, Speed: hc.Speed, ColumnWidth: hc.ColumnWidth,
		FullScreen: hc.StdoutTTY && !plain && !hc.Once, Status: status,
	}
	var tty *terminal.TTY
	if hc.StdoutTTY && !hc.Once {
		var err error
		if tty, err = terminal.OpenTTY(); err == nil {
			defer tty.Restore()
			topts.Keys, topts.Size = tty, tty.Size
			// A replayed file stays on screen to be browsed; a live run
			// (make demo, --duration) ends by itself.
			topts.StayOpen = !o.live
		}
	}
	srcCtx, stopSources := context.WithCancel(ctx)
	defer stopSources()
	feed := make(chan stream.Interval, 256)
	var all []stream.Interval
	runErr := make(chan error, 1)
	go func() {
		defer close(feed)
		runErr <- hc.forEach(srcCtx, o, func(iv stream.Interval) error {
			all = append(all, iv)
			if tee != nil {
				if err := tee(iv); err != nil {
					return err
				}
			}
			select {
			case feed <- iv:
				return nil
			case <-srcCtx.Done():
				return srcCtx.Err()
			}
		})
	}()
	viewErr := terminal.Run(ctx, feed, topts)
	if tty != nil {
		tty.Restore() // before anything else is printed
	}
	// The view may stop early (q): stop the sources and let them finish.
	stopSources()
	for range feed {
	}
	srcErr := <-runErr
	o.finish(hc.Stderr)
	if viewErr != nil {
		return all, viewErr
	}
	return all, srcErr
}

// writeMatrix reads the sources to the end (live ones for --duration) and
// prints every series' heat-map matrix as JSON or CSV.
func (hc HeatmapConfig) writeMatrix(ctx context.Context, o *opened) error {
	rec, err := hc.collect(ctx, o)
	if err != nil {
		return err
	}
	o.finish(hc.Stderr)
	ivs := rec.Intervals()
	hc.noteOctaveRows(hc.Stderr, ivs)
	width := hc.ColumnWidth
	if width <= 0 {
		width = stream.InferWidth(ivs)
	}
	g := heatmap.FitGrid(ivs, width, heatmap.MaxMatrixColumns, hc.RowScale)
	if g.Width != width {
		fmt.Fprintf(hc.Stderr, "latscope: the data spans more than %d columns of %s: the matrix has columns of %s (give a wider --interval to choose)\n",
			heatmap.MaxMatrixColumns, width, g.Width)
	}
	if hc.Format == "csv" {
		err = heatmap.WriteCSV(hc.Stdout, g, hc.Scale)
	} else {
		err = heatmap.WriteJSON(hc.Stdout, g, hc.Scale)
	}
	if err == nil && hc.Output != "" {
		err = hc.writeImage(ivs)
	}
	return err
}

func (hc HeatmapConfig) writeImage(ivs []stream.Interval) error {
	err := static.Write(hc.Output, ivs, static.Options{Title: strings.Join(hc.Sources, ", "), Scale: hc.Scale, ColumnWidth: hc.ColumnWidth, RowScale: hc.RowScale})
	if err == nil {
		fmt.Fprintf(hc.Stderr, "latscope: wrote %s\n", hc.Output)
	}
	return err
}

// RecordConfig configures `latscope record`.
type RecordConfig struct {
	Config
	// Output is the recording file; Archive a data directory of the
	// embedded archive. One of them is set.
	Output  string
	Archive string
}

// Record saves the normalised stream of the sources in latscope's recording
// format; live sources are flushed interval by interval so the file can be
// followed while it grows.
func Record(ctx context.Context, rc RecordConfig) error {
	if rc.Archive != "" {
		return recordArchive(ctx, rc)
	}
	if rc.Output == "" {
		return fmt.Errorf("record needs -o FILE (for example -o capture.lsr) or --archive DIR")
	}
	o, err := rc.open(ctx)
	if err != nil {
		return err
	}
	out, err := openRecording(rc.Output, o.diag, o.live)
	if err != nil {
		return err
	}
	err = rc.forEach(ctx, o, out.Write)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	o.finish(rc.Stderr)
	if err == nil {
		fmt.Fprintf(rc.Stderr, "latscope: recorded %d intervals to %s\n", out.count, rc.Output)
	}
	return err
}

func isImage(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm", ".svg", ".png":
		return true
	}
	return false
}

// outputFormatOf maps an -o file's extension to the format names of the
// analysis commands (awr, profile, diff): html, csv, json, else table.
func outputFormatOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm":
		return "html"
	case ".csv":
		return "csv"
	case ".json":
		return "json"
	}
	return "table"
}

// formatOf maps a report file extension to a report format.
func formatOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return report.FormatJSON
	case ".csv":
		return report.FormatCSV
	}
	return report.FormatTable
}

func writeFile(path string, write func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// noteOctaveRows says on w (stderr) which series keep one row per power of
// two although finer rows were asked for: their sources give bucket counts,
// not exact durations, and splitting a bucket would invent where its events
// fell.
func (m MapStyle) noteOctaveRows(w io.Writer, ivs []stream.Interval) {
	if m.RowScale == 0 {
		return
	}
	var coarse []string
	units := map[stream.Key]hist.Unit{} // the grid keeps a series' first unit
	noted := map[stream.Key]bool{}
	for _, iv := range ivs {
		for _, s := range iv.Series {
			unit, ok := units[s.Key]
			if !ok {
				unit, units[s.Key] = s.Hist.Unit, s.Hist.Unit
			}
			// Rebinning to another unit cannot keep finer rows exact either.
			if noted[s.Key] || (s.Hist.CanSplitRows(m.RowScale) && s.Hist.Unit == unit) {
				continue
			}
			noted[s.Key] = true
			coarse = append(coarse, s.Key.String())
		}
	}
	if len(coarse) == 0 {
		return
	}
	slices.Sort(coarse)
	fmt.Fprintf(w, "latscope: --rows-per-octave %d: rows stay per octave (power-of-two buckets, not exact durations) for %s\n",
		1<<m.RowScale, strings.Join(coarse, ", "))
}
