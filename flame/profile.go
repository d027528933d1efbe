// Package flame is latscope's sampled-stack model: folded stacks
// ("root;child;leaf count"), the contract between collapsers (perf script,
// DTrace, gdb, ... in flame/collapse) and renderers (flame/svg, flame/html),
// as in FlameGraph and inferno. It imports only the standard library.
package flame

import (
	"bufio"
	"cmp"
	"io"
	"slices"
	"strconv"
)

// Stack is one folded stack: frames joined by ';', root first, with its
// sample count (or weight, e.g. perf's period). Base holds the count in the
// base profile of a differential ("stack base new" lines).
type Stack struct {
	Frames string
	Count  int64
	Base   int64
}

// Profile is a set of folded stacks. Equal stacks are summed; the order of
// first appearance is kept for flame charts (time order).
type Profile struct {
	stacks []Stack
	index  KeyIndex // ids are indexes in stacks
	// Diff says the profile carries base counts (a differential).
	Diff bool
	// SampleType and SampleUnit say what counts are when the input said
	// so (a pprof profile's sample type, e.g. cpu/nanoseconds); empty:
	// samples, counted.
	SampleType, SampleUnit string
	// timeOrder keeps every stack where it came and merges only a stack
	// equal to the one before it (flame charts: time goes left to right).
	timeOrder bool
}

// New returns an empty profile.
func New() *Profile { return &Profile{} }

// NewTimeOrdered returns an empty profile for flame charts: stacks keep
// their input order and only adjacent repeats merge, as flamegraph.pl
// --flamechart and inferno draw them. Memory grows with the input.
func NewTimeOrdered() *Profile { return &Profile{timeOrder: true} }

// TimeOrdered says the profile keeps input order (NewTimeOrdered).
func (p *Profile) TimeOrdered() bool { return p.timeOrder }

// Add adds count samples of a stack.
func (p *Profile) Add(frames string, count int64) { p.AddDiff(frames, 0, count) }

// AddDiff adds a stack's base and new counts.
func (p *Profile) AddDiff(frames string, base, count int64) {
	if p.timeOrder {
		if n := len(p.stacks); n > 0 && p.stacks[n-1].Frames == frames {
			p.stacks[n-1].Count += count
			p.stacks[n-1].Base += base
			return
		}
		p.stacks = append(p.stacks, Stack{Frames: frames, Count: count, Base: base})
		return
	}
	h := p.index.HashString(frames)
	if i := p.index.Find(h, func(id int32) bool { return p.stacks[id].Frames == frames }); i >= 0 {
		p.stacks[i].Count += count
		p.stacks[i].Base += base
		return
	}
	p.index.Add(h)
	p.stacks = append(p.stacks, Stack{Frames: frames, Count: count, Base: base})
}

// Grow makes room for n more distinct stacks: a collapser that knows how
// many it adds spares the slice and the index their regrowth.
func (p *Profile) Grow(n int) {
	p.stacks = slices.Grow(p.stacks, n)
	if !p.timeOrder {
		p.index.Grow(n)
	}
}

// Len returns the number of distinct stacks.
func (p *Profile) Len() int { return len(p.stacks) }

// Total returns the sum of all counts (new counts for a differential).
func (p *Profile) Total() int64 {
	var n int64
	for _, s := range p.stacks {
		n += s.Count
	}
	return n
}

// InOrder returns the stacks in order of first appearance (shared: do not
// modify).
func (p *Profile) InOrder() []Stack { return p.stacks }

// Sorted returns the stacks sorted by frames, as stackcollapse-perf.pl and
// inferno print them.
func (p *Profile) Sorted() []Stack {
	out := slices.Clone(p.stacks)
	slices.SortFunc(out, func(a, b Stack) int { return cmp.Compare(a.Frames, b.Frames) })
	return out
}

// WriteFolded writes "frames count" lines (or "frames base count" for a
// differential), sorted by frames.
func (p *Profile) WriteFolded(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 256)
	for _, s := range p.Sorted() {
		buf = append(buf[:0], s.Frames...)
		buf = append(buf, ' ')
		if p.Diff {
			buf = strconv.AppendInt(buf, s.Base, 10)
			buf = append(buf, ' ')
		}
		buf = strconv.AppendInt(buf, s.Count, 10)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
