package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// harnessT lets internal/testkit/dbtest, written for tests, start servers for this
// program: it implements the testing.TB methods dbtest and testenv call
// (Helper, Cleanup, Errorf, Fatal, Fatalf, Skipf). The embedded
// testing.TB is nil: another method would be a bug here, and crashes
// rather than pass silently. Like the testing package, Fatal and Skip end
// the calling goroutine, so dbtest calls run through Do.
type harnessT struct {
	testing.TB
	name string
	log  io.Writer

	mu       sync.Mutex
	cleanups []func()
	errs     []string
	skipped  string
}

// errSkipped says a server is missing on this machine.
var errSkipped = errors.New("skipped")

func newHarnessT(name string, log io.Writer) *harnessT {
	return &harnessT{name: name, log: log}
}

func (h *harnessT) Helper() {}

func (h *harnessT) Name() string { return h.name }

func (h *harnessT) Cleanup(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cleanups = append(h.cleanups, f)
}

func (h *harnessT) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(h.log, "dbbench: %s: %s\n", h.name, msg)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, msg)
}

func (h *harnessT) Fatal(args ...any) {
	h.Errorf("%s", strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
	runtime.Goexit()
}

func (h *harnessT) Fatalf(format string, args ...any) {
	h.Errorf(format, args...)
	runtime.Goexit()
}

func (h *harnessT) Skipf(format string, args ...any) {
	h.mu.Lock()
	h.skipped = fmt.Sprintf(format, args...)
	h.mu.Unlock()
	runtime.Goexit()
}

// Do runs f on its own goroutine (Fatal and Skip end it) and reports how
// it ended: nil, errSkipped wrapped with the reason, or the errors.
func (h *harnessT) Do(f func()) error {
	finished := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
		finished = true
	}()
	<-done
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.skipped != "":
		return fmt.Errorf("%s: %w: %s", h.name, errSkipped, h.skipped)
	case len(h.errs) > 0:
		return fmt.Errorf("%s: %s", h.name, strings.Join(h.errs, "; "))
	case !finished:
		return fmt.Errorf("%s: stopped without a reason", h.name)
	}
	return nil
}

// Close runs the cleanups, last registered first (stopping servers and
// removing their directories), as the testing package does.
func (h *harnessT) Close() {
	h.mu.Lock()
	cleanups := h.cleanups
	h.cleanups = nil
	h.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
}
