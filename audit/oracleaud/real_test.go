package oracleaud

import (
	"os/exec"
	"path"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestEveryRecordRead: on every real Oracle audit file, the reader gives as
// many records as there are record starts, counted independently (grep's
// expression for text files, <AuditRecord> for XML), in the format Kind
// names, with no problem reported except on Elastic's hand-edited file.
func TestEveryRecordRead(t *testing.T) {
	rels := testenv.DataFiles(t, "audit/oracle-aud/*/*")
	if len(rels) == 0 {
		t.Fatal("no real Oracle audit file")
	}
	for _, rel := range rels {
		t.Run(path.Base(rel), func(t *testing.T) {
			data, recs, diag := readFile(t, rel)
			want, format := len(recordStart.FindAllStringIndex(data, -1)), FormatText
			if strings.Contains(rel, "/xml/") {
				want, format = strings.Count(data, "<AuditRecord>"), FormatXML
			}
			if got := Kind([]byte(data), rel); got != format {
				t.Errorf("Kind = %q, want %q", got, format)
			}
			if len(recs) != want || want == 0 {
				t.Errorf("%d records, %d record starts", len(recs), want)
			}
			if n, ok := grepCount(t, testenv.DataFile(t, rel), format); ok && n != want {
				t.Errorf("grep counts %d record starts, the test's expression %d", n, want)
			}
			if p := problems(diag); len(p) > 0 {
				t.Errorf("problems: %q", p)
			}
			handEdited := strings.Contains(rel, "elastic-integrations")
			if w := diag.Warnings(); len(w) > 0 != handEdited {
				t.Errorf("warnings %q", w)
			}
			for _, r := range recs {
				if r.Time.IsZero() || r.Line < 1 || r.Format != format || (r.Action == "" && r.ActionNumber == 0) {
					t.Errorf("incomplete record %+v", r)
				}
			}
		})
	}
}

// TestStartup19c: the STARTUP record of the real 19c file, every field
// against the text of the file.
func TestStartup19c(t *testing.T) {
	_, recs, _ := readFile(t, "audit/oracle-aud/elastic-beats/ORCLCDB_ora_9545_20201007130533362530574637.aud")
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	got := recs[0]
	got.Source = path.Base(got.Source)
	want := Record{
		Source: "ORCLCDB_ora_9545_20201007130533362530574637.aud", Line: 16, Format: FormatText,
		Time: time.Date(2020, 10, 7, 17, 5, 33, 0, time.UTC), ZoneOffset: -4 * 3600,
		Process: Process{
			AuditFile: "/opt/oracle/admin/ORCLCDB/adump/ORCLCDB_ora_9545_20201007130533362530574637.aud",
			Instance:  "ORCLCDB", Host: "testlab.local", PID: 9545, Name: "ora",
			Image: "oracle@testlab.local (TNS V1-V3)", OracleProcess: 299, Version: "19.3.0.0.0",
		},
		Action: "STARTUP", ActionNumber: 138, Kind: KindStartup,
		DBUser: "/", Privilege: "SYSDBA", ClientUser: "oracle", ClientTerminal: "UNKNOWN", Status: "0",
		DBID: "", SessionID: "0", Userhost: "testlab.local", ClientAddress: "", Length: 245,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestStartup11g: the 11.2.0.4 STARTUP record (no blank lines in the
// extract; 11g has no SESSIONID, USERHOST, CLIENT ADDRESS, ACTION NUMBER).
func TestStartup11g(t *testing.T) {
	_, recs, _ := readFile(t, "audit/oracle-aud/ddkk-page_11.2.0.4/orcl1_ora_96876_20210806192217735586143795.aud.txt")
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	got := recs[0]
	got.Source = ""
	want := Record{
		Line: 16, Format: FormatText,
		Time: time.Date(2021, 8, 6, 11, 22, 17, 0, time.UTC), ZoneOffset: 8 * 3600,
		Process: Process{
			AuditFile: "/u01/app/oracle/admin/orcl/adump/orcl1_ora_96876_20210806192217735586143795.aud",
			Instance:  "orcl1", Host: "rac1", PID: 96876, Name: "ora", Image: "oracle@rac1",
			OracleProcess: 0, Version: "11.2.0.4.0",
		},
		Action: "STARTUP", Kind: KindStartup, DBUser: "/", Privilege: "NONE", ClientUser: "oracle",
		ClientTerminal: "Not Available", Status: "0", DBID: "", Length: 156,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestStartupSequence: the three 19c files of one restart give STARTUP,
// then MOUNT and OPEN from the sessions that followed, with their pids.
func TestStartupSequence(t *testing.T) {
	type step struct {
		kind ActionKind
		at   string
		pid  int
		term string
	}
	var got []step
	for _, f := range []string{"ORCLCDB_ora_9545_20201007130533362530574637.aud", "ORCLCDB_ora_9667_20201007130533504494345257.aud.log", "ORCLCDB_ora_9680_20201007130542916949215077.aud.log"} {
		_, recs, _ := readFile(t, "audit/oracle-aud/elastic-beats/"+f)
		for _, r := range recs {
			if r.Kind != KindOther {
				got = append(got, step{r.Kind, r.Time.UTC().Format("15:04:05"), r.Process.PID, r.ClientTerminal})
			}
		}
	}
	want := []step{
		{KindStartup, "17:05:33", 9545, "UNKNOWN"},
		{KindConnect, "17:05:33", 9667, "pts/0"},
		{KindAlterMount, "17:05:42", 9667, "pts/0"},
		{KindConnect, "17:05:42", 9680, "pts/0"},
		{KindAlterOpen, "17:06:08", 9680, "pts/0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestMultiLineValues: values holding newlines and quotes are read by
// their byte length, exactly.
func TestMultiLineValues(t *testing.T) {
	_, recs, _ := readFile(t, "audit/oracle-aud/elastic-beats/ORCLCDB_j002_28264_20201007122838056263426565.aud.log")
	want := "SELECT moving_window_size\n      FROM AWR_PDB_baseline_metadata\n     WHERE baseline_id = :num\n       AND dbid        = :dbid"
	if recs[0].Action != want || recs[0].Process.Name != "j002" || recs[0].SessionID != "20003" || recs[0].DBUser != "SYS" {
		t.Errorf("got %+v", recs[0])
	}
	_, recs, _ = readFile(t, "audit/oracle-aud/elastic-beats/ORCLCDB_m000_25412_20201007115808319837620840.aud")
	want = "select /*+ opt_param('parallel_execution_enabled',\n                                   'false') EXEC_FROM_DBMS_XPLAN */ * from gv$all_sql_plan where 1=0"
	if recs[0].Action != want || len(want) != 151 || recs[0].Process.Name != "m000" {
		t.Errorf("got %q", recs[0].Action)
	}
}

// TestHandEditedElasticFile: Elastic's edited records, whose [n] lengths
// lie, read to their closing quotes; the two OS-audit layout records read
// field by field; the lie is warned about once.
func TestHandEditedElasticFile(t *testing.T) {
	_, recs, diag := readFile(t, "audit/oracle-aud/elastic-integrations/test-oracle-database-audit.log")
	if len(recs) != 27 {
		t.Fatalf("%d records", len(recs))
	}
	if recs[1].ClientAddress != "192.168.2.2" || recs[2].ClientAddress != "test.local" {
		t.Errorf("edited addresses %q %q", recs[1].ClientAddress, recs[2].ClientAddress)
	}
	plsql := recs[24]
	if !strings.HasPrefix(plsql.Action, "DECLARE\n  link_failed boolean;\n\nBEGIN") || !strings.HasSuffix(plsql.Action, "END LOOP;\nEND;") ||
		plsql.ActionNumber != 47 || plsql.Userhost != "testmachine.local" {
		t.Errorf("PL/SQL record %+v", plsql)
	}
	osLayout := recs[25]
	osLayout.Source = ""
	want := Record{
		Line: 429, Format: FormatText, Time: time.Date(2021, 5, 14, 3, 20, 32, 0, time.UTC), ZoneOffset: -4 * 3600, Length: 385, ActionNumber: 103, Kind: KindOther,
		SessionID: "12354", DBUser: "TEST_USER", Userhost: "test.local", ClientTerminal: "unknown", Status: "0",
		ClientUser: "test_id", DBID: "12345",
		Extra: map[string]string{"ENTRYID": "1", "STATEMENT": "9", "OBJ$CREATOR": "TEST_OBJ", "OBJ$NAME": "ATTRIBUTES",
			"SES$ACTIONS": "---------S------", "SES$TID": "157827", "CURRENT_USER": "TEST_USR"},
	}
	if !reflect.DeepEqual(osLayout, want) {
		t.Errorf("got  %+v\nwant %+v", osLayout, want)
	}
	if r := recs[26]; r.Kind != KindConnect || r.Extra["COMMENT$TEXT"] != "TEST_COMMENT" || r.DBID != "1123554" {
		t.Errorf("last record %+v", r)
	}
	if w := diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "do not match") {
		t.Errorf("warnings %q", w)
	}
}

// TestXMLRecords: the real XML audit file, its first record field by field.
func TestXMLRecords(t *testing.T) {
	_, recs, _ := readFile(t, "audit/oracle-aud/xml/averemee-si-oralog_UnmarshallerTest_testCase.xml.txt")
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	got := recs[0]
	got.Source = ""
	want := Record{
		Line: 6, Format: FormatXML, Time: time.Date(2019, 8, 12, 11, 36, 44, 455806000, time.UTC),
		Process: Process{Host: "apps.example.com", PID: 28160, Version: "11.2"},
		Action:  "select count(*), count(*), NULL from dba_hist_baseline_template",
		SQLText: "select count(*), count(*), NULL from dba_hist_baseline_template",
		Kind:    KindOther, DBUser: "/", Userhost: "apps.example.com", ClientTerminal: "UNKNOWN", Status: "0",
		Privilege: "NONE", DBID: "710804450", SessionID: "0",
		Extra: map[string]string{"Audit_Type": "4", "StatementId": "0", "EntryId": "1", "Instance_Number": "0", "Scn": "0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if recs[1].Line != 9 || recs[1].Extra["Scn"] != "12204723579410" {
		t.Errorf("second record %+v", recs[1])
	}
}

// grepCount counts record starts with grep itself, as the brief does:
// `grep -cE` of the timestamp expression, `grep -c '<AuditRecord>'`
// (which counts lines: the real XML file has one record a line). false
// when there is no grep.
func grepCount(t *testing.T, file string, f Format) (int, bool) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		return 0, false
	}
	args := []string{"-cE", `^[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} [0-9]{4}`, file}
	if f == FormatXML {
		args = []string{"-c", "<AuditRecord>", file}
	}
	out, err := exec.Command(grep, args...).Output()
	if err != nil {
		t.Fatalf("grep %q: %v", args, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return n, true
}
