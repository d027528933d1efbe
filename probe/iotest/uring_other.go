//go:build !linux

package iotest

import (
	"errors"
	"sync/atomic"
)

// errUringUnavailable says io_uring is Linux's.
var errUringUnavailable = errors.New("io_uring is only available on Linux")

func uringAvailable() error { return errUringUnavailable }

// uringWorker never runs outside Linux: Run refuses the engine first.
type uringWorker struct{ *worker }

func newUringWorker(w *worker, _ int) *uringWorker { return &uringWorker{w} }

func (u *uringWorker) runClosed(_ *atomic.Bool, report func(error)) { report(errUringUnavailable) }
