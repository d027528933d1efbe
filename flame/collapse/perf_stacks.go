package collapse

import (
	"hash/maphash"

	"github.com/latscope/latscope/flame"
)

// perfStackSet is the distinct folded stacks of a collapse with their
// weights, indexed by flame.KeyIndex. Parsers of one run share the seed,
// so their hashes merge as they are.
type perfStackSet struct {
	index   flame.KeyIndex
	entries []perfStack // by id
}

// perfStack is one entry: its key, weight and first appearance.
type perfStack struct {
	key string
	perfEntry
}

func newPerfStackSet(seed maphash.Seed) perfStackSet {
	return perfStackSet{index: flame.NewKeyIndex(seed)}
}

// addBytes adds count to key's entry, or makes one first seen at first;
// it says whether it made one.
func (s *perfStackSet) addBytes(key []byte, count int64, first uint64) bool {
	h := s.index.HashBytes(key)
	if id := s.index.Find(h, func(id int32) bool { return s.entries[id].key == string(key) }); id >= 0 {
		s.entries[id].count += count
		return false
	}
	s.index.Add(h)
	s.entries = append(s.entries, perfStack{key: string(key), perfEntry: perfEntry{count: count, first: first}})
	return true
}

// merge adds entry id of another set of the same seed: weights sum, the
// earlier appearance wins.
func (s *perfStackSet) merge(o *perfStackSet, id int32) {
	e, h := o.entries[id], o.index.Hash(id)
	if mine := s.index.Find(h, func(i int32) bool { return s.entries[i].key == e.key }); mine >= 0 {
		s.entries[mine].count += e.count
		s.entries[mine].first = min(s.entries[mine].first, e.first)
		return
	}
	s.index.Add(h)
	s.entries = append(s.entries, e)
}
