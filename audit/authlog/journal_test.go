package authlog

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestJournalFormatsAgree: the synthetic journal's export and JSON give
// the same records, typed, with the journal's fields.
func TestJournalFormatsAgree(t *testing.T) {
	const dir = "audit/auth-log/journal-synthetic/"
	export, diagE := readJournal(t, dir+"journal.export", FormatJournalExport)
	js, diagJ := readJournal(t, dir+"journal.json", FormatJournalJSON)
	if len(export) != 11 || len(js) != len(export) {
		t.Fatalf("%d export records, %d JSON records, want 11", len(export), len(js))
	}
	if diagE.Count(dir+"journal.export")+diagJ.Count(dir+"journal.json") != 0 {
		t.Errorf("problems: %v %v", diagE.Problems(), diagJ.Problems())
	}
	for i := range export {
		e, j := export[i], js[i]
		e.Source, e.Format, e.Line, j.Source, j.Format, j.Line = "", "", 0, "", "", 0
		if e != j {
			t.Errorf("entry %d:\nexport %+v\n  json %+v", i, e, j)
		}
	}
	login := export[1]
	if login.Kind != KindSSHAccepted || login.User != "oracle" || login.Addr != "192.0.2.10" || login.Port != 50522 || login.Method != "publickey" ||
		login.Host != "dbhost1" || login.PID != 4120 || !login.Time.Equal(time.Date(2023, 11, 14, 22, 13, 21, 500000000, time.UTC)) {
		t.Errorf("login: %+v", login)
	}
	sudo := export[4]
	if sudo.Kind != KindSudo || sudo.User != "oracle" || sudo.TargetUser != "root" || sudo.Command != "/usr/bin/systemctl stop oracle-db" ||
		sudo.AuditSession != "7" || sudo.LoginUID != "1001" {
		t.Errorf("sudo: %+v", sudo)
	}
	if su := export[6]; su.Kind != KindSu || su.User != "oracle" || su.TargetUser != "grid" || su.TTY != "pts/0" {
		t.Errorf("su: %+v", su)
	}
	if bad := export[8]; bad.Kind != KindSSHInvalidUser || bad.User != "j\uFFFDr\uFFFDme" || bad.Addr != "192.0.2.99" {
		t.Errorf("binary MESSAGE: %+v", bad)
	}
	if export[1].Line != 18 {
		t.Errorf("second entry starts on line %d, want 18", export[1].Line)
	}
}

func readJournal(t *testing.T, rel string, want Format) ([]Record, *input.Diagnostics) {
	t.Helper()
	data, err := os.ReadFile(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	if f, v := DetectFormat(data); f != want || v != input.Yes {
		t.Errorf("%s detected as %q (%v)", rel, f, v)
	}
	return readString(t, rel, string(data))
}

// readString reads text named name and returns its records.
func readString(t testing.TB, name, text string) ([]Record, *input.Diagnostics) {
	t.Helper()
	diag := input.NewDiagnostics(nil, 100)
	var recs []Record
	err := Reader{Year: 2024}.Read(context.Background(), name, strings.NewReader(text), diag, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, diag
}

// TestJournalExportInterleaved: an entry that starts without the blank
// line before it ends the previous one, reported with its line.
func TestJournalExportInterleaved(t *testing.T) {
	data, err := os.ReadFile(testenv.DataFile(t, "audit/auth-log/journal-synthetic/journal.export"))
	if err != nil {
		t.Fatal(err)
	}
	joined := bytes.Replace(data, []byte("\n\n__CURSOR"), []byte("\n__CURSOR"), 1)
	recs, diag := readString(t, "j.export", string(joined))
	if len(recs) != 11 || diag.Count("j.export") != 1 {
		t.Fatalf("%d records, %d problems: %v", len(recs), diag.Count("j.export"), diag.Problems())
	}
	if p := diag.Problems()[0].First[0]; p.Line != 17 || !strings.Contains(p.Reason, "without a blank line") {
		t.Errorf("problem %+v", p)
	}
	if recs[0].Kind != KindSSHFailed || recs[1].Kind != KindSSHAccepted {
		t.Errorf("kinds %s %s", recs[0].Kind, recs[1].Kind)
	}
}
