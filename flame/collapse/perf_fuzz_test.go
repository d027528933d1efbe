package collapse

import (
	"bytes"
	"os"
	"testing"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

// FuzzCollapsePerf: any input collapses without panic, and 1 thread with
// one chunk equals 2 threads with tiny chunks (the chunking never changes
// the result).
func FuzzCollapsePerf(f *testing.F) {
	for _, in := range perfInputs {
		data, err := os.ReadFile(perfTestFile(f, in+".txt"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 3000)], uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		opts := Options{PID: mode&1 != 0, TID: mode&2 != 0, Kernel: mode&4 != 0, JIT: mode&8 != 0, Addrs: mode&16 != 0}
		run := func(threads, block int) string {
			p := flame.New()
			r := &perfRun{in: Input{Name: "f", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5)},
				opts: opts, set: newPerfSettings(opts), threads: threads}
			if err := r.runWith(block, 4*block); err != nil {
				t.Fatal(err)
			}
			r.finish(p)
			var out bytes.Buffer
			p.WriteFolded(&out)
			return out.String()
		}
		one := run(1, chunkBlock)
		if two := run(2, 64); two != one {
			t.Fatalf("2 threads, 64-byte chunks:\n%q\n1 thread:\n%q", two, one)
		}
	})
}
