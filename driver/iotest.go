package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/iotest"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
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
	Scale  heatmap.Scale
}

// IOTest runs a storage latency test: the live heat map (on a terminal)
// while it runs, then the report.
func IOTest(ctx context.Context, c IOTestConfig) error {
	if c.Output != "" && !isImage(c.Output) && formatOf(c.Output) == "csv" {
		return fmt.Errorf("-o %s: write the report as .json or .txt, or the heat maps as .html, .svg or .png", c.Output)
	}
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), iotest.ProcsNeeded(c.Test)))
	// The readers' raw system calls hold their Go processors, so a
	// garbage-collection pause waits for the reads in flight and delays the
	// next ones. The test allocates little: collect only when the heap
	// nears 256 MiB instead of every few MB or every 2 minutes.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 << 20))
	prog := newProgress(c.Stderr, c.StderrTTY)
	diag := source.NewDiagnostics(prog.messages(), source.DefaultReportLimit)
	opts := c.Read
	opts.Progress = prog.statusLines()
	test := iotest.New(c.Test, opts, diag)
	o := &opened{sources: []source.Source{test}, live: true, diag: diag, prog: prog}
	fmt.Fprintf(c.Stderr, "latscope iotest: %s\n", iotest.Plan(test.Config()))

	tee, closeRecord, err := c.recorder()
	if err != nil {
		return err
	}
	all, runErr := c.runTest(ctx, o, test, tee)
	if err := closeRecord(len(all)); err != nil && runErr == nil {
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
	if err := c.writeReport(rep, all); err != nil {
		return err
	}
	if runErr == nil {
		runErr = ctx.Err() // interrupted: the partial report is out, exit 130
	}
	return runErr
}

// runTest runs the test with the live heat map on a terminal, else with a
// progress line on stderr, and returns every interval.
func (c IOTestConfig) runTest(ctx context.Context, o *opened, test *iotest.Test, tee func(stream.Interval) error) ([]stream.Interval, error) {
	if c.StdoutTTY && !c.Plain && c.Format != "json" {
		hc := HeatmapConfig{Config: c.Config, Scale: c.Scale}
		return hc.show(ctx, o, tee, test.Status)
	}
	var all []stream.Interval
	status := o.prog.statusLines()
	err := c.run(ctx, o, func(iv stream.Interval) error {
		all = append(all, iv)
		if c.StderrTTY {
			fmt.Fprintf(status, "%s\n", test.Status())
		}
		if tee != nil {
			return tee(iv)
		}
		return nil
	})
	o.finish(c.Stderr)
	return all, err
}

// recorder opens --record FILE: tee writes each interval and flushes it,
// so the file can be followed while the test runs.
func (c IOTestConfig) recorder() (tee func(stream.Interval) error, finish func(n int) error, err error) {
	if c.Record == "" {
		return nil, func(int) error { return nil }, nil
	}
	f, err := os.Create(c.Record)
	if err != nil {
		return nil, nil, fmt.Errorf("--record: %w", err)
	}
	w, err := recording.NewWriter(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("--record %s: %w", c.Record, err)
	}
	tee = func(iv stream.Interval) error {
		if err := w.Write(iv); err != nil {
			return fmt.Errorf("--record %s: %w", c.Record, err)
		}
		return w.Flush()
	}
	finish = func(n int) error {
		err := w.Close()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			fmt.Fprintf(c.Stderr, "latscope: recorded %d intervals to %s\n", n, c.Record)
		}
		return err
	}
	return tee, finish, nil
}

// writeReport prints the report on stdout and writes -o.
func (c IOTestConfig) writeReport(rep iotest.Report, all []stream.Interval) error {
	if err := writeIOReport(c.Stdout, rep, c.Format); err != nil {
		return err
	}
	switch {
	case c.Output == "":
		return nil
	case isImage(c.Output):
		hc := HeatmapConfig{Config: c.Config, Output: c.Output, Scale: c.Scale}
		hc.Sources = []string{"latscope iotest " + rep.Path}
		return hc.writeImage(all)
	}
	format := "table"
	if strings.EqualFold(formatOf(c.Output), "json") {
		format = "json"
	}
	err := writeFile(c.Output, func(w *bufio.Writer) error { return writeIOReport(w, rep, format) })
	if err == nil {
		fmt.Fprintf(c.Stderr, "latscope: wrote %s\n", c.Output)
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
