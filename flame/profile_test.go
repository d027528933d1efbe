package flame

import (
	"strings"
	"testing"
)

func TestProfileSumsAndWritesSorted(t *testing.T) {
	p := New()
	p.Add("main;b", 2)
	p.Add("main;a", 1)
	p.Add("main;b", 3)
	if p.Len() != 2 || p.Total() != 6 {
		t.Fatalf("len %d total %d, want 2 and 6", p.Len(), p.Total())
	}
	var b strings.Builder
	if err := p.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "main;a 1\nmain;b 5\n"; got != want {
		t.Errorf("folded = %q, want %q", got, want)
	}
	p.Diff = true
	p.AddDiff("main;c", 4, 0)
	b.Reset()
	_ = p.WriteFolded(&b)
	if got, want := b.String(), "main;a 0 1\nmain;b 0 5\nmain;c 4 0\n"; got != want {
		t.Errorf("diff folded = %q, want %q", got, want)
	}
}

func TestTreeMergesOnlyConsecutiveStacks(t *testing.T) {
	p := New()
	for _, s := range []string{"a;b", "a;b0", "a;b;c"} { // sorted: a;b < a;b0 < a;b;c
		p.Add(s, 1)
	}
	root := p.Tree(false)
	a := root.Children[0]
	var names []string
	for _, c := range a.Children {
		names = append(names, c.Name)
	}
	// flamegraph.pl and inferno draw two "b" frames here: so do we.
	if root.Total != 3 || strings.Join(names, ",") != "b,b0,b" || a.Children[0].Self != 1 || a.Children[2].Children[0].Name != "c" {
		t.Errorf("root total %d, children of a: %v", root.Total, names)
	}
}

func TestTimeOrderedMergesOnlyAdjacentRepeats(t *testing.T) {
	p := NewTimeOrdered()
	for _, s := range []string{"x;y", "x;y", "x;z", "x;y"} {
		p.Add(s, 1)
	}
	st := p.InOrder()
	if len(st) != 3 || st[0].Count != 2 || st[2].Frames != "x;y" || !p.TimeOrdered() {
		t.Fatalf("stacks = %+v", st)
	}
	x := p.Tree(true).Children[0]
	if len(x.Children) != 3 || x.Children[0].Name != "y" || x.Children[0].Total != 2 || x.Children[1].Name != "z" || x.Children[2].Name != "y" {
		t.Errorf("chart children of x: %+v", x.Children)
	}
}

func TestFunctionsCountRecursionOnce(t *testing.T) {
	p := New()
	p.Add("main;f;f;g", 3)
	p.Add("main;f", 2)
	got := Functions(p)
	want := []FunctionStat{{Name: "f", Self: 2, Total: 5}, {Name: "main", Total: 5}, {Name: "g", Self: 3, Total: 3}}
	if len(got) != len(want) {
		t.Fatalf("functions = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("function %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestDifferentialKeepsVanishedStacks(t *testing.T) {
	base, next := New(), New()
	base.Add("a;gone", 4)
	base.Add("a;b", 1)
	next.Add("a;b", 6)
	d := Differential(base, next)
	var b strings.Builder
	_ = d.WriteFolded(&b)
	if got, want := b.String(), "a;b 1 6\na;gone 4 0\n"; got != want || !d.Diff {
		t.Errorf("differential = %q, want %q", got, want)
	}
}
