package authlog

import (
	"bytes"
	"context"
	"os"
	"testing"

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
}

func BenchmarkReadAuthLog(b *testing.B) { benchRead(b, "audit/auth-log/elastic-examples/auth.log") }

func BenchmarkReadJournalExport(b *testing.B) {
	benchRead(b, "audit/auth-log/journal-synthetic/journal.export")
}

func BenchmarkReadJournalJSON(b *testing.B) {
	benchRead(b, "audit/auth-log/journal-synthetic/journal.json")
}
