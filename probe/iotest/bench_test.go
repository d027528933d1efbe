package iotest

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/latscope/latscope/probe/loadtest"
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
	w := newWorker(&testFile{reader: f, size: size}, DefaultBlockSize, false, loadtest.NewRecorder())
	b.ReportAllocs()
	b.SetBytes(DefaultBlockSize)
	for b.Loop() {
		t0 := time.Now()
		if err := w.once(); err != nil {
			b.Fatal(err)
		}
		w.shard.Record(time.Since(t0))
	}
	win := loadtest.NewWindow()
	w.shard.DrainInto(win)
	h := win.Lat
	b.ReportMetric(h.Quantile(0.5), "p50-µs")
	b.ReportMetric(h.Quantile(0.99), "p99-µs")
	b.ReportMetric(h.Mean(), "mean-µs")
	b.ReportMetric(h.Quantile(1), "max-µs")
}
