// A CPU-bound Go program with methods, closures and generics, profiled by
// TestInfernoRecorded.
package main

import (
	"fmt"
	"time"
)

type worker struct{ n int }

//go:noinline
func (w *worker) run(f func(int) int) int {
	s := 0
	for i := range 200000 {
		s += f(i)
	}
	return s
}

//go:noinline
func count[K comparable](k K, n int) int {
	m := map[K]int{}
	for i := range n {
		m[k] += i
	}
	return m[k]
}

func main() {
	w := &worker{}
	total := 0
	for start := time.Now(); time.Since(start) < 700*time.Millisecond; {
		total += w.run(func(i int) int { return i*i ^ 7 })
		total += count("key", 1000) + count(3.5, 1000)
	}
	fmt.Println(total != 42)
}
