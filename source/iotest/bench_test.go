package iotest

import (
	"io"
	"os"
	"testing"

	"github.com/latscope/latscope/hist"
)

// BenchmarkReadLoop measures the probe's own cost per read: timing,
// recording and a random 8 KiB read served by the page cache.
func BenchmarkReadLoop(b *testing.B) {
	s := newTestScratch(b, b.TempDir(), 16<<20)
	// Read the file once so that the benchmark measures cached reads only.
	if _, err := io.Copy(io.Discard, io.NewSectionReader(s.buffered, 0, s.size)); err != nil {
		b.Fatal(err)
	}
	benchmarkReads(b, s.buffered, s.size)
}

// BenchmarkReadLoopDirect measures O_DIRECT reads of the device under the
// test's temporary directory: mostly the device's latency.
func BenchmarkReadLoopDirect(b *testing.B) {
	s := newTestScratch(b, b.TempDir(), 16<<20)
	if s.reader != s.direct {
		b.Skipf("no O_DIRECT here: %s", s.whyCached)
	}
	benchmarkReads(b, s.direct, s.size)
}

func benchmarkReads(b *testing.B, f *os.File, size int64) {
	cfg := Config{FileSize: size, BlockSize: DefaultBlockSize}
	r := newReader(f, cfg, newShard())
	b.ReportAllocs()
	b.SetBytes(int64(cfg.BlockSize))
	for b.Loop() {
		if err := r.readOnce(); err != nil {
			b.Fatal(err)
		}
	}
	h := hist.NewExact(hist.Microsecond, zeroPow)
	r.shard.drainInto(h)
	b.ReportMetric(h.Quantile(0.5), "p50-µs")
	b.ReportMetric(h.Quantile(0.99), "p99-µs")
	b.ReportMetric(h.Mean(), "mean-µs")
	b.ReportMetric(h.Quantile(1), "max-µs")
}
