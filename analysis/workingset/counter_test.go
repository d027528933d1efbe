package workingset

import (
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

const (
	seq     = "db file sequential read"
	scatter = "db file scattered read"
)

func read(file uint32, block uint64, blocks uint32, micros int64, event string) stream.BlockRead {
	return stream.BlockRead{File: file, Block: block, Blocks: blocks, Micros: micros, Event: event}
}

// handMade is a small workload whose figures are worked out by hand in
// TestExactCounts: overlapping multi-block reads, the same block number in
// two files, and one block read both fast and slow.
func handMade() []stream.BlockRead {
	return []stream.BlockRead{
		read(1, 10, 4, 50, scatter),   // file 1 blocks 10-13, bucket 5 [32, 64) µs
		read(1, 12, 3, 5000, scatter), // file 1 blocks 12-14, bucket 12 [4096, 8192) µs
		read(2, 10, 1, 100, seq),      // file 2 block 10, bucket 6
		read(1, 10, 1, 8000, seq),     // file 1 block 10 again, bucket 12
	}
}

func count(t *testing.T, o Options, reads []stream.BlockRead) *Counter {
	t.Helper()
	c := NewCounter(o)
	for _, r := range reads {
		c.Add(r)
	}
	return c
}

// want is a group's expected reads, read calls and distinct blocks.
type want struct{ reads, calls, distinct int64 }

func check(t *testing.T, g Group, w want) {
	t.Helper()
	if g.Reads != w.reads || g.ReadCalls != w.calls || g.DistinctBlocks != w.distinct || !g.Exact {
		t.Errorf("%s: reads %d, calls %d, distinct %d (exact %v); want %d, %d, %d exact",
			g.Name, g.Reads, g.ReadCalls, g.DistinctBlocks, g.Exact, w.reads, w.calls, w.distinct)
	}
	if w.distinct > 0 {
		if rpb := float64(w.reads) / float64(w.distinct); math.Abs(g.ReadsPerBlock-rpb) > 1e-12 {
			t.Errorf("%s: reads per block %g, want %g", g.Name, g.ReadsPerBlock, rpb)
		}
		if rr := 1 - float64(w.distinct)/float64(w.reads); math.Abs(g.RereadFraction-rr) > 1e-12 {
			t.Errorf("%s: re-read fraction %g, want %g", g.Name, g.RereadFraction, rr)
		}
	}
}

func groupNamed(t *testing.T, gs []Group, name string) Group {
	t.Helper()
	for _, g := range gs {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %q in %+v", name, gs)
	return Group{}
}

func TestExactCounts(t *testing.T) {
	c := count(t, Options{}, handMade())
	r := c.Result(time.Millisecond) // rounds to the 1024 µs boundary
	if !r.Exact || r.RelativeError != 0 || r.SplitUS != 1024 || r.Skipped != 0 {
		t.Fatalf("exact %v, error %g, split %d µs, skipped %d", r.Exact, r.RelativeError, r.SplitUS, r.Skipped)
	}
	check(t, r.Total, want{9, 4, 6})
	if len(r.Files) != 2 {
		t.Fatalf("files %+v", r.Files)
	}
	check(t, groupNamed(t, r.Files, "file 1"), want{8, 3, 5}) // blocks 10-14
	check(t, groupNamed(t, r.Files, "file 2"), want{1, 1, 1})
	check(t, groupNamed(t, r.Events, scatter), want{7, 2, 5})
	check(t, groupNamed(t, r.Events, seq), want{2, 2, 2}) // 1:10 and 2:10
	check(t, groupNamed(t, r.Buckets, "[32, 64) µs"), want{4, 1, 4})
	check(t, groupNamed(t, r.Buckets, "[64, 128) µs"), want{1, 1, 1})
	check(t, groupNamed(t, r.Buckets, "[4096, 8192) µs"), want{4, 2, 4}) // 12-14 and 10
	// Block 1:10 was read fast and slow: it counts in both classes.
	check(t, groupNamed(t, r.Classes, "cache-like"), want{5, 2, 5})
	check(t, groupNamed(t, r.Classes, "media-like"), want{4, 2, 4})
	if cl := r.Classes[0]; cl.LowUS != 0 || cl.HighUS != 1024 || r.Classes[1].LowUS != 1024 || r.Classes[1].HighUS != 0 {
		t.Errorf("class ranges %+v", r.Classes)
	}
	if got := c.Result(0); got.SplitUS != 0 || got.Classes != nil {
		t.Errorf("no split: split %d, classes %+v", got.SplitUS, got.Classes)
	}
}

func TestMalformedReadsAreSkipped(t *testing.T) {
	c := count(t, Options{}, []stream.BlockRead{
		read(1, 1, 0, 10, seq),
		read(1, 1, MaxBlocksPerRead+1, 10, scatter),
		read(1, 1, 1, -1, seq),
		read(1, math.MaxUint64, 2, 10, scatter), // past the last block number
		read(1, math.MaxUint64, 1, 10, seq),     // the last block number itself is fine
	})
	r := c.Result(0)
	if c.Skipped() != 4 || r.Skipped != 4 {
		t.Errorf("skipped %d (result %d), want 4", c.Skipped(), r.Skipped)
	}
	check(t, r.Total, want{1, 1, 1})
}

func TestBlocksBeyond32BitsKeepTheirFile(t *testing.T) {
	c := count(t, Options{}, []stream.BlockRead{
		read(1, 1<<32, 1, 10, seq), read(1, 1<<32+1, 1, 10, seq), read(2, 1<<32, 1, 10, seq), read(1, 1<<32, 1, 10, seq),
	})
	r := c.Result(0)
	check(t, r.Total, want{4, 4, 3})
	check(t, groupNamed(t, r.Files, "file 1"), want{3, 3, 2})
}

func TestBucketOf(t *testing.T) {
	for _, c := range []struct {
		micros int64
		want   int
	}{{0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 2}, {1023, 9}, {1024, 10}, {1 << 31, 31}, {1 << 40, 31}, {math.MaxInt64, 31}} {
		if got := bucketOf(c.micros); got != c.want {
			t.Errorf("bucketOf(%d) = %d, want %d", c.micros, got, c.want)
		}
	}
}

func TestSplitRoundsToABucketBoundary(t *testing.T) {
	for _, c := range []struct {
		split time.Duration
		want  int
		ok    bool
	}{{0, 0, false}, {-time.Second, 0, false}, {time.Millisecond, 10, true}, {700 * time.Microsecond, 9, true},
		{time.Nanosecond, 1, true}, {time.Hour, NumBuckets - 1, true}} {
		if k, ok := splitBucket(c.split); k != c.want || ok != c.ok {
			t.Errorf("splitBucket(%v) = %d, %v; want %d, %v", c.split, k, ok, c.want, c.ok)
		}
	}
}

// TestFilesAndEventsAreBounded: past MaxFiles files and MaxEvents events,
// reads count in the other files and other events groups, exactly.
func TestFilesAndEventsAreBounded(t *testing.T) {
	var reads []stream.BlockRead
	for f := range uint32(10) {
		reads = append(reads, read(f+1, 7, 2, 10, "event "+string(rune('a'+f))))
	}
	r := count(t, Options{MaxFiles: 3}, reads).Result(0)
	if len(r.Files) != 4 || len(r.Events) != MaxEvents+1 {
		t.Fatalf("%d files, %d events: %+v %+v", len(r.Files), len(r.Events), r.Files, r.Events)
	}
	check(t, groupNamed(t, r.Files, "other files"), want{14, 7, 14})
	check(t, groupNamed(t, r.Events, "other events"), want{4, 2, 4})
	check(t, r.Total, want{20, 10, 20})
}

// TestSwitchToEstimates feeds just more distinct blocks than the exact
// limit: the estimates must hold within three standard errors, and the
// groups' sketches must agree with the total.
func TestSwitchToEstimates(t *testing.T) {
	const limit = 1 << 14
	const n = limit + limit/4
	o := Options{ExactLimit: limit}
	c := NewCounter(o)
	for i := range uint64(n) {
		c.Add(read(uint32(i%4)+1, i/4, 1, int64(100+i%2*10000), seq)) // two buckets, four files
		if i == limit-1 {
			if r := c.Result(0); !r.Exact || r.Total.DistinctBlocks != limit {
				t.Fatalf("at the limit: exact %v, %d distinct", r.Exact, r.Total.DistinctBlocks)
			}
		}
	}
	r := c.Result(time.Millisecond)
	sigma := relativeError(DefaultPrecision)
	if r.Exact || r.RelativeError != sigma || r.Total.Exact || r.Total.RelativeError != sigma {
		t.Fatalf("after the switch: exact %v, error %g, total %+v", r.Exact, r.RelativeError, r.Total)
	}
	within := func(what string, got, want int64) {
		t.Helper()
		if d := math.Abs(float64(got-want)) / float64(want); d > 3*sigma {
			t.Errorf("%s: %d, want %d within 3σ (%.2f %%): off by %.2f %%", what, got, want, 300*sigma, 100*d)
		}
	}
	within("total", r.Total.DistinctBlocks, n)
	if r.Total.Reads != n || r.Total.ReadCalls != n {
		t.Errorf("total reads %d, calls %d, want %d", r.Total.Reads, r.Total.ReadCalls, n)
	}
	var files int64
	for _, f := range r.Files {
		within(f.Name, f.DistinctBlocks, n/4)
		files += f.DistinctBlocks
	}
	within("sum of the files", files, r.Total.DistinctBlocks)
	var buckets int64
	for _, b := range r.Buckets {
		buckets += b.DistinctBlocks
	}
	within("sum of the buckets", buckets, r.Total.DistinctBlocks)
	within("cache-like", r.Classes[0].DistinctBlocks, n/2)
	within("media-like", r.Classes[1].DistinctBlocks, n/2)
	within(seq, r.Events[0].DistinctBlocks, n)
}

func TestSuggestSplit(t *testing.T) {
	c := NewCounter(Options{})
	// Cache hits around 100 µs, media reads around 6 ms, and multi-block
	// reads (left out: single-block reads show the modes) in between.
	for i := range uint64(3000) {
		us := int64(80 + i%60)
		if i%3 == 0 {
			us = int64(5000 + i%3000)
		}
		c.Add(read(1, i, 1, us, seq))
		c.Add(read(1, i, 8, 1500, scatter))
	}
	split, ok := c.SuggestSplit()
	if !ok || split <= 128*time.Microsecond || split > 4096*time.Microsecond {
		t.Fatalf("SuggestSplit = %v, %v; want a boundary between the 64-128 µs and 4-8 ms buckets", split, ok)
	}
	r := c.Result(split)
	if cache := r.Classes[0]; cache.ReadCalls != 2000 {
		t.Errorf("cache-like read calls %d, want 2000 (split %v): %+v", cache.ReadCalls, split, r.Classes)
	}

	one := NewCounter(Options{})
	for i := range uint64(1000) {
		one.Add(read(1, i, 1, int64(90+i%30), seq))
	}
	if split, ok := one.SuggestSplit(); ok {
		t.Errorf("one mode: SuggestSplit = %v, true", split)
	}
}
