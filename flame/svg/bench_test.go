package svg

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// syntheticLarge is SYNTHETIC folded input shaped like a busy server
// profile: n distinct stacks, 8–48 frames deep, drawn from a few thousand
// C++/Java/kernel-style names with a fixed seed.
func syntheticLarge(n int) []byte {
	rng := rand.New(rand.NewPCG(7, 11))
	names := make([]string, 3000)
	for i := range names {
		switch i % 3 {
		case 0:
			names[i] = "org/app/service/Handler" + strconv.Itoa(i) + ":.process"
		case 1:
			names[i] = "std::vector<int>::operator_" + strconv.Itoa(i)
		default:
			names[i] = "sys_call_" + strconv.Itoa(i) + "_[k]"
		}
	}
	seen := map[string]bool{}
	var b strings.Builder
	var stack []string
	for len(seen) < n {
		depth := 8 + rng.IntN(41)
		// Share a prefix with the previous stack most of the time, as
		// real profiles do.
		keep := min(len(stack), rng.IntN(depth+1))
		stack = stack[:keep]
		for len(stack) < depth {
			stack = append(stack, names[rng.IntN(len(names))/(1+len(stack)/4)])
		}
		s := strings.Join(stack, ";")
		if seen[s] {
			continue
		}
		seen[s] = true
		b.WriteString(s + " " + strconv.Itoa(1+rng.IntN(200)) + "\n")
	}
	return []byte(b.String())
}

// BenchmarkWriteSVG renders 80,000 distinct stacks; MB/s are of folded
// input. Set LATSCOPE_SVG_BENCH_FOLDED=FILE to write that input for
// `hyperfine 'inferno-flamegraph FILE'`.
func BenchmarkWriteSVG(b *testing.B) {
	in := syntheticLarge(80000)
	if path := os.Getenv("LATSCOPE_SVG_BENCH_FOLDED"); path != "" {
		if err := os.WriteFile(path, in, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	p := readFolded(b, bytes.NewReader(in))
	b.Run("render", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			if err := Write(io.Discard, p, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// parse+render is what inferno-flamegraph does per run (the parser
	// here is the test's simple one, not latscope's folded collapser).
	b.Run("parse+render", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			if err := Write(io.Discard, readFolded(b, bytes.NewReader(in)), Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
