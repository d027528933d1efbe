// Command latscope makes database and host latency visible: latency heat
// maps, reports and recordings from Oracle traces and histograms, probes and
// other latency sources. This file only maps flags onto the driver.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

// Exit codes.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := environment{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
	cmd := newRootCommand(env)
	cmd.SetArgs(os.Args[1:])
	err := cmd.ExecuteContext(ctx)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(env.stderr, "latscope: %v\n", err)
	}
	os.Exit(exitCode(ctx, err))
}

func exitCode(ctx context.Context, err error) int {
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.As(err, &usage):
		return exitUsage
	}
	return exitError
}

// usageError marks errors in how latscope was called.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}
