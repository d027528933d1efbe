package api

import (
	"cmp"
	"container/heap"
	"context"
	"errors"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/stream"
)

// mergeSources calls emit with the windows q selects in the order of
// stream.Recording's Intervals (start, then source), as `latscope convert
// ARCHIVE` writes them, without holding the selection: every source is
// read on its own, in time order, and the heads are merged. Memory is one
// chunk of windows per source, whatever the length of the window.
//
// Each source's resolution is chosen as one query of every source would
// choose it (auto decides per source), so the windows are the same.
func mergeSources(ctx context.Context, a *archive.Archive, q archive.Query, emit func(stream.Interval) error) error {
	names, err := a.SelectedSources(ctx, q)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := make(heads, 0, len(names))
	readers := make([]*sourceReader, len(names))
	for i, name := range names {
		sq := q
		sq.Sources = []string{name}
		readers[i] = startReader(ctx, a, sq)
	}
	for _, r := range readers {
		if r.next() {
			h = append(h, r)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		r := h[0]
		if err := emit(r.head); err != nil {
			return err
		}
		if r.next() {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	// Every reader is done: the first error, if any, is the merge's.
	var errs []error
	for _, r := range readers {
		errs = append(errs, r.err)
	}
	return errors.Join(errs...)
}

// sourceReader reads one source's windows in a goroutine.
type sourceReader struct {
	windows <-chan stream.Interval
	done    <-chan error
	head    stream.Interval
	err     error
}

// readAhead is how many windows a source reads ahead of the merge.
const readAhead = 64

func startReader(ctx context.Context, a *archive.Archive, q archive.Query) *sourceReader {
	windows := make(chan stream.Interval, readAhead)
	done := make(chan error, 1)
	go func() {
		defer close(windows)
		done <- a.Read(ctx, q, func(iv stream.Interval) error {
			select {
			case windows <- iv:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return &sourceReader{windows: windows, done: done}
}

// next moves to the source's next window; false at its end (or error).
func (r *sourceReader) next() bool {
	iv, ok := <-r.windows
	if !ok {
		r.err = <-r.done
		return false
	}
	r.head = iv
	return true
}

// heads orders the sources by their next window: start, then source name,
// as stream.Recording sorts.
type heads []*sourceReader

func (h heads) Len() int { return len(h) }
func (h heads) Less(i, j int) bool {
	if c := h[i].head.Start.Compare(h[j].head.Start); c != 0 {
		return c < 0
	}
	return cmp.Less(h[i].head.Source, h[j].head.Source)
}
func (h heads) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heads) Push(x any)   { *h = append(*h, x.(*sourceReader)) }
func (h *heads) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
