package correlate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/latscope/latscope/input"
)

// BenchmarkLoadAndChains reads and correlates the trail that
// scripts/auditgen wrote into $LATSCOPE_AUDITGEN_DIR (skipped without it):
//
//	go run ./scripts/auditgen -mb 100 -out /tmp/g100
//	LATSCOPE_AUDITGEN_DIR=/tmp/g100 go test -run '^$' -bench LoadAndChains -cpu 1 ./audit/correlate
func BenchmarkLoadAndChains(b *testing.B) {
	dir := os.Getenv("LATSCOPE_AUDITGEN_DIR")
	if dir == "" {
		b.Skip("set LATSCOPE_AUDITGEN_DIR to a directory written by scripts/auditgen")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "adump", "*.aud"))
	files = append(files, filepath.Join(dir, "audit.log"), filepath.Join(dir, "auth.log"))
	st, err := os.Stat(filepath.Join(dir, "audit.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for range b.N {
		m, err := Load(context.Background(), files, input.NewDiagnostics(nil, 0), Options{Year: 2026})
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Chains(Filter{})) == 0 {
			b.Fatal("no chains")
		}
	}
}
