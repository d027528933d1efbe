package source

import (
	"context"
	"fmt"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// NewInputSource returns a Source named after in whose every Run is run:
// the Source of a format whose reading keeps no state between runs.
func NewInputSource(in Input, run func(ctx context.Context, emit func(stream.Interval) error) error) (Source, error) {
	if in.Reader == nil {
		return nil, fmt.Errorf("%s: no reader", in.Name)
	}
	return &inputSource{name: in.Name, run: run}, nil
}

type inputSource struct {
	name string
	run  func(ctx context.Context, emit func(stream.Interval) error) error
}

// Name returns the input's name (its path, or "-").
func (s *inputSource) Name() string { return s.name }

// Run reads the input.
func (s *inputSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	return s.run(ctx, emit)
}

// NewLineSource returns a Source that feeds every line of in to the parser
// newParser makes for each Run, then ends it. Lines longer than maxLen are
// cut and flagged.
func NewLineSource[P input.LineParser](in Input, opts Options, maxLen int,
	newParser func(in Input, opts Options, emit func(stream.Interval) error) P) (Source, error) {
	return NewInputSource(in, func(ctx context.Context, emit func(stream.Interval) error) error {
		p := newParser(in, opts, emit)
		if err := input.EachLine(ctx, in.Name, in.Reader, maxLen, p.Line); err != nil {
			return err
		}
		return p.End(ctx.Err() != nil)
	})
}
