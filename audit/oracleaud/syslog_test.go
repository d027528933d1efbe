package oracleaud

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
)

// syslogRecord writes a SYNTHETIC record as Oracle sends it to syslog:
// the text layout's fields on one line after the tag.
func syslogRecord(head string, pid int, action, terminal string) string {
	var fields strings.Builder
	for _, f := range [][2]string{{"ACTION :", action}, {"DATABASE USER:", "/"}, {"PRIVILEGE :", "SYSDBA"},
		{"CLIENT USER:", "oracle"}, {"CLIENT TERMINAL:", terminal}, {"STATUS:", "0"}, {"DBID:", "2824230686"}} {
		fmt.Fprintf(&fields, "%s[%d] '%s' ", f[0], len(f[1]), f[1])
	}
	return fmt.Sprintf("%s Oracle Audit[%d]: LENGTH : '%d' %s\n", head, pid, fields.Len(), fields.String())
}

// TestSyslog: Oracle's records among other programs' lines, with a
// traditional and an RFC 3339 syslog head; the pid from the tag.
func TestSyslog(t *testing.T) {
	in := "Nov 26 14:09:58 db1 sshd[4100]: Accepted publickey for alice from 192.0.2.44 port 50122 ssh2\n" +
		"Nov 26 14:10:02 db1 sudo[4180]:    alice : TTY=pts/1 ; PWD=/home/alice ; USER=oracle ; COMMAND=/bin/bash -l\n" +
		syslogRecord("Nov 26 14:10:05 db1", 4242, "CONNECT", "pts/1") +
		syslogRecord("Nov 26 14:10:09 db1 journal:", 4242, "SHUTDOWN", "pts/1") +
		syslogRecord("2026-11-26T14:11:30.250000+01:00 db1", 4311, "STARTUP", "pts/1") +
		"Nov 26 14:11:31 db1 Oracle Audit[4311]: LENGTH : '30' ACTION :[7] 'CONNECT' oops\n"
	if Kind([]byte(in), "messages") != FormatSyslog {
		t.Fatalf("Kind = %q", Kind([]byte(in), "messages"))
	}
	recs, diag := readAll(t, "messages", in)
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	want := []struct {
		kind ActionKind
		pid  int
		line int
	}{{KindConnect, 4242, 3}, {KindShutdown, 4242, 4}, {KindStartup, 4311, 5}, {KindOther, 4311, 6}}
	for i, w := range want {
		if r := recs[i]; r.Kind != w.kind || r.Process.PID != w.pid || r.Line != w.line || r.Process.Host != "db1" || r.Format != FormatSyslog {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	stop := recs[1]
	if stop.ClientTerminal != "pts/1" || stop.ClientUser != "oracle" || stop.Privilege != "SYSDBA" || stop.DBID != "2824230686" ||
		stop.Time != time.Date((&input.SyslogYear{Reference: time.Now()}).Year(time.November), 11, 26, 14, 10, 9, 0, time.UTC) || stop.Length != 160 {
		t.Errorf("SHUTDOWN %+v", stop)
	}
	if got := recs[2].Time; got != time.Date(2026, 11, 26, 13, 11, 30, 250000000, time.UTC) || recs[2].ZoneOffset != 3600 {
		t.Errorf("STARTUP at %v", got)
	}
	wantProblems(t, problems(diag), `messages:6: value of ACTION has no closing quote: read to the end of its line`)
	if w := diag.Warnings(); len(w) != 2 || !strings.Contains(w[0], "without a year") || !strings.Contains(w[1], "do not match") {
		t.Errorf("warnings %q", w)
	}
}

// TestUnifiedSyslog: SYNTHETIC lines of unified auditing's syslog form
// (UNIFIED_AUDIT_SYSTEMLOG), pairs without lengths; a logon classified by
// its action number, a value holding a quote, a broken pair reported.
func TestUnifiedSyslog(t *testing.T) {
	in := `Nov 26 14:10:01 db1 Oracle Unified Audit[41020]: LENGTH: '215' TYPE:"4" DBID:"2824230686" SESID:"2349012785" CLIENTID:"" ENTRYID:"1" STMTID:"1" DBUSER:"SYS" CURUSER:"SYS" ACTION:"100" RETCODE:"0" SCHEMA:"" OBJNAME:"" PDB_GUID:"6ACC4A4D0D9A0CD9E0536014000A0A9A"` + "\n" +
		`2026-11-26T14:14:05.5+01:00 db1 Oracle Unified Audit[41380]: LENGTH: '120' TYPE:"1" DBID:"2824230686" SESS:"3011298838" USER:"SCOTT" ACTION:"6" RETCODE:"0" OBJNAME:"EMP "X"" SCHEMA:"SCOTT"` + "\n" +
		`Nov 26 14:15:00 db1 Oracle Unified Audit[41381]: LENGTH: '40' TYPE:"4" DBID:"1` + "\n" +
		`Nov 26 14:15:01 db1 Oracle Unified Audit[41382]: LENGTH: '40' TYPE:"4" garbage` + "\n"
	if Kind([]byte(in), "messages") != FormatSyslog {
		t.Fatal("not detected")
	}
	recs, diag := readAll(t, "messages", in)
	if len(recs) != 4 || recs[2].DBID != "1" || recs[3].Extra["TYPE"] != "4" {
		t.Fatalf("records %+v", recs)
	}
	logon := recs[0]
	if logon.Kind != KindConnect || logon.Process.PID != 41020 || logon.SessionID != "2349012785" || logon.DBUser != "SYS" ||
		logon.Status != "0" || logon.DBID != "2824230686" || logon.Length != 215 || logon.Extra["PDB_GUID"] != "6ACC4A4D0D9A0CD9E0536014000A0A9A" ||
		logon.Extra["CLIENTID"] != "" || len(logon.Extra) != 8 {
		t.Errorf("logon %+v", logon)
	}
	if u := recs[1]; u.SessionID != "3011298838" || u.DBUser != "SCOTT" || u.ActionNumber != 6 || u.Extra["OBJNAME"] != `EMP "X"` || u.Extra["SCHEMA"] != "SCOTT" || u.Kind != KindOther {
		t.Errorf("update %+v", u)
	}
	wantProblems(t, problems(diag), "messages:3: value of DBID has no closing quote", `messages:4: not a NAME:"value" pair: "garbage"`)
}
