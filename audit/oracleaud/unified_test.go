package oracleaud

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// rowStart counts the synthetic exports' rows independently: each starts
// with the quoted AUDIT_TYPE.
var rowStart = regexp.MustCompile(`(?m)^"Standard",`)

// TestUnifiedSQLPlus: the SQL*Plus export's rows, in order, classified;
// times from EVENT_TIMESTAMP_UTC; the client address from
// AUTHENTICATION_TYPE; a SQL_TEXT spanning lines with quotes and commas.
func TestUnifiedSQLPlus(t *testing.T) {
	data, recs, diag := readFile(t, "audit/oracle-unified-synthetic/unified_audit_trail_sqlplus.csv")
	if Kind([]byte(data), "x") != FormatUnifiedCSV {
		t.Fatal("not detected")
	}
	if n := len(rowStart.FindAllStringIndex(data, -1)); len(recs) != n || n != 7 {
		t.Fatalf("%d records, %d rows", len(recs), n)
	}
	if p, w := problems(diag), diag.Warnings(); len(p)+len(w) > 0 {
		t.Errorf("problems %q warnings %q", p, w)
	}
	kinds := []ActionKind{KindConnect, KindShutdown, KindStartup, KindAlterMount, KindAlterOpen, KindConnect, KindOther}
	for i, r := range recs {
		if r.Kind != kinds[i] {
			t.Errorf("record %d (%s): kind %s, want %s", i, r.Action, r.Kind, kinds[i])
		}
	}
	stop := recs[1]
	if stop.Line != 3 || stop.Time != time.Date(2026, 11, 26, 14, 10, 9, 412000000, time.UTC) || stop.DBUser != "SYS" ||
		stop.Privilege != "SYSDBA" || stop.ClientUser != "oracle" || stop.ClientTerminal != "pts/1" ||
		stop.Process.PID != 41020 || stop.SessionID != "2349012785" || stop.ClientAddress != "[local]" || stop.SQLText != "shutdown immediate" {
		t.Errorf("SHUTDOWN %+v", stop)
	}
	failed := recs[5]
	if failed.Status != "1017" || failed.ClientAddress != "192.0.2.17" || failed.Extra["CLIENT_PROGRAM_NAME"] != "JDBC Thin Client" {
		t.Errorf("failed logon %+v", failed)
	}
	update := recs[6]
	if update.SQLText != "UPDATE emp\n   SET sal = sal * 1.1, comm = NULL\n WHERE ename = 'SMITH' AND job = \"CLERK\"" || update.Line != 8 {
		t.Errorf("update %+v", update)
	}
}

// TestUnifiedSQLDeveloper: without EVENT_TIMESTAMP_UTC the session-zone
// EVENT_TIMESTAMP is read as UTC, and said so once.
func TestUnifiedSQLDeveloper(t *testing.T) {
	data, recs, diag := readFile(t, "audit/oracle-unified-synthetic/unified_audit_trail_sqldeveloper.csv")
	if n := len(rowStart.FindAllStringIndex(data, -1)); len(recs) != n || n != 7 {
		t.Fatalf("%d records, %d rows", len(recs), n)
	}
	if w := diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "EVENT_TIMESTAMP_UTC") {
		t.Errorf("warnings %q", w)
	}
	if got := recs[2].Time; got != time.Date(2026, 11, 26, 15, 11, 30, 1000, time.UTC) || recs[2].Kind != KindStartup {
		t.Errorf("STARTUP at %v", got)
	}
}

func TestSplitCSV(t *testing.T) {
	for _, c := range []struct {
		row  string
		want []string
		ok   bool
	}{
		{`a,"b,c",,"d""e"`, []string{"a", "b,c", "", `d"e`}, true},
		{`"x"y,z`, []string{"xy", "z"}, true},
		{`"open`, nil, false},
		{``, []string{""}, true},
	} {
		got, ok := splitCSV(c.row, nil)
		if ok != c.ok || ok && strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("splitCSV(%q) = %q %v", c.row, got, ok)
		}
	}
}
