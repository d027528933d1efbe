package collapse

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

// perfChunkings are the (threads, chunk size) pairs every fuzz input is
// collapsed with: tiny chunks cut nearly every line and sample, so each
// way a sample, a header or the first event can fall across a cut is met.
var perfChunkings = []struct{ threads, block int }{
	{1, 1}, {2, 1}, {2, 7}, {3, 16}, {2, 64}, {4, 300}, {2, 4096},
}

// collapsePerfChunked collapses data with the given threads and chunk size
// (chunks grow to 4×block before a sample is cut mid-way).
func collapsePerfChunked(t testing.TB, data []byte, opts Options, threads, block int) string {
	t.Helper()
	p := flame.New()
	r := &perfRun{in: Input{Name: "f", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5)},
		opts: opts, set: newPerfSettings(opts), threads: threads}
	if err := r.runWith(block, 4*block); err != nil {
		t.Fatal(err)
	}
	r.finish(p)
	var out bytes.Buffer
	if err := p.WriteFolded(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// FuzzCollapsePerf: any input collapses without panic, and one thread
// reading one chunk gives the same output as every perfChunkings pair.
func FuzzCollapsePerf(f *testing.F) {
	for _, in := range perfInputs {
		data, err := os.ReadFile(perfTestFile(f, in+".txt"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 3000)], uint8(0))
		f.Add(data[:min(len(data), 3000)], uint8(32)) // --compat perl
	}
	r := rand.New(rand.NewPCG(1, 1))
	f.Add(generatedPerf(r, 5), uint8(0))
	f.Add(generatedPerfFlat(r, 5), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		DetectPerf(data) // no panic
		opts := Options{PID: mode&1 != 0, TID: mode&2 != 0, Kernel: mode&4 != 0, JIT: mode&8 != 0, Addrs: mode&16 != 0,
			Perl: mode&32 != 0}
		one := collapsePerfChunked(t, data, opts, 1, chunkBlock)
		for _, c := range perfChunkings {
			if got := collapsePerfChunked(t, data, opts, c.threads, c.block); got != one {
				t.Fatalf("%d threads, %d-byte chunks:\n%q\n1 thread, one chunk:\n%q", c.threads, c.block, got, one)
			}
		}
	})
}
