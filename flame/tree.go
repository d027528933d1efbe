package flame

import (
	"cmp"
	"slices"
	"strings"
)

// Node is one frame of a merged flame graph: Total counts the samples of
// every stack passing through it, Self those ending in it. Base and
// BaseSelf are the same in the base profile of a differential.
type Node struct {
	Name     string
	Total    int64
	Self     int64
	Base     int64
	BaseSelf int64
	Children []*Node
}

// Tree merges the profile's stacks into a tree under a root named "all",
// from the stacks sorted by frames (flamegraph.pl's order) or, with
// timeOrder, in input order (a flame chart).
func (p *Profile) Tree(timeOrder bool) *Node {
	root := &Node{Name: "all"}
	stacks := p.stacks
	if !timeOrder {
		stacks = p.Sorted()
	}
	for _, s := range stacks {
		root.add(s)
	}
	return root
}

func (n *Node) add(s Stack) {
	n.Total += s.Count
	n.Base += s.Base
	cur := n
	rest := s.Frames
	for rest != "" {
		name, tail, _ := strings.Cut(rest, ";")
		rest = tail
		cur = cur.child(name)
		cur.Total += s.Count
		cur.Base += s.Base
	}
	cur.Self += s.Count
	cur.BaseSelf += s.Base
}

// child returns the last child if it is named name, else a new one. Only
// consecutive stacks merge, as in flamegraph.pl and inferno: sorted input
// can put "a;b0" between "a;b" and "a;b;c", and both peers then draw two
// "b" frames side by side; frame geometry must match theirs.
func (n *Node) child(name string) *Node {
	if k := len(n.Children); k > 0 && n.Children[k-1].Name == name {
		return n.Children[k-1]
	}
	c := &Node{Name: name}
	n.Children = append(n.Children, c)
	return c
}

// SortChildren orders every node's children by name, recursively.
func (n *Node) SortChildren() {
	slices.SortFunc(n.Children, func(a, b *Node) int { return cmp.Compare(a.Name, b.Name) })
	for _, c := range n.Children {
		c.SortChildren()
	}
}
