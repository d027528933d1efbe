package oracle10046

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// blockCountAwk is the independent count: awk expands every block read's
// range (p1 file, p2 first block, p3 count, the numbers after the first
// three '=' that follow ela) and counts reads, blocks and distinct blocks.
const blockCountAwk = `
/^WAIT #/ && match($0, /nam='[^']*' ela=/) {
	ev = substr($0, RSTART + 5, RLENGTH - 11)
	if (ev != "db file sequential read" && ev != "db file scattered read" && ev != "direct path read" && ev != "direct path read temp") next
	split(substr($0, RSTART + RLENGTH), f, "=")
	calls++; blocks += f[4] + 0
	for (i = 0; i < f[4] + 0; i++) seen[(f[2] + 0) ":" (f[3] + i)] = 1
}
END { n = 0; for (k in seen) n++; printf "%d reads, %d blocks, %d distinct\n", calls, blocks, n }
`

// TestBlockReadsEqualAwk: the addresses handed to BlockReads from every
// real trace equal awk's reading of the raw WAIT lines.
func TestBlockReadsEqualAwk(t *testing.T) {
	if _, err := exec.LookPath("awk"); err != nil {
		testenv.SkipOrFail(t, "awk is not installed: %v", err)
	}
	withReads := 0
	for _, rel := range allTraces(t) {
		t.Run(rel, func(t *testing.T) {
			out, err := exec.Command("awk", blockCountAwk, testenv.DataFile(t, rel)).Output()
			if err != nil {
				t.Fatalf("awk: %v", err)
			}
			var calls, blocks int
			seen := map[[2]uint64]bool{}
			opts := source.Options{BlockReads: func(r stream.BlockRead) {
				calls++
				blocks += int(r.Blocks)
				for i := range uint64(r.Blocks) {
					seen[[2]uint64{uint64(r.File), r.Block + i}] = true
				}
				if r.Micros < 0 || r.Event == "" {
					t.Errorf("read %+v", r)
				}
			}}
			runTrace(t, readShared(t, rel), opts)
			got := fmt.Sprintf("%d reads, %d blocks, %d distinct\n", calls, blocks, len(seen))
			if got != string(out) {
				t.Errorf("latscope: %sawk:      %s", got, out)
			}
			if calls > 0 {
				withReads++
			}
		})
	}
	if withReads < 3 {
		t.Errorf("only %d traces have block reads: the comparison tests little", withReads)
	}
}

// TestBlockReadTimes: a block read carries the trace's wall clock once a
// timestamp line has anchored it.
func TestBlockReadTimes(t *testing.T) {
	trace := "*** 2024-01-02 03:04:05.000000\n" +
		"WAIT #4: nam='db file sequential read' ela= 9697 file#=1 block#=7725 blocks=1 obj#=12446 tim=1000000\n" +
		"WAIT #5: nam='direct path read temp' ela= 36358 file number=201 first dba=630665 block cnt=3 obj#=12546 tim=2000000\n" +
		"WAIT #5: nam='db file scattered read' ela= 3 file#=4 block#=284 blocks=0 obj#=12523 tim=2000010\n" +
		"WAIT #5: nam='read by other session' ela= 17610 file#=25 block#=31393 class#=1 obj#=73207 tim=2000020\n"
	var reads []stream.BlockRead
	diag := runTrace(t, []byte(trace), source.Options{BlockReads: func(r stream.BlockRead) { reads = append(reads, r) }})
	if len(reads) != 2 {
		t.Fatalf("reads = %+v", reads)
	}
	want0 := stream.BlockRead{File: 1, Block: 7725, Blocks: 1, Micros: 9697, Event: "db file sequential read"}
	got0 := reads[0]
	got0.Time = want0.Time
	if got0 != want0 || reads[0].Time.IsZero() {
		t.Errorf("first read %+v", reads[0])
	}
	if r := reads[1]; r.File != 201 || r.Block != 630665 || r.Blocks != 3 || r.Time.Sub(reads[0].Time).Microseconds() != 1000000 {
		t.Errorf("second read %+v", r)
	}
	if p := diag.Problems(); len(p) != 1 || p[0].Count != 1 || len(p[0].First) != 1 || p[0].First[0].Line != 4 || !strings.Contains(p[0].First[0].Reason, "impossible address") {
		t.Errorf("the read of 0 blocks is not reported at line 4: %+v", p)
	}
}

// runTrace runs a trace through the latency parser with opts and returns
// its diagnostics.
func runTrace(t *testing.T, data []byte, opts source.Options) *input.Diagnostics {
	t.Helper()
	diag := input.NewDiagnostics(nil, 5)
	src, err := Open(source.Input{Name: "t", Reader: bytes.NewReader(data), Diag: diag}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Run(context.Background(), func(stream.Interval) error { return nil }); err != nil && !strings.Contains(err.Error(), "no latency") {
		t.Fatal(err)
	}
	return diag
}

// FuzzBlockReads: whatever the input, every block read handed over has a
// sane address, and there are no more of them than WAIT lines.
func FuzzBlockReads(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte("WAIT #4: nam='db file scattered read' ela= 9 file#=1 block#=18446744073709551615 blocks=99999999 obj#=1 tim=5\n"))
	f.Add([]byte("WAIT #4: nam='direct path read' ela= 9 file number= first dba=2 block cnt=1 tim=5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		reads := 0
		opts := source.Options{BlockReads: func(r stream.BlockRead) {
			reads++
			if r.Blocks < 1 || r.Blocks > maxBlocksPerRead || r.Micros < 0 || !blockReadEvents[r.Event] {
				t.Fatalf("read %+v", r)
			}
		}}
		src, err := Open(source.Input{Name: "f", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 0)}, opts)
		if err != nil {
			return
		}
		_ = src.Run(context.Background(), func(stream.Interval) error { return nil })
		if lines := bytes.Count(data, []byte("WAIT #")); reads > lines {
			t.Fatalf("%d reads from %d WAIT lines", reads, lines)
		}
	})
}
