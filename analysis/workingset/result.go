package workingset

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/axiomhq/hyperloglog"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/probe/loadtest"
)

// Result is a working set's figures: for all reads, per latency class,
// per file, per event and per latency bucket.
type Result struct {
	// Exact says every distinct-block figure is an exact count; otherwise
	// each is a HyperLogLog estimate with RelativeError, the relative
	// standard error 1.04/√2^Precision (three of them bound ~99.7 % of
	// estimates).
	Exact         bool    `json:"exact"`
	RelativeError float64 `json:"relative_error"`
	Precision     int     `json:"precision"`
	// ExactLimit is the number of distinct blocks counted exactly before
	// the switch to estimates.
	ExactLimit int `json:"exact_limit"`
	// SplitUS is the latency split of the classes, µs: read calls below it
	// are cache-like, at or above it media-like; 0 when there are no
	// classes.
	SplitUS int64 `json:"split_us"`
	// Skipped counts malformed reads left out (Counter.Skipped).
	Skipped int64   `json:"skipped"`
	Total   Group   `json:"total"`
	Classes []Group `json:"classes"`
	Files   []Group `json:"files"`
	Events  []Group `json:"events"`
	Buckets []Group `json:"buckets"`
}

// Group is the figures of one group of reads.
type Group struct {
	// Name says which reads: "all", "cache-like", "media-like", "file 4",
	// "other files", an event's name, "other events", or a bucket's range.
	Name string `json:"name"`
	// File is a file group's file number (0 for other files).
	File uint32 `json:"file"`
	// LowUS and HighUS bound the elapsed time of a class's or a bucket's
	// read calls, [LowUS, HighUS) µs; HighUS 0 means no upper bound.
	LowUS  int64 `json:"low_us"`
	HighUS int64 `json:"high_us"`
	// Reads counts block reads (a read of N blocks counts N), ReadCalls
	// the reads as the database issued them.
	Reads     int64 `json:"reads"`
	ReadCalls int64 `json:"read_calls"`
	// DistinctBlocks counts the different blocks read (file and block
	// number), exactly or, when Exact is false, estimated within
	// RelativeError (relative standard error) and never above Reads.
	DistinctBlocks int64   `json:"distinct_blocks"`
	Exact          bool    `json:"exact"`
	RelativeError  float64 `json:"relative_error"`
	// ReadsPerBlock is Reads / DistinctBlocks.
	ReadsPerBlock float64 `json:"reads_per_block"`
	// RereadFraction is 1 − DistinctBlocks/Reads: the share of the
	// group's block reads that read a block the group had read before.
	RereadFraction float64 `json:"reread_fraction"`
}

// Result returns the figures so far. A split (rounded to the nearest
// power-of-two µs bucket boundary) divides read calls into cache-like and
// media-like classes; 0 gives no classes (see SuggestSplit).
func (c *Counter) Result(split time.Duration) *Result {
	r := &Result{
		Exact:      c.Exact(),
		Precision:  int(c.opt.Precision),
		ExactLimit: c.opt.ExactLimit,
		Skipped:    c.skipped,
	}
	if !r.Exact {
		r.RelativeError = relativeError(c.opt.Precision)
	}
	r.Total = c.group("all", &c.total)
	if k, ok := splitBucket(split); ok {
		r.SplitUS = 1 << k
		r.Classes = c.classes(k)
	}
	r.Files = c.fileGroups()
	r.Events = c.eventGroups()
	for b := range c.buckets {
		if c.buckets[b].calls == 0 {
			continue
		}
		g := c.group(bucketName(b), &c.buckets[b])
		g.LowUS, g.HighUS = bucketRange(b, b+1)
		r.Buckets = append(r.Buckets, g)
	}
	return r
}

// relativeError is HyperLogLog's relative standard error at precision p.
func relativeError(p uint8) float64 { return 1.04 / math.Sqrt(math.Ldexp(1, int(p))) }

// group returns a tally's figures, its distinct blocks exact or estimated.
func (c *Counter) group(name string, t *tally) Group {
	distinct := t.distinct
	if !c.Exact() {
		distinct = 0
		if t.sketch != nil {
			distinct = int64(t.sketch.Estimate())
		}
	}
	return c.figures(name, t.reads, t.calls, distinct)
}

// figures completes a group from its counts; an estimate above the reads
// (possible within the error on groups of few re-reads) is capped there.
func (c *Counter) figures(name string, reads, calls, distinct int64) Group {
	g := Group{Name: name, Reads: reads, ReadCalls: calls, DistinctBlocks: min(distinct, reads), Exact: c.Exact()}
	if !g.Exact {
		g.RelativeError = relativeError(c.opt.Precision)
	}
	if g.DistinctBlocks > 0 {
		g.ReadsPerBlock = float64(g.Reads) / float64(g.DistinctBlocks)
		g.RereadFraction = 1 - float64(g.DistinctBlocks)/float64(g.Reads)
	}
	return g
}

func (c *Counter) fileGroups() []Group {
	files := slices.Clone(c.files)
	slices.SortFunc(files, func(a, b *fileTally) int { return cmp.Compare(a.file, b.file) })
	var gs []Group
	for _, f := range files {
		g := c.group(fmt.Sprintf("file %d", f.file), &f.tally)
		g.File = f.file
		gs = append(gs, g)
	}
	if c.otherFiles.calls > 0 {
		gs = append(gs, c.group("other files", &c.otherFiles))
	}
	return gs
}

// eventGroups returns the events' figures, most block reads first.
func (c *Counter) eventGroups() []Group {
	var gs []Group
	for i, name := range c.events {
		gs = append(gs, c.group(name, &c.eventTallies[i]))
	}
	if c.eventTallies[MaxEvents].calls > 0 {
		gs = append(gs, c.group("other events", &c.eventTallies[MaxEvents]))
	}
	slices.SortStableFunc(gs, func(a, b Group) int { return cmp.Compare(b.Reads, a.Reads) })
	return gs
}

// splitBucket returns the bucket boundary nearest to split (on the log
// axis): classes split there, buckets below it cache-like.
func splitBucket(split time.Duration) (int, bool) {
	us := float64(split) / float64(time.Microsecond)
	if !(us > 0) {
		return 0, false
	}
	k := int(math.Round(math.Log2(us)))
	return min(max(k, 1), NumBuckets-1), true
}

// classes returns the cache-like (buckets below k) and media-like (k and
// above) groups. A block counts as distinct in a class if any of its reads
// fell in it, so the classes' distinct blocks may sum above the total.
func (c *Counter) classes(k int) []Group {
	below := uint32(1)<<k - 1
	classes := []struct {
		name   string
		mask   uint32
		lo, hi int
	}{
		{"cache-like", below, 0, k},
		{"media-like", ^below, k, NumBuckets},
	}
	gs := make([]Group, 0, len(classes))
	for _, cl := range classes {
		var reads, calls int64
		for b := cl.lo; b < cl.hi; b++ {
			reads += c.buckets[b].reads
			calls += c.buckets[b].calls
		}
		g := c.figures(cl.name, reads, calls, c.distinctIn(cl.mask))
		g.LowUS, g.HighUS = bucketRange(cl.lo, cl.hi)
		gs = append(gs, g)
	}
	return gs
}

// distinctIn counts the blocks read in any bucket of mask: from the exact
// set's bucket masks, or the estimate of the union of the buckets'
// sketches.
func (c *Counter) distinctIn(mask uint32) int64 {
	if c.set != nil {
		var n int64
		c.set.each(func(o slot) {
			if o.buckets&mask != 0 {
				n++
			}
		})
		return n
	}
	union, _ := hyperloglog.NewSketch(c.opt.Precision, true)
	for m := mask; m != 0; m &= m - 1 {
		if s := c.buckets[bits.TrailingZeros32(m)].sketch; s != nil {
			_ = union.Merge(s) // same precision: cannot fail
		}
	}
	return int64(union.Estimate())
}

// bucketRange returns the µs range of buckets [lo, hi): the first bucket
// starts at 0, the last one has no upper bound (0).
func bucketRange(lo, hi int) (lowUS, highUS int64) {
	if lo > 0 {
		lowUS = 1 << lo
	}
	if hi < NumBuckets {
		highUS = 1 << hi
	}
	return lowUS, highUS
}

// bucketName names a bucket by its range, "[256, 512) µs".
func bucketName(b int) string {
	lo, hi := bucketRange(b, b+1)
	if hi == 0 {
		return fmt.Sprintf("[%d, ∞) µs", lo)
	}
	return fmt.Sprintf("[%d, %d) µs", lo, hi)
}

// SuggestSplit returns the split between cache-like and media-like reads:
// the bucket boundary in the valley between the fastest latency mode of
// the read calls and the next one, found by probe/loadtest.FindModes on
// the single-block read calls (or, with none, all read calls). ok is false
// when the reads show fewer than two modes.
func (c *Counter) SuggestSplit() (split time.Duration, ok bool) {
	counts := c.singleCalls
	if isZero(counts[:]) {
		for b := range c.buckets {
			counts[b] = c.buckets[b].calls
		}
	}
	h := hist.NewBuckets(hist.Microsecond)
	h.ZeroPow = 1 // bucket 0 is [0, 2) µs
	for b, n := range counts {
		if n == 0 {
			continue
		}
		if b == 0 {
			h.ZeroCount += float64(n)
			continue
		}
		_ = h.AddBound(hist.LowerBound, math.Ldexp(1, b), float64(n)) // a power of two, a valid count
	}
	modes := loadtest.FindModes(h, loadtest.ModeOptions{})
	if len(modes) < 2 {
		return 0, false
	}
	slices.SortFunc(modes, func(a, b loadtest.Mode) int { return cmp.Compare(a.CenterUS, b.CenterUS) })
	k := valley(counts[:], bucketOf(int64(modes[0].CenterUS)), bucketOf(int64(modes[1].CenterUS)))
	return time.Duration(int64(1)<<k) * time.Microsecond, true
}

// valley returns the bucket boundary k in (from, to] (a bucket boundary
// between the modes' centre buckets) where the two buckets it separates,
// k−1 and k, hold the fewest read calls; the lowest such boundary on ties.
func valley(counts []int64, from, to int) int {
	if to <= from {
		return min(from+1, NumBuckets-1)
	}
	best, bestSum := to, int64(math.MaxInt64)
	for k := from + 1; k <= to; k++ {
		if s := counts[k-1] + counts[k]; s < bestSum {
			best, bestSum = k, s
		}
	}
	return best
}

func isZero(counts []int64) bool {
	return !slices.ContainsFunc(counts, func(n int64) bool { return n != 0 })
}
