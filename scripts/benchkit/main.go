package benchkit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// Exit codes of the harnesses.
const (
	ExitHarness = 1 // the harness itself failed
	ExitUsage   = 2 // bad flags
	ExitFailed  = 3 // -strict and a requirement failed
)

// Options are the flags every harness has. Harnesses embed them in their
// configuration; Main reads -strict through them.
type Options struct {
	Repo   string // the repository's root, where the defaults point
	Out    string // -out: the JSON file written
	Strict bool   // -strict: exit ExitFailed when a requirement fails
}

// NewOptions returns the options of a harness run from the repository
// around the working directory.
func NewOptions() Options { return Options{Repo: RepoRoot()} }

func (o Options) options() Options { return o }

// Define defines -out, by default file in the repository's bench-out,
// holding what the JSON holds, and -strict, exiting ExitFailed when
// failure (e.g. "a requirement") fails.
func (o *Options) Define(fs *flag.FlagSet, file, holding, failure string) {
	fs.StringVar(&o.Out, "out", filepath.Join(o.Repo, "bench-out", file), "JSON file for "+holding)
	fs.BoolVar(&o.Strict, "strict", false, "exit 3 when "+failure+" fails")
}

// Config is a harness's parsed command line: a configuration that embeds
// Options.
type Config interface{ options() Options }

// NewFlagSet returns harness name's flag set, printing on stderr: -h shows
// the usage line, about (what the harness does) and the flags.
func NewFlagSet(name, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./scripts/%s [flags]\n\n%s\n\n", name, about)
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args with fs; the harnesses take no arguments besides
// flags. After -h it returns flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// Main runs harness name and returns its exit code: parse reads the flags
// (flag.ErrHelp after -h: exit 0; another error: ExitUsage), bench runs
// with Ctrl-C and SIGTERM cancelling its context and reports whether
// every requirement passed (an error: ExitHarness; a failure with
// -strict: ExitFailed).
func Main[C Config](name string, args []string, stdout, stderr io.Writer,
	parse func([]string, io.Writer) (C, error),
	bench func(context.Context, C, io.Writer, io.Writer) (pass bool, err error)) int {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pass, err := bench(ctx, c, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitHarness
	}
	if c.options().Strict && !pass {
		return ExitFailed
	}
	return 0
}
