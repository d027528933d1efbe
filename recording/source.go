package recording

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Format returns the input format of recordings: detected by Magic, its
// source replays the recorded intervals in file order.
func Format() source.Format {
	return source.Format{
		Name:        FormatName,
		Description: "latscope recording (latscope record -o FILE" + Extension + ")",
		Detection:   "the 8-byte magic \\x89LSR\\r\\n\\x1a\\n at the start",
		Example:     "latscope heatmap capture.lsr --speed 10",
		Detect:      detect,
		Open:        open,
	}
}

func detect(prefix []byte) input.Verdict {
	n := min(len(prefix), len(Magic))
	switch {
	case string(prefix[:n]) != Magic[:n]:
		return input.No
	case n < len(Magic):
		return input.NeedMore
	}
	return input.Yes
}

// open reads the header at once, so that a recording from a newer major
// version fails before anything is drawn.
func open(in source.Input, opts source.Options) (source.Source, error) {
	s := &replay{name: in.Name, opts: opts, diag: in.Diag}
	rd, err := NewReader(in.Reader)
	var damage *DamageError
	switch {
	case errors.As(err, &damage):
		s.report(damage)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	s.rd = rd
	return s, nil
}

// replay is the Source of one recording.
type replay struct {
	name string
	opts source.Options
	diag *input.Diagnostics
	rd   *Reader // nil when the header was damaged
}

func (s *replay) Name() string { return s.name }

// Run emits the recorded intervals, keeping only the series of the events
// opts.Events names. Damage is reported to the diagnostics with its byte
// offset and ends the replay without an error: the intervals before it
// stand. While following, a frame cut short is one still being written;
// the followed reader waits for the rest, so an end inside a frame only
// means the context ended.
func (s *replay) Run(ctx context.Context, emit func(stream.Interval) error) error {
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

func (s *replay) finish(ctx context.Context, err error) error {
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

func (s *replay) report(d *DamageError) {
	s.diag.Malformed(s.name, 0, d.Error())
}

// filter drops the series (and mean series) of events --event does not keep; the interval
// itself stays, as a window the source observed.
func (s *replay) filter(iv stream.Interval) stream.Interval {
	if len(s.opts.Events) == 0 {
		return iv
	}
	kept := iv.Series[:0:0]
	for _, sh := range iv.Series {
		if s.opts.KeepEvent(sh.Key.Event) {
			kept = append(kept, sh)
		}
	}
	iv.Series = kept
	if len(iv.Means) > 0 {
		means := iv.Means[:0:0]
		for _, m := range iv.Means {
			if s.opts.KeepEvent(m.Key.Event) {
				means = append(means, m)
			}
		}
		iv.Means = means
	}
	return iv
}
