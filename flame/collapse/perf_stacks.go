package collapse

import "hash/maphash"

// perfStackSet is the distinct folded stacks of a collapse with their
// weights. Stacks are indexed by a 64-bit hash kept beside each entry, so
// that growing the index rehashes numbers, not stacks of a kilobyte and
// more: rehashing string keys as the maps grew was a tenth of the work.
// Parsers of one run share the seed, so their hashes merge as they are.
type perfStackSet struct {
	seed    maphash.Seed
	index   map[uint64]int32 // hash → its last entry (older ones chained by next)
	entries []perfStack
}

// perfStack is one entry: its key, hash, weight and first appearance.
type perfStack struct {
	key  string
	hash uint64
	next int32 // an earlier entry with the same hash, or -1
	perfEntry
}

func newPerfStackSet(seed maphash.Seed) perfStackSet {
	return perfStackSet{seed: seed, index: map[uint64]int32{}}
}

// find returns the entry with hash h that same accepts, or nil.
func (s *perfStackSet) find(h uint64, same func(key string) bool) *perfStack {
	i, ok := s.index[h]
	for ok && i >= 0 {
		if e := &s.entries[i]; same(e.key) {
			return e
		}
		i = s.entries[i].next
	}
	return nil
}

// insert adds a stack known to be absent.
func (s *perfStackSet) insert(key string, h uint64, e perfEntry) {
	next, ok := s.index[h]
	if !ok {
		next = -1
	}
	s.index[h] = int32(len(s.entries))
	s.entries = append(s.entries, perfStack{key: key, hash: h, next: next, perfEntry: e})
}

// addBytes adds count to key's entry, or makes one first seen at first;
// it says whether it made one.
func (s *perfStackSet) addBytes(key []byte, count int64, first uint64) bool {
	h := maphash.Bytes(s.seed, key)
	if e := s.find(h, func(k string) bool { return k == string(key) }); e != nil {
		e.count += count
		return false
	}
	s.insert(string(key), h, perfEntry{count: count, first: first})
	return true
}

// merge adds another set's entry (same seed): weights sum, the earlier
// appearance wins.
func (s *perfStackSet) merge(o *perfStack) {
	if e := s.find(o.hash, func(k string) bool { return k == o.key }); e != nil {
		e.count += o.count
		e.first = min(e.first, o.first)
		return
	}
	s.insert(o.key, o.hash, o.perfEntry)
}
