package source

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/latscope/latscope/stream"
)

// RunAll runs the sources concurrently and calls emit, from the calling
// goroutine only, for every valid interval. With byFile each series keeps its
// source apart (Key.Source); otherwise the same event and instance from
// different sources are later summed. Invalid intervals are reported to diag
// and dropped. It returns the sources' errors joined; a failing source does
// not stop the others.
func RunAll(ctx context.Context, srcs []Source, byFile bool, diag *Diagnostics, emit func(stream.Interval) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan stream.Interval, 64)
	errs := make([]error, len(srcs))
	var wg sync.WaitGroup
	for i, src := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := src.Run(ctx, func(iv stream.Interval) error {
				select {
				case ch <- iv:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				errs[i] = fmt.Errorf("%s: %w", src.Name(), err)
			}
		}()
	}
	go func() { wg.Wait(); close(ch) }()
	var emitErr error
	for iv := range ch {
		if emitErr != nil {
			continue // drain so the sources can finish
		}
		if iv.Source == "" {
			iv.Source = "?"
		}
		if err := iv.Validate(); err != nil {
			diag.Warn("", "dropped an interval: %v", err)
			continue
		}
		if byFile {
			for j := range iv.Series {
				iv.Series[j].Key.Source = iv.Source
			}
		}
		if err := emit(iv); err != nil {
			emitErr = err
			cancel()
		}
	}
	if emitErr != nil {
		return emitErr
	}
	return errors.Join(errs...)
}
