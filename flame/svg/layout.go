package svg

import (
	"slices"
	"strings"

	"github.com/latscope/latscope/flame"
)

// frame is one rectangle: a function at a depth (0 = the "all" root) over
// the sample range [start, end). delta is the differential change for the
// frame, set as flamegraph.pl and inferno do: a stack's new-minus-base
// count on its leaf frame when that frame opens, 0 on the frames above it.
type frame struct {
	name       string
	depth      int
	start, end int64
	delta      int64
}

// graph is the laid-out flame graph before pruning.
type graph struct {
	frames   []frame
	total    int64
	deltaMax int64
	diff     bool
}

// order returns the stacks in drawing order: sorted by frames (after
// reversing each stack with Reverse), or for a flame chart the input order
// reversed, which is what flamegraph.pl and inferno draw.
func order(p *flame.Profile, o *resolved) []flame.Stack {
	switch {
	case o.Reverse:
		in := p.InOrder()
		out := make([]flame.Stack, len(in))
		for i, s := range in {
			out[i] = flame.Stack{Frames: reverseFrames(s.Frames), Count: s.Count, Base: s.Base}
		}
		slices.SortFunc(out, func(a, b flame.Stack) int { return strings.Compare(a.Frames, b.Frames) })
		return out
	case o.FlameChart:
		out := slices.Clone(p.InOrder())
		slices.Reverse(out)
		return out
	}
	return p.Sorted()
}

func reverseFrames(s string) string {
	parts := strings.Split(s, ";")
	slices.Reverse(parts)
	return strings.Join(parts, ";")
}

// layout merges consecutive stacks sharing a prefix, as flamegraph.pl's
// flow(): a frame stays open while the following stacks keep it.
func layout(stacks []flame.Stack, diff bool) graph {
	type open struct {
		name  string
		start int64
		delta int64
	}
	g := graph{deltaMax: 1, diff: diff}
	stack := []open{{}} // the root, named "" like inferno's
	var parts []string
	var time int64
	closeTo := func(depth int) {
		for len(stack) > depth {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			g.frames = append(g.frames, frame{name: f.name, depth: len(stack), start: f.start, end: time, delta: f.delta})
		}
	}
	for _, s := range stacks {
		if s.Frames == "" || s.Count < 0 || s.Base < 0 {
			continue // nothing to draw; inferno ignores such lines too
		}
		parts = splitFrames(parts[:0], s.Frames)
		shared := 0
		for shared < len(parts) && shared+1 < len(stack) && stack[shared+1].name == parts[shared] {
			shared++
		}
		closeTo(shared + 1)
		delta := s.Count - s.Base
		if diff {
			g.deltaMax = max(g.deltaMax, delta, -delta)
		}
		for i := shared; i < len(parts); i++ {
			f := open{name: parts[i], start: time}
			if diff && i == len(parts)-1 {
				f.delta = delta
			}
			stack = append(stack, f)
		}
		time += s.Count
	}
	g.total = time
	closeTo(0)
	return g
}

// splitFrames appends the ';'-separated frames of s to dst (as
// strings.Split, without allocating the strings).
func splitFrames(dst []string, s string) []string {
	for {
		i := strings.IndexByte(s, ';')
		if i < 0 {
			return append(dst, s)
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
}

// prune drops frames narrower than minPct percent of the total, as
// inferno does, and returns the deepest depth left.
func (g *graph) prune(minPct float64) int {
	minTime := minPct / (100 / float64(g.total))
	kept := g.frames[:0]
	depthMax := 0
	for _, f := range g.frames {
		if float64(f.end-f.start) < minTime {
			continue
		}
		depthMax = max(depthMax, f.depth)
		kept = append(kept, f)
	}
	g.frames = kept
	return depthMax
}
