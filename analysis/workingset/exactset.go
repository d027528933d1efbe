package workingset

// exactSet is an open-addressing (linear probing) set of block keys with,
// per key, the latency buckets and the events in which the block was read.
// A slot is empty when its bucket mask is zero, since every stored block
// was read in at least one bucket (so key 0, file 0 block 0, needs no
// sentinel). A slot is 16 bytes, one memory access; the table is at most
// 3/4 full.
//
// The table doubles while small, then jumps to the size that holds the
// exact limit: doubling a large table would leave the old one as garbage
// the size of half the new one, and Go's collector lets garbage grow to
// the live heap's size before it runs, so the peak resident memory would
// approach twice the table's.
type exactSet struct {
	slots   []slot
	count   int
	shift   uint // 64 − log2(len(slots)): the hash's top bits index the table
	maxBits uint // log2 of the table that holds the limit
}

type slot struct {
	key     uint64
	buckets uint32 // bit b: read in latency bucket b
	events  uint16 // bit e: read by event e (bit MaxEvents: any other)
}

// The table starts at 2^minSetBits slots (16 KiB: a short trace costs
// little) and doubles up to 2^jumpSetBits (2 MiB, 98 304 blocks), then
// jumps.
const (
	minSetBits  = 10
	jumpSetBits = 17
)

// newExactSet returns a set that will hold up to limit keys.
func newExactSet(limit int) *exactSet {
	s := &exactSet{maxBits: minSetBits}
	for limit*4 > 3<<s.maxBits {
		s.maxBits++
	}
	s.alloc(min(minSetBits, s.maxBits))
	return s
}

func (s *exactSet) alloc(bits uint) {
	s.slots = make([]slot, 1<<bits)
	s.shift = 64 - bits
}

// find returns the slot of key (mixed into h): where it is or, if absent,
// the empty slot it would take.
func (s *exactSet) find(key, h uint64) *slot {
	mask := len(s.slots) - 1
	i := int(h >> s.shift)
	for s.slots[i].buckets != 0 && s.slots[i].key != key {
		i = (i + 1) & mask
	}
	return &s.slots[i]
}

// full reports whether one more key would load the table beyond 3/4.
func (s *exactSet) full() bool { return (s.count+1)*4 > len(s.slots)*3 }

// grow doubles the table, or makes it the largest once past
// 2^jumpSetBits slots, and reinserts every key.
func (s *exactSet) grow() {
	old := s.slots
	bits := 64 - s.shift + 1
	if bits > jumpSetBits {
		bits = max(bits, s.maxBits)
	}
	s.alloc(bits)
	for _, o := range old {
		if o.buckets != 0 {
			*s.find(o.key, mix(o.key)) = o
		}
	}
}

// each calls fn with every stored slot.
func (s *exactSet) each(fn func(slot)) {
	for _, o := range s.slots {
		if o.buckets != 0 {
			fn(o)
		}
	}
}

// mix is splitmix64's finalizer: a bijection of the 64-bit key whose every
// output bit depends on every input bit, so both the table index (top
// bits) and HyperLogLog (index and leading zeros) see uniform hashes even
// for the dense, sequential block numbers of a file.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
