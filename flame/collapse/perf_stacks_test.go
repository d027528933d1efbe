package collapse

import (
	"hash/maphash"
	"testing"
)

func TestPerfStackSetAddAndMerge(t *testing.T) {
	seed := maphash.MakeSeed()
	a, b := newPerfStackSet(seed), newPerfStackSet(seed)
	if !a.addBytes([]byte("x;y"), 3, 9) || a.addBytes([]byte("x;y"), 4, 10) || !a.addBytes([]byte("x;z"), 1, 11) {
		t.Fatal("addBytes: a first add makes the entry, a second finds it")
	}
	b.addBytes([]byte("x;z"), 5, 2)
	for id := range a.entries {
		b.merge(&a, int32(id))
	}
	want := []perfStack{{"x;z", perfEntry{count: 6, first: 2}}, {"x;y", perfEntry{count: 7, first: 9}}}
	if len(b.entries) != 2 || b.entries[0] != want[0] || b.entries[1] != want[1] {
		t.Fatalf("merged %+v, want %+v", b.entries, want)
	}
}
