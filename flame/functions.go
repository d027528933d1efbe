package flame

import (
	"cmp"
	"slices"
	"strings"
)

// Differential combines a base and a new profile into one whose stacks
// carry both counts (the input of a differential flame graph). Stacks only
// in base keep a zero new count, so vanished frames stay findable.
func Differential(base, next *Profile) *Profile {
	d := New()
	d.Diff = true
	d.SampleType, d.SampleUnit = next.SampleType, next.SampleUnit
	for _, s := range next.InOrder() {
		d.AddDiff(s.Frames, 0, s.Count)
	}
	for _, s := range base.InOrder() {
		d.AddDiff(s.Frames, s.Count, 0)
	}
	return d
}

// FunctionStat is one function's samples: Self where it is the leaf,
// Total in every stack it appears in (once per stack, so recursion does
// not count twice). Base fields are the same in a differential's base.
type FunctionStat struct {
	Name      string `json:"name"`
	Self      int64  `json:"self"`
	Total     int64  `json:"total"`
	BaseSelf  int64  `json:"base_self,omitempty"`
	BaseTotal int64  `json:"base_total,omitempty"`
}

// Functions returns every function's self and total samples, by total
// (then self, then name), largest first.
func Functions(p *Profile) []FunctionStat {
	stats := map[string]*FunctionStat{}
	get := func(name string) *FunctionStat {
		f := stats[name]
		if f == nil {
			f = &FunctionStat{Name: name}
			stats[name] = f
		}
		return f
	}
	seen := map[string]bool{}
	for _, s := range p.InOrder() {
		clear(seen)
		frames := strings.Split(s.Frames, ";")
		for _, name := range frames {
			if name == "" || seen[name] {
				continue
			}
			seen[name] = true
			f := get(name)
			f.Total += s.Count
			f.BaseTotal += s.Base
		}
		if leaf := frames[len(frames)-1]; leaf != "" {
			f := get(leaf)
			f.Self += s.Count
			f.BaseSelf += s.Base
		}
	}
	out := make([]FunctionStat, 0, len(stats))
	for _, f := range stats {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b FunctionStat) int {
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Self, a.Self); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}
