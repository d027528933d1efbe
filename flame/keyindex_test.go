package flame

import (
	"hash/maphash"
	"testing"
)

// Keys whose hashes collide keep their own ids: Find asks the caller.
func TestKeyIndexCollisions(t *testing.T) {
	var x KeyIndex // the zero value works
	keys := []string{"a;b", "a;c"}
	for _, k := range keys {
		if x.Find(7, func(id int32) bool { return keys[id] == k }) != -1 {
			t.Fatalf("found %q before adding it", k)
		}
		x.Add(7) // both under one hash
	}
	for want, k := range keys {
		if id := x.Find(7, func(id int32) bool { return keys[id] == k }); id != int32(want) {
			t.Fatalf("Find %q = %d, want %d", k, id, want)
		}
	}
	if x.Find(7, func(int32) bool { return false }) != -1 || x.Find(8, func(int32) bool { return true }) != -1 {
		t.Fatal("Find of an absent key")
	}
	if x.Hash(1) != 7 {
		t.Fatalf("Hash(1) = %d", x.Hash(1))
	}
	seed := maphash.MakeSeed()
	a, b := NewKeyIndex(seed), NewKeyIndex(seed)
	if a.HashString("x;y") != b.HashBytes([]byte("x;y")) {
		t.Fatal("indexes of one seed hash alike")
	}
}

func TestProfileSumsEqualStacks(t *testing.T) {
	p := New()
	p.Grow(2)
	p.Add("a;b", 1)
	p.Add("a;c", 2)
	p.Add("a;b", 3)
	var zero Profile // usable without New, as before
	zero.AddDiff("x", 1, 2)
	zero.AddDiff("x", 1, 2)
	if p.Len() != 2 || p.InOrder()[0].Count != 4 || zero.Len() != 1 || zero.InOrder()[0].Base != 2 {
		t.Fatalf("%+v %+v", p.InOrder(), zero.InOrder())
	}
}
