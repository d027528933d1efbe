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

// graph is the laid-out flame graph: the frames at least the minimum
// width, and the deepest depth among them.
type graph struct {
	// blocks hold the frames in drawing order, frameBlock to a block:
	// one growing slice copied its 100 000 frames over and over (a
	// sixth of the render, with the page faults of each new copy).
	blocks   [][]frame
	total    int64
	deltaMax int64
	depthMax int
	diff     bool
}

const frameBlock = 4096

// add appends a frame.
func (g *graph) add(f frame) {
	if n := len(g.blocks); n == 0 || len(g.blocks[n-1]) == frameBlock {
		g.blocks = append(g.blocks, make([]frame, 0, frameBlock))
	}
	last := &g.blocks[len(g.blocks)-1]
	*last = append(*last, f)
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

// drawable says whether a stack is drawn; inferno ignores the others too.
func drawable(s flame.Stack) bool { return s.Frames != "" && s.Count >= 0 && s.Base >= 0 }

// layout merges consecutive stacks sharing a prefix, as flamegraph.pl's
// flow(): a frame stays open while the following stacks keep it. Frames
// narrower than minPct percent of the total are dropped as they close (as
// inferno prunes), so a pruned overview of a big profile stays cheap.
func layout(stacks []flame.Stack, diff bool, minPct float64) graph {
	type open struct {
		name  string
		start int64
		delta int64
	}
	g := graph{deltaMax: 1, diff: diff}
	for _, s := range stacks {
		if drawable(s) {
			g.total += s.Count
		}
	}
	minTime := minPct / (100 / float64(g.total))
	stack := []open{{}} // the root, named "" like inferno's
	var parts []string
	var time int64
	closeTo := func(depth int) {
		for len(stack) > depth {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if float64(time-f.start) < minTime {
				continue
			}
			g.depthMax = max(g.depthMax, len(stack))
			g.add(frame{name: f.name, depth: len(stack), start: f.start, end: time, delta: f.delta})
		}
	}
	for _, s := range stacks {
		if !drawable(s) {
			continue
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
