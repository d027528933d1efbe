package driver

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/stream"
)

// ConvertConfig configures `latscope convert`.
type ConvertConfig struct {
	Config
	// To names the output format; empty: from Output's extension.
	To string
	// Output is the file to write; empty or "-": stdout.
	Output string
}

// Convert writes the sources' stream in another tool's format.
func Convert(ctx context.Context, cc ConvertConfig) error {
	f, err := sinkFor(cc.To, cc.Output)
	if err != nil {
		return err
	}
	o, err := cc.open(ctx)
	if err != nil {
		return err
	}
	var out io.Writer = cc.Stdout
	name := "-"
	var file *os.File
	if cc.Output != "" && cc.Output != "-" {
		if file, err = os.Create(cc.Output); err != nil {
			return err
		}
		out, name = file, cc.Output
	}
	w, err := f.New(out, sink.Options{Name: name, Diag: o.diag})
	if err != nil {
		if file != nil {
			file.Close()
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	n := 0
	write := func(iv stream.Interval) error {
		n++
		return w.Write(iv)
	}
	if o.live {
		err = cc.run(ctx, o, write)
	} else {
		var rec *stream.Recording
		if rec, err = cc.collect(ctx, o); err == nil {
			for _, iv := range rec.Intervals() {
				if err = write(iv); err != nil {
					break
				}
			}
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	o.finish(cc.Stderr)
	if err == nil && name != "-" {
		fmt.Fprintf(cc.Stderr, "latscope: wrote %d intervals to %s (%s)\n", n, name, f.Name)
	}
	return err
}

// sinkFor picks the output format by name, else by the file's extension.
func sinkFor(to, output string) (sink.Format, error) {
	var names []string
	for _, f := range Sinks() {
		names = append(names, f.Name)
		if to != "" && f.Name == to {
			return f, nil
		}
	}
	if to != "" {
		return sink.Format{}, fmt.Errorf("unknown output format %q (known: %s)", to, strings.Join(names, ", "))
	}
	ext := strings.ToLower(filepath.Ext(output))
	for _, f := range Sinks() {
		if ext != "" && f.Extension == ext {
			return f, nil
		}
	}
	return sink.Format{}, fmt.Errorf("say which format to write with --to (one of %s)", strings.Join(names, ", "))
}
