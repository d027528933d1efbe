package flame

import "hash/maphash"

// KeyIndex gives dense ids (0, 1, 2, ...) to distinct string keys, found
// by a 64-bit hash kept for each: growing its map rehashes numbers, not
// keys. Folded stacks run to kilobytes, and rehashing them as a
// map[string] grew was a tenth of collapsing or reading them. The caller
// keeps the keys, in a slice indexed by id, and compares them on a find
// (hashes may collide). The zero value is ready to use.
type KeyIndex struct {
	seed   maphash.Seed
	heads  map[uint64]int32 // hash → its newest id
	hashes []uint64         // by id
	next   []int32          // by id: an older id with the same hash, or -1
}

// NewKeyIndex returns an index hashing with seed: indexes that share a
// seed can pass hashes from one to another (Hash, then Find or Add).
func NewKeyIndex(seed maphash.Seed) KeyIndex { return KeyIndex{seed: seed} }

func (x *KeyIndex) init(n int) {
	if x.heads == nil {
		if x.seed == (maphash.Seed{}) {
			x.seed = maphash.MakeSeed()
		}
		x.heads = make(map[uint64]int32, n)
	}
}

// HashString and HashBytes hash a key (equal for equal contents).
func (x *KeyIndex) HashString(key string) uint64 {
	x.init(0)
	return maphash.String(x.seed, key)
}

func (x *KeyIndex) HashBytes(key []byte) uint64 {
	x.init(0)
	return maphash.Bytes(x.seed, key)
}

// Hash returns the hash of the key with id.
func (x *KeyIndex) Hash(id int32) uint64 { return x.hashes[id] }

// Find returns the id of hash h whose key same accepts, or -1.
func (x *KeyIndex) Find(h uint64, same func(id int32) bool) int32 {
	id, ok := x.heads[h]
	for ok && id >= 0 {
		if same(id) {
			return id
		}
		id = x.next[id]
	}
	return -1
}

// Add gives the next id to a key of hash h that Find did not find.
func (x *KeyIndex) Add(h uint64) int32 {
	x.init(0)
	id := int32(len(x.hashes))
	older, ok := x.heads[h]
	if !ok {
		older = -1
	}
	x.heads[h] = id
	x.hashes = append(x.hashes, h)
	x.next = append(x.next, older)
	return id
}

// Grow makes room for n keys in an empty index.
func (x *KeyIndex) Grow(n int) {
	if len(x.hashes) == 0 {
		x.heads = nil
		x.init(n)
	}
}
