package benchkit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes of the harnesses.
const (
	ExitHarness = 1 // the harness itself failed
	ExitUsage   = 2 // bad flags
	ExitFailed  = 3 // -strict and a requirement failed
)

// Main runs a harness named name: parse reads the flags (flag.ErrHelp
// after -h), bench runs with Ctrl-C and SIGTERM cancelling its context
// and reports whether every requirement passed and whether -strict was
// given. It returns the exit code.
func Main[C any](name string, args []string, stdout, stderr io.Writer,
	parse func([]string, io.Writer) (C, error),
	bench func(context.Context, C, io.Writer, io.Writer) (pass, strict bool, err error)) int {
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
	pass, strict, err := bench(ctx, c, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitHarness
	}
	if strict && !pass {
		return ExitFailed
	}
	return 0
}
