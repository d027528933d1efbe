package oracle10046

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// repeatToSize repeats data until the result holds at least size bytes.
func repeatToSize(data []byte, size int) []byte {
	n := (size + len(data) - 1) / len(data)
	return bytes.Repeat(data, n)
}

// BenchmarkParse measures parse throughput on the 11.1 trace (binds, SQL
// text, 2289 WAIT lines per 1.28 MB) repeated in memory to about 64 MB.
func BenchmarkParse(b *testing.B) {
	one := readShared(b, fileDBM11106)
	data := repeatToSize(one, 64<<20)
	want := float64(2289 * (len(data) / len(one)))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		src, _ := Open(source.Input{Name: "bench", Reader: bytes.NewReader(data)}, source.Options{})
		waits := 0.0
		err := src.Run(context.Background(), func(iv stream.Interval) error {
			for _, s := range iv.Series {
				waits += s.Hist.Count()
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if waits != want {
			b.Fatalf("waits = %g, want %g", waits, want)
		}
	}
	// Wall-clock MB/s is noisy when other jobs share the cores; MB per
	// CPU second is not (it includes the GC's work).
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(len(data))/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// BenchmarkReadCalls measures the same input read with its calls (what
// latscope profile does), for comparison with BenchmarkParse.
func BenchmarkReadCalls(b *testing.B) {
	one := readShared(b, fileDBM11106)
	data := repeatToSize(one, 64<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		var cc callCounter
		if err := ReadCalls(context.Background(), source.Input{Name: "bench", Reader: bytes.NewReader(data)}, source.Options{}, &cc); err != nil {
			b.Fatal(err)
		}
		if cc.waits != 2289*(len(data)/len(one)) {
			b.Fatalf("waits = %d", cc.waits)
		}
	}
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(len(data))/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// BenchmarkParseCallsBlocks is BenchmarkParse with the database calls as
// series (--calls type) and every block read handed to a handler.
func BenchmarkParseCallsBlocks(b *testing.B) {
	benchmarkParseWith(b, func(opts *source.Options) {
		opts.Calls = source.CallsByType
		opts.BlockReads = func(stream.BlockRead) {}
	})
}

// BenchmarkParseBlocks is BenchmarkParse with every block read handed to a
// handler (what latscope workingset asks for).
func BenchmarkParseBlocks(b *testing.B) {
	benchmarkParseWith(b, func(opts *source.Options) {
		opts.BlockReads = func(stream.BlockRead) {}
	})
}

// BenchmarkParseCalls is BenchmarkParse with the calls as series
// (--calls type).
func BenchmarkParseCalls(b *testing.B) {
	benchmarkParseWith(b, func(opts *source.Options) { opts.Calls = source.CallsByType })
}

func benchmarkParseWith(b *testing.B, set func(*source.Options)) {
	benchmarkParseRun(b, set, func(data []byte, opts source.Options) error {
		src, _ := Open(source.Input{Name: "bench", Reader: bytes.NewReader(data)}, opts)
		return src.Run(context.Background(), func(stream.Interval) error { return nil })
	})
}

// benchmarkParseRun parses 64 MB of DBM11106 with run, per iteration,
// and reports MB per CPU second.
func benchmarkParseRun(b *testing.B, set func(*source.Options), run func([]byte, source.Options) error) {
	one := readShared(b, fileDBM11106)
	data := repeatToSize(one, 64<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		var opts source.Options
		set(&opts)
		if err := run(data, opts); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(len(data))/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// BenchmarkParseParallel is BenchmarkParse through the parallel parse
// (GOMAXPROCS workers, the chunk size Open uses).
func BenchmarkParseParallel(b *testing.B) {
	benchmarkParallel(b, func(*source.Options) {})
}

// BenchmarkParseCallsParallel is BenchmarkParseCalls through the parallel
// parse.
func BenchmarkParseCallsParallel(b *testing.B) {
	benchmarkParallel(b, func(opts *source.Options) { opts.Calls = source.CallsByType })
}

func benchmarkParallel(b *testing.B, set func(*source.Options)) {
	benchmarkParseRun(b, set, func(data []byte, opts source.Options) error {
		in := source.Input{Name: "bench", Reader: bytes.NewReader(data)}
		p := newParser(in, opts, func(stream.Interval) error { return nil })
		return p.runParallel(context.Background(), bytes.NewReader(data), int64(len(data)), runtime.GOMAXPROCS(0), parallelChunk)
	})
}
