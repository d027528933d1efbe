package driver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/latscope/latscope/analysis/profile"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// ProfileConfig is what `latscope profile` runs.
type ProfileConfig struct {
	Traces []string
	Read   source.Options
	// Format is table or json (stdout); Output writes by extension:
	// .html, .json, else table.
	Format string
	Output string
	// Top is how many statements are detailed.
	Top    int
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Profile builds the response-time profile of 10046 traces and writes it.
func Profile(ctx context.Context, pc ProfileConfig) error {
	diag := input.NewDiagnostics(pc.Stderr, input.DefaultReportLimit)
	var inputs []profile.Input
	for _, name := range pc.Traces {
		in, closeIn, err := pc.openTrace(name, diag)
		if err != nil {
			return err
		}
		defer closeIn()
		inputs = append(inputs, in)
	}
	p, err := profile.Build(ctx, inputs, pc.Read)
	if err != nil {
		return err
	}
	for _, pr := range diag.Problems() {
		if pr.Count > len(pr.First) {
			fmt.Fprintf(pc.Stderr, "latscope: %s: %d malformed line(s) skipped in all (first %d shown above)\n", pr.Source, pr.Count, len(pr.First))
		}
	}
	if len(p.Calls) == 0 && p.WaitUS == 0 && len(p.Events) == 0 {
		return fmt.Errorf("%s: no database call or WAIT line: not a 10046 trace?", strings.Join(pc.Traces, ", "))
	}
	write := func(w *bufio.Writer, format string) error {
		switch format {
		case "json":
			return profile.WriteJSON(w, p)
		case "html":
			return profile.WriteHTML(w, p, pc.Top)
		}
		return profile.WriteTable(w, p, pc.Top)
	}
	if pc.Output != "" {
		format := outputFormatOf(pc.Output) // profile writes no CSV: a .csv file gets the table
		return writeFile(pc.Output, func(w *bufio.Writer) error { return write(w, format) })
	}
	bw := bufio.NewWriter(pc.Stdout)
	if err := write(bw, pc.Format); err != nil {
		return err
	}
	return bw.Flush()
}

// openTrace opens a trace file (gzip unwrapped) or, for "-", stdin.
func (pc ProfileConfig) openTrace(name string, diag *input.Diagnostics) (profile.Input, func(), error) {
	var r io.Reader = pc.Stdin
	closeIn := func() {}
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return profile.Input{}, nil, err
		}
		r, closeIn = f, func() { f.Close() }
	}
	br, err := input.Decompressed(name, r, 64<<10)
	if err != nil {
		closeIn()
		return profile.Input{}, nil, err
	}
	return profile.Input{Name: name, Reader: br, Diag: diag}, closeIn, nil
}
