package workingset

import (
	"testing"

	"github.com/latscope/latscope/stream"
)

// warmCounter returns a counter past its start-up: exact, holding a working
// set of 1<<16 blocks, or estimating, its sketches dense. next returns the
// i-th read of the steady state: re-reads of the working set (exact) or new
// blocks (estimate), over four files and two latency buckets.
func warmCounter(estimate bool) (c *Counter, next func(i uint64) stream.BlockRead) {
	const working = 1 << 16
	o := Options{}
	if estimate {
		o.ExactLimit = 1 << 10
	}
	c = NewCounter(o)
	read := func(i uint64) stream.BlockRead {
		if !estimate {
			i %= working
		}
		return stream.BlockRead{File: uint32(i%4) + 1, Block: i / 4, Blocks: 1, Micros: int64(100 + i%2*5000), Event: "db file sequential read"}
	}
	warm := uint64(working)
	if estimate {
		warm = 1 << 18 // past 2^14 hashes per group: every sketch is dense
	}
	for i := range warm {
		c.Add(read(i))
	}
	return c, func(i uint64) stream.BlockRead { return read(warm + i) }
}

func BenchmarkAdd(b *testing.B) {
	for _, mode := range []struct {
		name     string
		estimate bool
	}{{"exact", false}, {"estimate", true}} {
		b.Run(mode.name, func(b *testing.B) {
			c, next := warmCounter(mode.estimate)
			b.ReportAllocs()
			var i uint64
			for b.Loop() {
				c.Add(next(i))
				i++
			}
			if c.Exact() == mode.estimate {
				b.Fatalf("exact %v after the warm-up", c.Exact())
			}
		})
	}
}

// TestAddDoesNotAllocate: past its start-up, counting a read allocates
// nothing, exact or estimating.
func TestAddDoesNotAllocate(t *testing.T) {
	for _, estimate := range []bool{false, true} {
		c, next := warmCounter(estimate)
		var i uint64
		if allocs := testing.AllocsPerRun(1000, func() { c.Add(next(i)); i++ }); allocs != 0 {
			t.Errorf("estimate %v: %v allocations per read", estimate, allocs)
		}
	}
}
