package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// Detect recognises a recording by its magic (Magic) at the start.
func Detect(prefix []byte) input.Verdict {
	n := min(len(prefix), len(Magic))
	switch {
	case string(prefix[:n]) != Magic[:n]:
		return input.No
	case n < len(Magic):
		return input.NeedMore
	}
	return input.Yes
}

// ReplayOptions are the reading choices a replay honours.
type ReplayOptions struct {
	// Events keeps only the series of these events (empty: all); the
	// intervals themselves stay, as windows the source observed.
	Events []string
	// Follow says the reader waits at the end for more (tail -f), so a
	// frame cut short is one still being written, not damage.
	Follow bool
}

// OpenReplay reads a recording's header at once, so that a recording from
// a newer major version fails before anything is drawn; a damaged header is
// reported to diag and gives an empty replay.
func OpenReplay(name string, r io.Reader, diag *input.Diagnostics, opts ReplayOptions) (*Replay, error) {
	s := &Replay{name: name, opts: opts, diag: diag}
	rd, err := NewReader(r)
	var damage *DamageError
	switch {
	case errors.As(err, &damage):
		s.report(damage)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.rd = rd
	return s, nil
}

// Replay emits the intervals of one recording (a latscope source).
type Replay struct {
	name string
	opts ReplayOptions
	diag *input.Diagnostics
	rd   *Reader // nil when the header was damaged
}

// Name returns the recording's name (its path, or "-").
func (s *Replay) Name() string { return s.name }

// Run emits the recorded intervals, keeping only the series of the events
// opts.Events names. Damage is reported to the diagnostics with its byte
// offset and ends the replay without an error: the intervals before it
// stand. While following, a frame cut short is one still being written;
// the followed reader waits for the rest, so an end inside a frame only
// means the context ended.
func (s *Replay) Run(ctx context.Context, emit func(stream.Interval) error) error {
	if s.rd == nil {
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		iv, err := s.rd.Next()
		if err != nil {
			return s.finish(ctx, err)
		}
		if err := emit(s.filter(iv)); err != nil {
			return err
		}
	}
}

func (s *Replay) finish(ctx context.Context, err error) error {
	var damage *DamageError
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case errors.As(err, &damage):
		if damage.Truncated && (s.opts.Follow || ctx.Err() != nil) {
			return ctx.Err()
		}
		s.report(damage)
		return nil
	}
	return err
}

func (s *Replay) report(d *DamageError) {
	s.diag.Malformed(s.name, 0, d.Error())
}

// filter drops the series (and mean series) of events --event does not keep; the interval
// itself stays, as a window the source observed.
func (s *Replay) filter(iv stream.Interval) stream.Interval {
	if len(s.opts.Events) == 0 {
		return iv
	}
	kept := iv.Series[:0:0]
	for _, sh := range iv.Series {
		if slices.Contains(s.opts.Events, sh.Key.Event) {
			kept = append(kept, sh)
		}
	}
	iv.Series = kept
	if len(iv.Means) > 0 {
		means := iv.Means[:0:0]
		for _, m := range iv.Means {
			if slices.Contains(s.opts.Events, m.Key.Event) {
				means = append(means, m)
			}
		}
		iv.Means = means
	}
	return iv
}
