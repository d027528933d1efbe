package authlog

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// benchRead reads rel repeated to about 32 MiB, reporting MB/s (one core:
// the reader is sequential) and allocations.
func benchRead(b *testing.B, rel string) {
	data, err := os.ReadFile(testenv.DataFile(b, rel))
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = bytes.Repeat(data, max(1, (32<<20)/len(data)))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		n := 0
		err := Reader{Year: 2017}.Read(context.Background(), rel, bytes.NewReader(data), input.NewDiagnostics(nil, 0), func(Record) error {
			n++
			return nil
		})
		if err != nil || n == 0 {
			b.Fatal(n, err)
		}
	}
	// The machine is shared: the CPU time the reading took says more about
	// one core's speed than the wall clock.
	b.ReportMetric(float64(len(data))*float64(b.N)/1e6/(cpuTime()-cpu0).Seconds(), "cpu-MB/s")
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkReadAuthLog(b *testing.B) { benchRead(b, "audit/auth-log/elastic-examples/auth.log") }

func BenchmarkReadJournalExport(b *testing.B) {
	benchRead(b, "audit/auth-log/journal-synthetic/journal.export")
}

func BenchmarkReadJournalJSON(b *testing.B) {
	benchRead(b, "audit/auth-log/journal-synthetic/journal.json")
}
