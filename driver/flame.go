package driver

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/flame/decode"
	"github.com/latscope/latscope/flame/filter"
	flamehtml "github.com/latscope/latscope/flame/html"
	"github.com/latscope/latscope/flame/load"
	"github.com/latscope/latscope/flame/pprof"
	"github.com/latscope/latscope/flame/svg"
	"github.com/latscope/latscope/input"
)

// StackFilters are the in-tool replacements for grep and sed in stack
// pipelines, applied after collapsing and decoding.
type StackFilters struct {
	// Include and Exclude keep or drop stacks with a frame matching.
	Include, Exclude []string
	// Focus re-roots every stack at this function (stacks without it go).
	Focus string
	// SkipAfter cuts the callers of these functions.
	SkipAfter []string
	// DB and View decode database frames (decode.Options).
	DB, View string
}

// FlameConfig configures `latscope collapse` and `latscope flame`.
type FlameConfig struct {
	Input load.Input
	// Diff holds BASE and NEW inputs of a differential (instead of
	// Input.Files).
	Diff    []string
	Filters StackFilters
	// Output is the file to write; its extension picks the format (.svg,
	// .html, .folded/.txt, .json, .pb.gz/.pprof or .pb for pprof). Empty:
	// stdout in Format.
	Output string
	// Format for stdout: folded, svg, html, json or pprof ("" : folded for
	// collapse, svg for flame).
	Format    string
	SVG       svg.Options
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	StdoutTTY bool
	StderrTTY bool
}

// Collapse writes the inputs' folded stacks.
func Collapse(ctx context.Context, fc FlameConfig) error {
	if fc.Format == "" && fc.Output == "" {
		fc.Format = "folded"
	}
	return writeFlame(ctx, fc)
}

// Flame renders the inputs as a flame graph.
func Flame(ctx context.Context, fc FlameConfig) error {
	if fc.Output == "" && fc.Format == "" {
		if fc.StdoutTTY {
			return errors.New("give -o out.svg or -o out.html (or redirect the SVG: latscope flame ... > out.svg)")
		}
		fc.Format = "svg"
	}
	return writeFlame(ctx, fc)
}

func writeFlame(ctx context.Context, fc FlameConfig) error {
	// The live heap is the distinct stacks; collecting at 5× instead of 2×
	// its size saves a third of a small render's time (measured against
	// inferno-flamegraph, docs/benchmarks.md) and keeps memory bounded.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	format, err := flameOutputFormat(fc.Output, fc.Format)
	if err != nil {
		return err
	}
	if err := checkStackFilters(fc.Filters); err != nil {
		return err
	}
	if format == formatPprof && fc.Output == "" && fc.StdoutTTY {
		return errors.New("--format pprof is binary: give -o out.pb.gz or redirect it (latscope collapse ... --format pprof > out.pb.gz)")
	}
	prog := newProgress(fc.Stderr, fc.StderrTTY)
	diag := input.NewDiagnostics(prog.messages(), input.DefaultReportLimit)
	p, err := fc.profile(ctx, diag, prog)
	diag.PrintSummary(fc.Stderr)
	if err != nil {
		if p == nil || p.Len() == 0 {
			return err
		}
		fmt.Fprintf(fc.Stderr, "latscope: %v (writing the %d stacks read before)\n", err, p.Len())
	}
	if p.Len() == 0 {
		return errors.New("no stacks to draw: nothing in the input was read as a stack (the warnings above say why)")
	}
	sampleType, sampleUnit := p.SampleType, p.SampleUnit
	p = applyStackFilters(p, fc.Filters)
	p.SampleType, p.SampleUnit = sampleType, sampleUnit
	if p.Len() == 0 {
		return errors.New("no stacks left to draw: the filters (--include, --exclude, --focus) or --view plan removed every stack (with --db, is this a profile of that database's processes?)")
	}
	if fc.Output == "" {
		return renderFlame(fc.Stdout, p, format, fc)
	}
	if err := writeFile(fc.Output, func(w *bufio.Writer) error { return renderFlame(w, p, format, fc) }); err != nil {
		return err
	}
	fmt.Fprintf(fc.Stderr, "latscope: wrote %s: %d %s in %d distinct stacks\n", fc.Output, p.Total(), cmp.Or(fc.SVG.CountName, countName(p), "samples"), p.Len())
	return nil
}

// countName names what a profile's counts are for the graphs, when its
// input said (a pprof profile's unit, e.g. nanoseconds); empty: samples.
func countName(p *flame.Profile) string {
	if p.SampleUnit == "" || p.SampleUnit == "count" {
		return p.SampleType
	}
	return p.SampleUnit
}

// profile loads the inputs, or BASE and NEW of a differential.
func (fc FlameConfig) profile(ctx context.Context, diag *input.Diagnostics, prog *progress) (*flame.Profile, error) {
	in := fc.Input
	in.Stdin = fc.Stdin
	if fc.Filters.DB != "" {
		in.Options.FrameHook = decode.MarkFrame(fc.Filters.DB)
	}
	if len(fc.Diff) == 0 {
		return load.Profile(ctx, in, diag, prog.forStacks())
	}
	if len(fc.Diff) != 2 || len(in.Files) > 0 {
		return nil, errors.New("--diff takes exactly two inputs: BASE NEW")
	}
	profiles := make([]*flame.Profile, 2)
	for i, name := range fc.Diff {
		one := in
		one.Files = []string{name}
		p, err := load.Profile(ctx, one, diag, prog.forStacks())
		if err != nil {
			return nil, err
		}
		profiles[i] = p
	}
	return flame.Differential(profiles[0], profiles[1]), nil
}

// checkStackFilters validates the filters before any input is read.
func checkStackFilters(f StackFilters) error {
	for _, re := range append(append([]string(nil), f.Include...), f.Exclude...) {
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("--include/--exclude %q: %w", re, err)
		}
	}
	if f.DB == "" {
		if f.View != "" {
			return errors.New("--view needs --db oracle|postgres")
		}
		return nil
	}
	return decode.Options{DB: f.DB, View: f.View}.Validate()
}

// applyStackFilters decodes database frames, then filters.
func applyStackFilters(p *flame.Profile, f StackFilters) *flame.Profile {
	if f.DB != "" {
		// Frames from perf input carry the database binary's marker; other
		// inputs have no module names and are decoded by name (--db).
		p = decode.Apply(p, decode.Options{DB: f.DB, View: f.View, Marked: hasMarker(p)})
	}
	for _, re := range f.Include {
		p = filter.Include(p, regexp.MustCompile(re))
	}
	for _, re := range f.Exclude {
		p = filter.Exclude(p, regexp.MustCompile(re))
	}
	if f.Focus != "" {
		p = filter.Focus(p, f.Focus)
	}
	if len(f.SkipAfter) > 0 {
		p = filter.SkipAfter(p, f.SkipAfter...)
	}
	return p
}

func hasMarker(p *flame.Profile) bool {
	for _, s := range p.InOrder() {
		if strings.Contains(s.Frames, decode.Marker) {
			return true
		}
	}
	return false
}

// flameOutputFormat picks the output format from -o's extension or
// --format.
func flameOutputFormat(output, format string) (string, error) {
	if output != "" {
		if strings.HasSuffix(strings.ToLower(output), ".pb.gz") {
			return formatPprof, nil
		}
		switch strings.ToLower(filepath.Ext(output)) {
		case ".pprof":
			return formatPprof, nil
		case ".pb":
			return formatPprofRaw, nil
		case ".svg":
			return "svg", nil
		case ".html", ".htm":
			return "html", nil
		case ".folded", ".txt", ".collapsed":
			return "folded", nil
		case ".json":
			return "json", nil
		}
		return "", fmt.Errorf("-o %s: write .svg, .html, .folded (or .txt), .json or .pb.gz (pprof)", output)
	}
	switch format {
	case "svg", "html", "folded", "json", formatPprof:
		return format, nil
	case "table":
		return "folded", nil
	}
	return "", fmt.Errorf("--format %q: want folded, svg, html, json or pprof", format)
}

// The pprof output formats: gzip-compressed protobuf (.pb.gz, what pprof
// tools write) and the bare protobuf (.pb).
const (
	formatPprof    = "pprof"
	formatPprofRaw = "pprof-raw"
)

func renderFlame(w io.Writer, p *flame.Profile, format string, fc FlameConfig) error {
	var describe func(string) string
	if db := fc.Filters.DB; db != "" {
		describe = func(name string) string { return decode.Describe(db, name) }
	}
	count := cmp.Or(fc.SVG.CountName, countName(p))
	switch format {
	case "svg":
		o := fc.SVG
		o.Describe, o.CountName = describe, count
		return svg.Write(w, p, o)
	case "html":
		return flamehtml.Write(w, p, flamehtml.Options{
			Title: fc.SVG.Title, Subtitle: fc.SVG.Subtitle, Inverted: fc.SVG.Inverted,
			CountName: count, NameType: fc.SVG.NameType, FlameChart: fc.SVG.FlameChart, Reverse: fc.SVG.Reverse,
			Describe: describe,
		})
	case "json":
		return writeFlameJSON(w, p)
	case formatPprof, formatPprofRaw:
		return pprof.Write(w, p, pprof.WriteOptions{SampleType: fc.SVG.CountName}, format == formatPprofRaw)
	}
	return p.WriteFolded(w)
}

// writeFlameJSON prints totals and the functions by self and total
// samples, for scripts.
func writeFlameJSON(w io.Writer, p *flame.Profile) error {
	out := struct {
		Samples    int64                `json:"samples"`
		Stacks     int                  `json:"stacks"`
		Diff       bool                 `json:"diff"`
		SampleType string               `json:"sample_type,omitempty"`
		SampleUnit string               `json:"sample_unit,omitempty"`
		Functions  []flame.FunctionStat `json:"functions"`
	}{p.Total(), p.Len(), p.Diff, p.SampleType, p.SampleUnit, flame.Functions(p)}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
