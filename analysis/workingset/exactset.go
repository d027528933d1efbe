package workingset

// exactSet is an open-addressing (linear probing) set of block keys with,
// per key, the latency buckets and the events in which the block was read.
// Its three arrays run parallel; a slot is empty when its bucket mask is
// zero, since every stored block was read in at least one bucket (so key 0,
// file 0 block 0, needs no sentinel). 14 bytes a slot, at most 3/4 full.
type exactSet struct {
	keys    []uint64
	buckets []uint32 // bit b: read in latency bucket b
	events  []uint16 // bit e: read by event e (bit otherEvent: any other)
	count   int
	shift   uint // 64 − log2(len(keys)): the hash's top bits index the table
	maxBits uint // log2 of the table that holds the limit
}

// The table starts at 2^minSetBits slots (14 KiB: a short trace costs
// little) and doubles up to 2^jumpSetBits (896 KiB), then jumps.
const (
	minSetBits  = 10
	jumpSetBits = 16
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
	n := 1 << bits
	s.keys = make([]uint64, n)
	s.buckets = make([]uint32, n)
	s.events = make([]uint16, n)
	s.shift = 64 - bits
}

// slot returns the slot of key (mixed into h): where it is or, if absent,
// the empty slot it would take.
func (s *exactSet) slot(key, h uint64) int {
	mask := len(s.keys) - 1
	i := int(h >> s.shift)
	for s.buckets[i] != 0 && s.keys[i] != key {
		i = (i + 1) & mask
	}
	return i
}

// full reports whether one more key would load the table beyond 3/4.
func (s *exactSet) full() bool { return (s.count+1)*4 > len(s.keys)*3 }

// grow doubles the table, or makes it the largest once past
// 2^jumpSetBits slots, and reinserts every key.
func (s *exactSet) grow() {
	keys, buckets, events := s.keys, s.buckets, s.events
	bits := 64 - s.shift + 1
	if bits > jumpSetBits {
		bits = max(bits, s.maxBits)
	}
	s.alloc(bits)
	for i, b := range buckets {
		if b == 0 {
			continue
		}
		j := s.slot(keys[i], mix(keys[i]))
		s.keys[j], s.buckets[j], s.events[j] = keys[i], b, events[i]
	}
}

// each calls fn with every key and its masks.
func (s *exactSet) each(fn func(key uint64, buckets uint32, events uint16)) {
	for i, b := range s.buckets {
		if b != 0 {
			fn(s.keys[i], b, s.events[i])
		}
	}
}

// bytes is the memory the set's arrays hold.
func (s *exactSet) bytes() int64 { return int64(len(s.keys)) * 14 }

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
