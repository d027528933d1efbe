package workingset

import (
	"fmt"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

// fuzzReads decodes 6 bytes a read: file (1 of 3), first block, blocks
// (0 to 15: 0 is malformed), elapsed time (over 2^0 to 2^31 µs) and event
// (1 of 10: past MaxEvents).
func fuzzReads(data []byte) []stream.BlockRead {
	var reads []stream.BlockRead
	for ; len(data) >= 6; data = data[6:] {
		reads = append(reads, stream.BlockRead{
			File:   uint32(data[0]%3) + 1,
			Block:  uint64(data[1]) | uint64(data[2]&3)<<8,
			Blocks: uint32(data[3] % 16),
			Micros: int64(data[4]) << (data[5] % 32),
			Event:  fmt.Sprintf("event %d", data[5]%10),
		})
	}
	return reads
}

// model counts the same figures the plain way, with maps.
type model struct {
	reads, calls map[string]int64
	blocks       map[string]map[string]bool // group → file:block set
}

func newModel(reads []stream.BlockRead, split int, maxFiles int) model {
	m := model{reads: map[string]int64{}, calls: map[string]int64{}, blocks: map[string]map[string]bool{}}
	files := map[uint32]bool{}
	var events []string
	for _, r := range reads {
		if r.Blocks == 0 {
			continue
		}
		file := fmt.Sprintf("file %d", r.File)
		if !files[r.File] && len(files) == maxFiles {
			file = "other files"
		} else {
			files[r.File] = true
		}
		event := r.Event
		if !contains(events, event) {
			if len(events) == MaxEvents {
				event = "other events"
			} else {
				events = append(events, event)
			}
		}
		b := bucketOf(r.Micros)
		class := "cache-like"
		if b >= split {
			class = "media-like"
		}
		for _, g := range []string{"all", file, event, bucketName(b), class} {
			m.reads[g] += int64(r.Blocks)
			m.calls[g]++
			if m.blocks[g] == nil {
				m.blocks[g] = map[string]bool{}
			}
			for i := range uint64(r.Blocks) {
				m.blocks[g][fmt.Sprint(r.File, ":", r.Block+i)] = true
			}
		}
	}
	return m
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// FuzzCounterMatchesModel: whatever the reads, exact counts equal the maps'
// in every group, and past a tiny exact limit the counter neither fails
// nor loses reads.
func FuzzCounterMatchesModel(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 10, 0, 4, 50, 0, 0, 12, 0, 3, 78, 12, 1, 10, 0, 1, 100, 0, 0, 10, 0, 1, 125, 6})
	f.Add([]byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox jumps over the lazy dog"))
	f.Fuzz(func(t *testing.T, data []byte) {
		reads := fuzzReads(data)
		const split = 10 // 1024 µs
		c := NewCounter(Options{MaxFiles: 2})
		small := NewCounter(Options{ExactLimit: 8, MaxFiles: 2})
		for _, r := range reads {
			c.Add(r)
			small.Add(r)
		}
		m := newModel(reads, split, 2)
		r := c.Result(1024 * time.Microsecond)
		groups := append([]Group{r.Total}, r.Classes...)
		groups = append(append(append(groups, r.Files...), r.Events...), r.Buckets...)
		for _, g := range groups {
			if g.Reads != m.reads[g.Name] || g.ReadCalls != m.calls[g.Name] || g.DistinctBlocks != int64(len(m.blocks[g.Name])) {
				t.Errorf("%s: reads %d, calls %d, distinct %d; the model: %d, %d, %d", g.Name, g.Reads, g.ReadCalls, g.DistinctBlocks,
					m.reads[g.Name], m.calls[g.Name], len(m.blocks[g.Name]))
			}
		}
		s := small.Result(1024 * time.Microsecond)
		if s.Total.Reads != r.Total.Reads || s.Skipped != r.Skipped || s.Total.DistinctBlocks > s.Total.Reads {
			t.Errorf("exact limit 8: %+v, skipped %d; exact %+v, skipped %d", s.Total, s.Skipped, r.Total, r.Skipped)
		}
	})
}
