package linuxaudit

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// FuzzRead: whatever the input, Read does not panic, and every non-blank
// line is either a record of one event or a reported skipped line.
func FuzzRead(f *testing.F) {
	for _, rel := range testenv.DataFiles(f, "audit/linux-audit/*/*") {
		data, err := os.ReadFile(testenv.DataFile(f, rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(lines(syscallRec, pathRec[:40], userCmdRec, "type=EXECVE msg=audit(1.2:3): argc=2 a0_len=4 a0[0]=6162 a1=\"x"))
	f.Add([]byte("node=n type=T msg=audit(1.1:1): msg='a=\"b\x1dC={ d"))
	f.Fuzz(func(t *testing.T, data []byte) {
		diag := input.NewDiagnostics(nil, 0)
		records := 0
		err := Reader{MaxLineBytes: 4096, MaxOpen: 8}.Read(context.Background(), "fuzz", bytes.NewReader(data), diag, func(e Event) error {
			for _, r := range e.Records {
				if r.Serial != e.Serial || r.Node != e.Node {
					t.Fatalf("record %d of node %q in event %d of %q", r.Serial, r.Node, e.Serial, e.Node)
				}
			}
			records += len(e.Records)
			return nil
		})
		if err != nil {
			if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
				return // gzip magic, damaged stream
			}
			t.Fatal(err)
		}
		nonBlank := 0
		for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
			if strings.Trim(line, " \t\r") != "" {
				nonBlank++
			}
		}
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			return
		}
		if got := records + diag.Count("fuzz"); got != nonBlank {
			t.Fatalf("%d records + %d skipped lines, the input has %d non-blank lines", records, diag.Count("fuzz"), nonBlank)
		}
		// FieldsOnly fills the same fields from its copy of them.
		read := func(rd Reader) []Event {
			var out []Event
			rd.MaxLineBytes, rd.MaxOpen = 4096, 8
			_ = rd.Read(context.Background(), "fuzz", bytes.NewReader(data), nil, func(e Event) error {
				e.Records = nil
				out = append(out, e)
				return nil
			})
			return out
		}
		if whole, only := read(Reader{}), read(Reader{FieldsOnly: true}); !reflect.DeepEqual(whole, only) {
			t.Fatalf("FieldsOnly events differ:\n%+v\n%+v", whole, only)
		}
	})
}
