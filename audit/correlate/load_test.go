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

// TestInputFormatForced: a login log whose first 64 KiB hold only cron
// lines is not recognised; --input-format auth-log reads every line of it.
// An unknown name is an error listing the names.
func TestInputFormatForced(t *testing.T) {
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	auth, err := os.ReadFile(filepath.Join(dir, "auth.log"))
	if err != nil {
		t.Fatal(err)
	}
	cron := strings.Repeat("Nov 20 09:00:00 db1 CRON[77]: (root) CMD (/usr/lib/sa/sa1 1 1)\n", 1200)
	p := filepath.Join(t.TempDir(), "secure")
	os.WriteFile(p, []byte(cron+string(auth)), 0o644)
	files := []string{filepath.Join(dir, "ORCL_ora_5201_20261120100202123456789012.aud"), filepath.Join(dir, "audit.log"), p}
	if _, err := Load(context.Background(), files, nil, Options{Year: 2026}); err == nil || !strings.Contains(err.Error(), "secure: not an Oracle") {
		t.Fatalf("detected: err %v", err)
	}
	m, err := Load(context.Background(), files[2:], nil, Options{Year: 2026, InputFormat: "auth-log"})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Files[0]; got.Format != "auth-log" || got.Read != 1210 || got.Kept != 8 {
		t.Errorf("forced: %+v", got)
	}
	if _, err := Load(context.Background(), files, nil, Options{InputFormat: "syslog"}); err == nil || !strings.Contains(err.Error(), "oracle-aud, oracle-aud-xml") {
		t.Errorf("unknown format: err %v", err)
	}
}

// TestStdin: "-" reads Options.Stdin, its format detected.
func TestStdin(t *testing.T) {
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	f, err := os.Open(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Load(context.Background(), []string{"-"}, nil, Options{Stdin: f})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Files[0]; got.Name != "-" || got.Format != "linux-audit" || got.Read != 17 {
		t.Errorf("stdin: %+v", got)
	}
	if _, err := Load(context.Background(), []string{"-"}, nil, Options{}); err == nil {
		t.Error("- without Stdin: no error")
	}
}
