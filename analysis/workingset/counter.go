// Package workingset counts the block-read working set: how many distinct
// database blocks a workload read, how often it read them again, by file,
// by wait event and by latency class (cache-like or media-like), from the
// block addresses of single- and multi-block reads (stream.BlockRead).
//
// Counting is exact up to Options.ExactLimit distinct blocks, then switches
// to HyperLogLog estimates whose relative standard error the result states,
// so memory stays bounded whatever the input (docs/workingset.md).
package workingset

import (
	"math/bits"
	"strings"

	"github.com/axiomhq/hyperloglog"

	"github.com/latscope/latscope/stream"
)

// Limits and defaults of a Counter.
const (
	// DefaultExactLimit is the number of distinct blocks counted exactly:
	// the exact set then holds a 2^21-slot table, 32 MiB.
	DefaultExactLimit = 1 << 20
	// DefaultPrecision is the HyperLogLog precision p of the estimates:
	// 2^14 registers, 16 KiB a dense sketch, relative standard error
	// 1.04/√2^14 = 0.81 %.
	DefaultPrecision = 14
	// DefaultMaxFiles is how many files get their own figures; reads of
	// further files count in one "other files" group.
	DefaultMaxFiles = 256
	// MaxEvents is how many wait events get their own figures; reads of
	// further events count in one "other events" group.
	MaxEvents = 8
	// MaxBlocksPerRead is the most blocks one read may name: more is a
	// malformed address (no database reads 8 GiB in one call), skipped.
	MaxBlocksPerRead = 1 << 20
	// NumBuckets is the number of latency buckets: bucket k holds read
	// calls of [2^k, 2^(k+1)) µs, bucket 0 those under 2 µs, the last one
	// everything from 2^31 µs (36 minutes) on.
	NumBuckets = 32
)

// Options tune a Counter; zero or invalid fields take the defaults.
type Options struct {
	// ExactLimit is the number of distinct blocks counted exactly before
	// the counter switches to estimates (DefaultExactLimit).
	ExactLimit int
	// Precision is the HyperLogLog precision of the estimates, 4 to 18
	// (DefaultPrecision): each step up divides the error by √2 and
	// doubles a dense sketch's 2^p bytes.
	Precision uint8
	// MaxFiles bounds the files with figures of their own (DefaultMaxFiles).
	MaxFiles int
}

func (o Options) withDefaults() Options {
	if o.ExactLimit <= 0 {
		o.ExactLimit = DefaultExactLimit
	}
	if o.Precision < 4 || o.Precision > 18 {
		o.Precision = DefaultPrecision
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	return o
}

// tally is one group's figures: block reads, read calls and distinct
// blocks, counted exactly (distinct) or estimated (sketch, in estimate mode).
type tally struct {
	reads, calls int64
	distinct     int64
	sketch       *hyperloglog.Sketch
}

func (t *tally) count(blocks int64) {
	t.reads += blocks
	t.calls++
}

// sketchOf returns t's sketch, made on first use so that groups never read
// cost nothing; sparse, so that small groups stay small.
func (t *tally) sketchOf(precision uint8) *hyperloglog.Sketch {
	if t.sketch == nil {
		t.sketch, _ = hyperloglog.NewSketch(precision, true) // precision checked by withDefaults
	}
	return t.sketch
}

// fileTally is one file's figures.
type fileTally struct {
	file uint32
	tally
}

// Counter counts a working set from block reads; make one with NewCounter.
// It is not safe for concurrent use: Add is meant as a source's
// stream.BlockReads handler.
type Counter struct {
	opt     Options
	total   tally
	buckets [NumBuckets]tally
	// singleCalls counts single-block read calls per bucket: their
	// latencies show the cache and media modes best (SuggestSplit).
	singleCalls [NumBuckets]int64
	files       []*fileTally
	fileIndex   map[uint32]*fileTally
	otherFiles  tally
	// events names the events with figures of their own; eventTallies
	// holds theirs, and at index MaxEvents those of every other event.
	events       []string
	eventTallies [MaxEvents + 1]tally
	// set counts distinct blocks exactly; nil once the counter estimates.
	set     *exactSet
	skipped int64
}

// NewCounter returns an empty counter.
func NewCounter(o Options) *Counter {
	o = o.withDefaults()
	return &Counter{opt: o, fileIndex: map[uint32]*fileTally{}, set: newExactSet(o.ExactLimit)}
}

// Skipped is the number of malformed reads skipped: no blocks, more than
// MaxBlocksPerRead blocks, a range past the last block number, or a
// negative elapsed time.
func (c *Counter) Skipped() int64 { return c.skipped }

// Exact reports whether the counter still counts distinct blocks exactly.
func (c *Counter) Exact() bool { return c.set != nil }

// Add counts one read: a read of N blocks counts N block reads, of blocks
// Block … Block+N−1, and one read call, in the group of its file, of its
// event and of the latency bucket of its elapsed time.
func (c *Counter) Add(r stream.BlockRead) {
	last := r.Block + uint64(r.Blocks) - 1
	if r.Blocks == 0 || r.Blocks > MaxBlocksPerRead || last < r.Block || r.Micros < 0 {
		c.skipped++
		return
	}
	b := bucketOf(r.Micros)
	e := c.eventOf(r.Event)
	f := c.fileOf(r.File)
	n := int64(r.Blocks)
	c.total.count(n)
	c.buckets[b].count(n)
	c.eventTallies[e].count(n)
	f.count(n)
	if r.Blocks == 1 {
		c.singleCalls[b]++
	}
	for block := r.Block; ; block++ {
		c.addBlock(blockKey(r.File, block), b, e, f)
		if block == last {
			break
		}
	}
}

// blockKey is a block's key in the set: file<<32 | block. Block numbers
// reach 2^32 in no Oracle release (a bigfile tablespace's last block is
// 2^32−1); a larger one keeps its file in the key and a hash of its
// number, which only a hash collision with another block of the same file
// could miscount.
func blockKey(file uint32, block uint64) uint64 {
	if block>>32 != 0 {
		block = mix(block) & 0xffffffff
	}
	return uint64(file)<<32 | block
}

// bucketOf returns the latency bucket of a read call of micros µs.
func bucketOf(micros int64) int {
	if micros < 2 {
		return 0
	}
	return min(bits.Len64(uint64(micros))-1, NumBuckets-1)
}

// eventOf returns the index of event's tally: its own among the first
// MaxEvents events seen, else MaxEvents (other events).
func (c *Counter) eventOf(event string) int {
	for i, name := range c.events {
		if name == event {
			return i
		}
	}
	if len(c.events) == MaxEvents {
		return MaxEvents
	}
	c.events = append(c.events, strings.Clone(event)) // not the source's line buffer
	return len(c.events) - 1
}

// fileOf returns file's tally, or the other files' one past MaxFiles.
func (c *Counter) fileOf(file uint32) *tally {
	if f, ok := c.fileIndex[file]; ok {
		return &f.tally
	}
	if len(c.files) == c.opt.MaxFiles {
		return &c.otherFiles
	}
	f := &fileTally{file: file}
	c.files = append(c.files, f)
	c.fileIndex[file] = f
	return &f.tally
}

// fileOfKey returns the tally of a key's file (read before, so it exists
// or folds into other files).
func (c *Counter) fileOfKey(key uint64) *tally {
	if f, ok := c.fileIndex[uint32(key>>32)]; ok {
		return &f.tally
	}
	return &c.otherFiles
}

// addBlock counts one read of the block key in bucket b, event e and file
// tally f: exactly while the set holds, else into the sketches.
func (c *Counter) addBlock(key uint64, b, e int, f *tally) {
	h := mix(key)
	s := c.set
	if s == nil {
		c.insertEstimate(h, b, e, f)
		return
	}
	o := s.find(key, h)
	if o.buckets == 0 {
		if s.count == c.opt.ExactLimit {
			c.toEstimate()
			c.insertEstimate(h, b, e, f)
			return
		}
		if s.full() {
			s.grow()
			o = s.find(key, h)
		}
		o.key = key
		s.count++
		c.total.distinct++
		f.distinct++
	}
	if bit := uint32(1) << b; o.buckets&bit == 0 {
		o.buckets |= bit
		c.buckets[b].distinct++
	}
	if bit := uint16(1) << e; o.events&bit == 0 {
		o.events |= bit
		c.eventTallies[e].distinct++
	}
}

// insertEstimate adds the hash of a block key to the sketches of its groups.
func (c *Counter) insertEstimate(h uint64, b, e int, f *tally) {
	p := c.opt.Precision
	c.total.sketchOf(p).InsertHash(h)
	c.buckets[b].sketchOf(p).InsertHash(h)
	c.eventTallies[e].sketchOf(p).InsertHash(h)
	f.sketchOf(p).InsertHash(h)
}

// toEstimate switches to estimates: every block of the exact set goes into
// the sketches of the groups it was read in, then the set is freed.
func (c *Counter) toEstimate() {
	c.set.each(func(o slot) {
		h := mix(o.key)
		p := c.opt.Precision
		c.total.sketchOf(p).InsertHash(h)
		c.fileOfKey(o.key).sketchOf(p).InsertHash(h)
		for m := o.buckets; m != 0; m &= m - 1 {
			c.buckets[bits.TrailingZeros32(m)].sketchOf(p).InsertHash(h)
		}
		for m := o.events; m != 0; m &= m - 1 {
			c.eventTallies[bits.TrailingZeros16(m)].sketchOf(p).InsertHash(h)
		}
	})
	c.set = nil
}
