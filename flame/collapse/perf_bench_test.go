package collapse

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/latscope/latscope/flame"
)

// BenchmarkCollapsePerf collapses ~32 MB of real perf script text (the
// FlameGraph inputs recorded with the cycles event, repeated) with 1 and
// 2 threads, in the default reading and under --compat perl ("/perl").
// MB/s = input throughput.
func BenchmarkCollapsePerf(b *testing.B) {
	var one bytes.Buffer
	for _, in := range []string{"perf-vertx-stacks-01", "perf-java-stacks-01", "perf-mirageos-stacks-01"} {
		data, err := os.ReadFile(perfTestFile(b, in+".txt"))
		if err != nil {
			b.Fatal(err)
		}
		one.Write(data)
		one.WriteString("\n")
	}
	input := bytes.Repeat(one.Bytes(), (32<<20)/one.Len()+1)
	for _, perl := range []bool{false, true} {
		for _, threads := range []int{1, 2} {
			name := fmt.Sprintf("threads=%d", threads)
			if perl {
				name += "/perl"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(input)))
				b.ReportAllocs()
				opts := Options{All: true, Threads: threads, Perl: perl}
				for b.Loop() {
					p := flame.New()
					if err := CollapsePerf(Input{Name: "bench", Reader: bytes.NewReader(input)}, opts, p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
