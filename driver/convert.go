package driver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/latscope/latscope/sink"
)

// ConvertConfig configures `latscope convert`.
type ConvertConfig struct {
	Config
	// To names the output format; empty: from Output's extension.
	To string
	// Output is the file to write; empty or "-": stdout.
	Output string
	// Endpoint is where a format that is sent (otlp) goes: a URL.
	Endpoint string
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
	out, err := openStreamOut(f, cc.Output, cc.Endpoint, cc.Stdout, o.diag, o.live)
	if err != nil {
		return err
	}
	err = cc.forEach(ctx, o, out.Write)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	o.finish(cc.Stderr)
	switch {
	case err == nil && out.sent:
		fmt.Fprintf(cc.Stderr, "latscope: sent %d intervals to %s (%s)\n", out.count, out.name, f.Name)
	case err == nil && out.name != "-":
		fmt.Fprintf(cc.Stderr, "latscope: wrote %d intervals to %s (%s)\n", out.count, out.name, f.Name)
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
