package source

import (
	"context"
	"fmt"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// NewLineSource returns a Source that feeds every line of in to the parser
// start makes for each Run. Lines longer than maxLen are cut and flagged.
func NewLineSource(in Input, maxLen int, start func(emit func(stream.Interval) error) input.LineParser) (Source, error) {
	if in.Reader == nil {
		return nil, fmt.Errorf("%s: no reader", in.Name)
	}
	return &lineSource{in: in, maxLen: maxLen, start: start}, nil
}

type lineSource struct {
	in     Input
	maxLen int
	start  func(emit func(stream.Interval) error) input.LineParser
}

// Name returns the input's name (its path, or "-").
func (s *lineSource) Name() string { return s.in.Name }

// Run parses the input to its end.
func (s *lineSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	p := s.start(emit)
	if err := input.EachLine(ctx, s.in.Name, s.in.Reader, s.maxLen, p.Line); err != nil {
		return err
	}
	return p.End(ctx.Err() != nil)
}
