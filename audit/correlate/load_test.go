package correlate

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestUnknownFileIsAnError: a file in none of the formats is named, not skipped.
func TestUnknownFileIsAnError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(p, []byte("hello\nworld\n"), 0o644)
	_, err := Load(context.Background(), []string{p}, nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("err %v", err)
	}
}

// TestGzipAndMissingLogin: a gzipped audit log reads; without the login
// log and with the session's USER_LOGIN gone, the chain stops at the
// session and says unknown.
func TestGzipAndMissingLogin(t *testing.T) {
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	data, err := os.ReadFile(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(l, "type=USER_LOGIN") || !strings.Contains(l, "ses=43") {
			lines = append(lines, l)
		}
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(strings.Join(lines, "\n")))
	w.Close()
	p := filepath.Join(t.TempDir(), "audit.log.1.gz")
	os.WriteFile(p, gz.Bytes(), 0o644)
	m, err := Load(context.Background(), []string{filepath.Join(dir, "ORCL_ora_6300_20261120100605987654321098.aud"), p}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stop *Chain
	cs := m.Chains(Filter{})
	for i := range cs {
		if cs[i].Subject.Action == "SHUTDOWN" {
			stop = &cs[i]
		}
	}
	if stop == nil || stop.Login != nil || stop.Confidence != Unknown || stop.Links[0].Confidence != ByWatch {
		t.Fatalf("chain %+v", stop)
	}
}
