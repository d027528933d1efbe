package oracleaud

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/latscope/latscope/input"
)

const (
	stampStop  = "Thu Nov 26 14:10:09 2026 +01:00"
	stampStart = "Thu Nov 26 14:11:30 2026 +01:00"
)

// wantProblems checks that each expected "file:line: text" fragment is
// among the problems reported, and that there are no others.
func wantProblems(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("problems %q, want %d", got, len(want))
		return
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("problem %q does not say %q", got[i], w)
		}
	}
}

// TestSyntheticShutdown: a SHUTDOWN record in the STARTUP layout.
func TestSyntheticShutdown(t *testing.T) {
	recs, diag := readAll(t, "db.aud", synthHeader+synthRecord(stampStop, "SHUTDOWN", "138", "pts/1"))
	if len(recs) != 1 || recs[0].Kind != KindShutdown || recs[0].Process.PID != 4242 || recs[0].Process.Version != "19.21.0.0.0" ||
		recs[0].Line != 16 || recs[0].ClientTerminal != "pts/1" || len(problems(diag)) > 0 {
		t.Errorf("records %+v problems %q", recs, problems(diag))
	}
}

// TestTruncatedRecords: a record cut inside a multi-line value keeps what
// it had and says where; a timestamp line alone at the end is reported.
func TestTruncatedRecords(t *testing.T) {
	long := synthRecord(stampStart, "select 1\nfrom dual\nwhere 'a' = 'a'", "3", "pts/1")
	cut := long[:strings.Index(long, "from dual")+4]
	in := synthHeader + synthRecord(stampStop, "SHUTDOWN", "138", "pts/1") + cut + "\n\n" + stampStart + "\n"
	recs, diag := readAll(t, "cut.aud", in)
	if len(recs) != 2 || recs[0].Kind != KindShutdown || recs[1].Action != "select 1\nfrom" {
		t.Errorf("records %+v", recs)
	}
	wantProblems(t, problems(diag),
		"cut.aud:32: value of ACTION cut short (13 of 34 bytes): record kept",
		"cut.aud:35: truncated record: a timestamp line with no LENGTH")
}

// TestInterleavedFiles: two processes' files concatenated (`cat *.aud`),
// records attributed to the process whose header precedes them; a line of
// junk between records is reported and the rest read.
func TestInterleavedFiles(t *testing.T) {
	other := strings.ReplaceAll(strings.ReplaceAll(synthHeader, "4242", "5151"), "(TNS V1-V3)", "(J001)")
	other = strings.ReplaceAll(other, "DB1_ora_5151", "DB1_j001_5151")
	in := synthHeader + synthRecord(stampStop, "SHUTDOWN", "138", "pts/1") +
		other + synthRecord(stampStart, "select 1 from dual", "3", "UNKNOWN") +
		"garbage that is no field\n" + synthRecord(stampStart, "COMMIT", "44", "UNKNOWN")
	recs, diag := readAll(t, "cat.aud", in)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	if recs[0].Process.PID != 4242 || recs[0].Process.Name != "ora" || recs[1].Process.PID != 5151 || recs[1].Process.Name != "j001" ||
		recs[2].Process.PID != 5151 || recs[2].Action != "COMMIT" {
		t.Errorf("processes %+v / %+v / %+v", recs[0].Process, recs[1].Process, recs[2].Process)
	}
	wantProblems(t, problems(diag), `cat.aud:59: not a NAME:[n] 'value' field: "garbage that is no field"`)
}

// TestUnknownFieldsAndBytes: unknown fields are kept by name; bytes that
// are not UTF-8 are replaced (their byte length still reads the value)
// and said once.
func TestUnknownFieldsAndBytes(t *testing.T) {
	rec := synthRecord(stampStop, "select '\xe9t\xe9' from dual", "3", "pts/1")
	rec = strings.Replace(rec, "ACTION NUMBER:", "OBJ$NEW:[4] 'ABCD'\nACTION NUMBER:", 1)
	recs, diag := readAll(t, "odd.aud", synthHeader+rec)
	if len(recs) != 1 || recs[0].Action != "select '\uFFFDt\uFFFD' from dual" || recs[0].Extra["OBJ$NEW"] != "ABCD" || recs[0].ActionNumber != 3 {
		t.Errorf("records %+v", recs)
	}
	if w := diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "not UTF-8") {
		t.Errorf("warnings %q", w)
	}
}

// TestHugeLine: a line over the bound is reported with its number and its
// record skipped; the records around it are read.
func TestHugeLine(t *testing.T) {
	huge := synthRecord(stampStart, strings.Repeat("x", maxLineBytes+10), "3", "pts/1")
	in := synthHeader + synthRecord(stampStop, "SHUTDOWN", "138", "pts/1") + huge + synthRecord(stampStart, "STARTUP", "138", "pts/1")
	recs, diag := readAll(t, "huge.aud", in)
	if len(recs) != 2 || recs[0].Kind != KindShutdown || recs[1].Kind != KindStartup {
		t.Errorf("records %+v", recs)
	}
	wantProblems(t, problems(diag), "huge.aud:32: line longer than 1048576 bytes: record of line 30 skipped")
}

// TestHugeRecord: a record over the bound (many lines) is skipped whole.
func TestHugeRecord(t *testing.T) {
	big := synthRecord(stampStart, strings.Repeat("line of a very long statement\n", maxRecordBytes/30+10), "3", "pts/1")
	in := synthHeader + big + synthRecord(stampStart, "STARTUP", "138", "pts/1")
	recs, diag := readAll(t, "big.aud", in)
	if len(recs) != 1 || recs[0].Kind != KindStartup {
		t.Errorf("%d records", len(recs))
	}
	wantProblems(t, problems(diag), "big.aud:16: record longer than 4194304 bytes: skipped")
}

const xmlHead = `<?xml version="1.0" encoding="UTF-8"?>
<Audit xmlns="http://xmlns.oracle.com/oracleas/schema/dbserver_audittrail-11_2.xsd">
<Version>11.2</Version>
`

func xmlRecord(action, sql string) string {
	return "<AuditRecord><Audit_Type>4</Audit_Type><Session_Id>0</Session_Id><Extended_Timestamp>2026-11-26T13:10:09.412000Z</Extended_Timestamp>" +
		"<DB_User>/</DB_User><OS_User>oracle</OS_User><Userhost>db1</Userhost><OS_Process>4242</OS_Process><Terminal>pts/1</Terminal>" +
		"<Action>" + action + "</Action><Returncode>0</Returncode><OSPrivilege>SYSDBA</OSPrivilege><DBID>1</DBID>\n<Sql_Text>" + sql + "</Sql_Text>\n</AuditRecord>\n"
}

// TestXMLUnterminated: a file still being written has no </Audit>: its
// records are read and the truncation warned once; a record cut in the
// middle is reported with its line.
func TestXMLUnterminated(t *testing.T) {
	whole := xmlHead + xmlRecord("138", "SHUTDOWN") + xmlRecord("138", "STARTUP")
	recs, diag := readAll(t, "DB1_ora_4242_1.xml", whole)
	if len(recs) != 2 || recs[0].Kind != KindShutdown || recs[1].Kind != KindStartup || recs[1].Line != 7 || recs[0].Process.Name != "ora" {
		t.Errorf("records %+v", recs)
	}
	if w := diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "no closing </Audit>") || len(problems(diag)) > 0 {
		t.Errorf("warnings %q problems %q", w, problems(diag))
	}
	recs, diag = readAll(t, "cut.xml", whole[:len(whole)-30])
	if len(recs) != 1 {
		t.Errorf("%d records", len(recs))
	}
	wantProblems(t, problems(diag), "cut.xml:7: truncated <AuditRecord>")
}

// TestXMLHostile: bytes that are not UTF-8 are replaced and the records
// kept; after a syntax error or an element text over the bound, reported
// with their line, reading goes on at the next record.
func TestXMLHostile(t *testing.T) {
	recs, diag := readAll(t, "latin1.xml", xmlHead+xmlRecord("3", "select '\xe9t\xe9'")+xmlRecord("138", "STARTUP")+"</Audit>\n")
	if len(recs) != 2 || recs[0].SQLText != "select '?t?'" || len(problems(diag)) > 0 {
		t.Errorf("records %+v problems %q", recs, problems(diag))
	}
	if w := diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "2 byte(s) that are not UTF-8") {
		t.Errorf("warnings %q", w)
	}
	recs, diag = readAll(t, "bad.xml", xmlHead+xmlRecord("138", "STARTUP")+"<AuditRecord><DB_User>/</Oops>\n"+xmlRecord("3", "x")+"</Audit>\n")
	if len(recs) != 2 || recs[1].Line != 8 || recs[1].SQLText != "x" {
		t.Errorf("records %+v", recs)
	}
	wantProblems(t, problems(diag), "bad.xml:7: bad XML (element <DB_User> closed by </Oops>), the <AuditRecord> of line 7 skipped: reading goes on at the next <AuditRecord>")
	if w := diag.Warnings(); len(w) > 0 {
		t.Errorf("warnings %q", w)
	}
	recs, diag = readAll(t, "huge.xml", xmlHead+xmlRecord("138", "STARTUP")+xmlRecord("3", strings.Repeat("y", maxLineBytes+1))+xmlRecord("3", "z"))
	if len(recs) != 2 || recs[1].SQLText != "z" || recs[1].Line != 10 {
		t.Errorf("records %+v", recs)
	}
	wantProblems(t, problems(diag), "huge.xml:8: bad XML (an element or its text longer than the reader's bound), the <AuditRecord> of line 7 skipped")
}

// TestUnifiedHostile: a row of the wrong width, an unclosed quote at the
// end, a huge line: each reported with its line, the other rows read.
func TestUnifiedHostile(t *testing.T) {
	in := "EVENT_TIMESTAMP_UTC,ACTION_NAME,DBUSERNAME\n" +
		"2026-11-26 13:10:09.412,SHUTDOWN,SYS\n" +
		"2026-11-26 13:10:10,LOGON\n" +
		strings.Repeat("z", maxLineBytes+1) + "\n" +
		"26-NOV-26 01.11.30.000001 PM,STARTUP,SYS\n" +
		"\n2 rows selected.\n" +
		`2026-11-26 13:12:00,"LOGON` + "\n"
	recs, diag := readAll(t, "u.csv", in)
	if len(recs) != 2 || recs[0].Kind != KindShutdown || recs[1].Kind != KindStartup || recs[1].Line != 5 {
		t.Errorf("records %+v", recs)
	}
	wantProblems(t, problems(diag),
		"u.csv:3: row of 2 fields, the header has 3",
		"u.csv:4: row longer than",
		"u.csv:8: truncated row")
}

// TestCallbackErrorStops: an error of the caller's function ends the read
// and comes back unchanged, in every reader.
func TestCallbackErrorStops(t *testing.T) {
	stop := errors.New("enough")
	for name, in := range map[string]string{
		"a.aud": synthHeader + synthRecord(stampStop, "SHUTDOWN", "138", "pts/1") + synthRecord(stampStart, "STARTUP", "138", "pts/1"),
		"a.xml": xmlHead + xmlRecord("138", "SHUTDOWN") + xmlRecord("138", "STARTUP"),
		"a.csv": "EVENT_TIMESTAMP_UTC,ACTION_NAME\n2026-11-26 13:10:09,SHUTDOWN\n2026-11-26 13:10:19,STARTUP\n",
	} {
		calls := 0
		err := Read(context.Background(), name, strings.NewReader(in), nil, func(Record) error { calls++; return stop })
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("%s: err %v after %d calls", name, err, calls)
		}
	}
	if err := Read(context.Background(), "x.txt", strings.NewReader("hello\nworld\n"), nil, nil); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown input: %v", err)
	}
}

// TestXMLSplitUTF8: a UTF-8 character split across reads is kept whole.
func TestXMLSplitUTF8(t *testing.T) {
	in := xmlHead + xmlRecord("3", "select 'été ✓' from dual") + "</Audit>\n"
	var recs []Record
	diag := input.NewDiagnostics(nil, 10)
	err := ReadXML(context.Background(), "split.xml", iotest.OneByteReader(strings.NewReader(in)), diag, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil || len(recs) != 1 || recs[0].SQLText != "select 'été ✓' from dual" || len(diag.Warnings()) > 0 {
		t.Errorf("err %v records %+v warnings %q", err, recs, diag.Warnings())
	}
}
