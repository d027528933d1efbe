package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/probe/iotest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/static"
)

// IOTestConfig configures `latscope iotest`.
type IOTestConfig struct {
	Config
	Test iotest.Config
	// Format is table or json for the report on stdout.
	Format string
	// Output writes the heat maps (.html, .svg, .png) or the report (.json,
	// .txt) to a file; Record writes the latency stream as a recording.
	Output string
	Record string
	Plain  bool
	MapStyle
}

// IOTest runs a storage latency test: the live heat map (on a terminal)
// while it runs, then the report.
func IOTest(ctx context.Context, c IOTestConfig) error {
	if c.Output != "" && !isImage(c.Output) && formatOf(c.Output) == "csv" {
		return fmt.Errorf("-o %s: write the report as .json or .txt, or the heat maps as .html, .svg or .png", c.Output)
	}
	defer holdProcessors(iotest.ProcsNeeded(c.Test))()
	prog := newProgress(c.Stderr, c.StderrTTY)
	diag := input.NewDiagnostics(prog.messages(), input.DefaultReportLimit)
	cfg := c.Test
	cfg.Progress = prog.statusLines()
	if cfg.Interval == 0 {
		cfg.Interval = c.Read.Interval
	}
	cfg.Events = c.Read.Events
	test := iotest.New(cfg, diag)
	o := &opened{sources: []source.Source{test}, live: true, diag: diag, prog: prog}
	fmt.Fprintf(c.Stderr, "latscope iotest: %s\n", iotest.Plan(test.Config()))

	tee, closeRecord, err := openRecorder(c.Record, diag, c.Stderr)
	if err != nil {
		return err
	}
	all, runErr := c.runTest(ctx, o, test, tee)
	if err := closeRecord(); err != nil && runErr == nil {
		runErr = err
	}
	res := test.Result()
	if len(res.Steps) == 0 {
		if runErr == nil {
			runErr = ctx.Err()
		}
		if runErr == nil {
			runErr = errors.New("the test stopped before any step was measured")
		}
		return runErr
	}
	rep := iotest.NewReport(res, iotest.DescribePath(res.Path), diag.Warnings())
	if err := c.writeReport(rep, res.Steps, all); err != nil {
		return err
	}
	if runErr == nil {
		runErr = ctx.Err() // interrupted: the partial report is out, exit 130
	}
	return runErr
}

// holdProcessors prepares the process for a load test whose workers block
// in raw system calls holding their Go processors (iotest readers, nettest
// sync connections): it gives each its own processor (procs in all) and,
// because a garbage-collection pause waits for the calls in flight and
// delays the next ones, collects only when the heap nears 256 MiB instead
// of every few MB or every 2 minutes (the tests allocate little). The
// returned function restores the collector's settings.
func holdProcessors(procs int) (restore func()) {
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), procs))
	gc, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(256<<20)
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}

// runTest runs the test with the live heat map on a terminal, else with a
// progress line on stderr, and returns every interval.
func (c IOTestConfig) runTest(ctx context.Context, o *opened, test *iotest.Test, tee func(stream.Interval) error) ([]stream.Interval, error) {
	live := liveRun{Config: c.Config, Plain: c.Plain || c.Format == "json", MapStyle: c.MapStyle, Status: test.Status, Tee: tee}
	if c.StderrTTY {
		status := o.prog.statusLines()
		live.Headless = func(stream.Interval) { fmt.Fprintf(status, "%s\n", test.Status()) }
	}
	return live.run(ctx, o)
}

// liveRun shows a live load test: the heat map on a terminal, else a
// callback per interval (progress or per-interval lines).
type liveRun struct {
	Config
	// Plain runs without the heat map even on a terminal.
	Plain bool
	MapStyle
	Status func() string
	// Tee receives every interval (a recording); Headless is called per
	// interval when there is no heat map.
	Tee      func(stream.Interval) error
	Headless func(stream.Interval)
}

// run runs o's sources to the end and returns every interval.
func (l liveRun) run(ctx context.Context, o *opened) ([]stream.Interval, error) {
	if l.StdoutTTY && !l.Plain {
		hc := HeatmapConfig{Config: l.Config, MapStyle: l.MapStyle}
		return hc.show(ctx, o, l.Tee, l.Status)
	}
	var all []stream.Interval
	err := l.Config.run(ctx, o, func(iv stream.Interval) error {
		all = append(all, iv)
		if l.Headless != nil {
			l.Headless(iv)
		}
		if l.Tee != nil {
			return l.Tee(iv)
		}
		return nil
	})
	o.finish(l.Stderr)
	return all, err
}

// openRecorder opens --record FILE of a live test: tee writes each
// interval and flushes it, so the file can be followed while the test
// runs; finish closes it. An empty path records nothing.
func openRecorder(path string, diag *input.Diagnostics, stderr io.Writer) (tee func(stream.Interval) error, finish func() error, err error) {
	if path == "" {
		return nil, func() error { return nil }, nil
	}
	out, err := openRecording(path, diag, true)
	if err != nil {
		return nil, nil, fmt.Errorf("--record: %w", err)
	}
	tee = func(iv stream.Interval) error {
		if err := out.Write(iv); err != nil {
			return fmt.Errorf("--record %s: %w", path, err)
		}
		return nil
	}
	finish = func() error {
		err := out.Close()
		if err == nil {
			fmt.Fprintf(stderr, "latscope: recorded %d intervals to %s\n", out.count, path)
		}
		return err
	}
	return tee, finish, nil
}

// writeReport prints the report on stdout and writes -o.
func (c IOTestConfig) writeReport(rep iotest.Report, steps []iotest.StepResult, all []stream.Interval) error {
	write := func(w io.Writer, format string) error { return writeIOReport(w, rep, format) }
	if err := write(c.Stdout, c.Format); err != nil {
		return err
	}
	page := static.Options{Title: "latscope iotest " + rep.Path, Scale: c.Scale, RowScale: c.RowScale}
	page.ReportHTML, page.Marks = ioTestPage(rep, steps)
	return writeTestOutput(c.Config, c.Output, page, all, write)
}

// writeTestOutput writes a load test's -o FILE: the heat maps for .html,
// .svg and .png (the page with the report sections and step marks of
// page), else the report as JSON (.json) or text.
func writeTestOutput(c Config, output string, page static.Options, all []stream.Interval,
	report func(w io.Writer, format string) error) error {
	switch {
	case output == "":
		return nil
	case isImage(output):
		if err := static.Write(output, all, page); err != nil {
			return err
		}
		fmt.Fprintf(c.Stderr, "latscope: wrote %s\n", output)
		return nil
	}
	format := "table"
	if formatOf(output) == "json" {
		format = "json"
	}
	err := writeFile(output, func(w *bufio.Writer) error { return report(w, format) })
	if err == nil {
		fmt.Fprintf(c.Stderr, "latscope: wrote %s\n", output)
	}
	return err
}

func writeIOReport(w io.Writer, rep iotest.Report, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteTable(w)
}
