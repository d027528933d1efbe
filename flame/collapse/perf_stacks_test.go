package collapse

import (
	"hash/maphash"
	"testing"
)

// Two stacks whose hashes collide stay apart: the set compares keys.
func TestPerfStackSetCollisions(t *testing.T) {
	s := newPerfStackSet(maphash.MakeSeed())
	s.insert("a;b", 7, perfEntry{count: 1, first: 0})
	s.insert("a;c", 7, perfEntry{count: 2, first: 1})
	for key, want := range map[string]int64{"a;b": 1, "a;c": 2} {
		e := s.find(7, func(k string) bool { return k == key })
		if e == nil || e.count != want {
			t.Fatalf("find %q = %+v, want count %d", key, e, want)
		}
	}
	if e := s.find(7, func(k string) bool { return k == "a;d" }); e != nil {
		t.Fatalf("find of an absent stack = %+v", e)
	}
	merged := newPerfStackSet(s.seed)
	merged.insert("a;c", 7, perfEntry{count: 5, first: 0})
	for i := range s.entries {
		merged.merge(&s.entries[i])
	}
	if len(merged.entries) != 2 || merged.entries[0].count != 7 || merged.entries[0].first != 0 || merged.entries[1].count != 1 {
		t.Fatalf("merged %+v", merged.entries)
	}
	if !s.addBytes([]byte("x"), 3, 9) || s.addBytes([]byte("x"), 4, 10) {
		t.Fatal("addBytes: first add should make the entry, the second find it")
	}
	if e := s.entries[len(s.entries)-1]; e.count != 7 || e.first != 9 {
		t.Fatalf("after two adds %+v", e)
	}
}
