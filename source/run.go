package source

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// RunAll runs the sources concurrently and calls emit, from the calling
// goroutine only, for every valid interval. With byFile each series keeps its
// source apart (Key.Source); otherwise the same event and instance from
// different sources are later summed. Invalid intervals are reported to diag
// and dropped. It returns the sources' errors joined; a failing source does
// not stop the others.
func RunAll(ctx context.Context, srcs []Source, byFile bool, diag *input.Diagnostics, emit func(stream.Interval) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan stream.Interval, 64)
	errs := make([]error, len(srcs))
	var wg sync.WaitGroup
	for i, src := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A plain send is safe: the loop below drains ch until every
			// source is done, so a live source's last (partial) interval
			// after cancellation is delivered, not dropped.
			err := src.Run(ctx, func(iv stream.Interval) error {
				ch <- iv
				return nil
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				errs[i] = withSourceName(src.Name(), err)
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

// withSourceName prefixes err with the source's name unless the message
// already starts with it (parsers report file:line themselves).
func withSourceName(name string, err error) error {
	if strings.HasPrefix(err.Error(), name+":") {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}
