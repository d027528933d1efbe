package authlog

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// seeds adds the real files of a folder (and synthetic lines) as seeds.
func seeds(f *testing.F, pattern string, extra ...string) {
	for _, rel := range testenv.DataFiles(f, pattern) {
		data, err := os.ReadFile(testenv.DataFile(f, rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 64<<10)])
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// fuzzRead reads data with small limits; it fails on an error other than
// a damaged gzip stream and on a record outside the input's lines.
func fuzzRead(t *testing.T, data []byte) (records int, diag *input.Diagnostics) {
	diag = input.NewDiagnostics(nil, 0)
	lines := bytes.Count(data, []byte("\n")) + 1
	err := Reader{Year: 2020, MaxLineBytes: 4096}.Read(context.Background(), "fuzz", bytes.NewReader(data), diag, func(r Record) error {
		if r.Line < 1 || r.Line > lines {
			t.Fatalf("record on line %d of %d", r.Line, lines)
		}
		records++
		return nil
	})
	if err != nil && !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Fatal(err)
	}
	return records, diag
}

// nonBlankLines counts the lines a line-per-record format must account for.
func nonBlankLines(data []byte) int {
	n := 0
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}

// FuzzReadSyslog: every non-blank line is a record or a reported line.
func FuzzReadSyslog(f *testing.F) {
	seeds(f, "audit/auth-log/*/*.log", acceptedLine+"\n"+sudoLine, "<13>1 2026-01-01T00:00:00Z h a 1 - [x y=\"\\]\"] m", "Jan  1 00:00:00 h su[1]: (to ")
	f.Fuzz(func(t *testing.T, data []byte) {
		if f, _ := DetectFormat(data); f != "" && f != FormatSyslog || bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			return
		}
		records, diag := fuzzRead(t, data)
		if got := records + diag.Count("fuzz"); got != nonBlankLines(data) {
			t.Fatalf("%d records + %d skipped lines, the input has %d non-blank lines", records, diag.Count("fuzz"), nonBlankLines(data))
		}
	})
}

// FuzzReadJournalExport: whatever follows an export's first field, Read
// does not fail nor panic.
func FuzzReadJournalExport(f *testing.F) {
	seeds(f, "audit/auth-log/journal-synthetic/*.export", "__CURSOR=a\nMESSAGE\n\x05\x00\x00\x00\x00\x00\x00\x00ab\ncd\n\n", "__REALTIME_TIMESTAMP=1\nMESSAGE\n\xff\xff\xff\xff\xff\xff\xff\xff")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, append([]byte("__CURSOR=x\n"), data...))
	})
}

// FuzzReadJournalJSON: every non-blank line is a record or a reported line.
func FuzzReadJournalJSON(f *testing.F) {
	seeds(f, "audit/auth-log/journal-synthetic/*.json", `{"__CURSOR":"a","MESSAGE":[255,0]}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		data = append([]byte(`{"__CURSOR":"x"}`+"\n"), data...)
		records, diag := fuzzRead(t, data)
		if got := records + diag.Count("fuzz"); got != nonBlankLines(data) {
			t.Fatalf("%d records + %d skipped lines, the input has %d non-blank lines", records, diag.Count("fuzz"), nonBlankLines(data))
		}
	})
}
