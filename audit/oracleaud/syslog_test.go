package oracleaud

import (
	"fmt"
	"strings"
	"testing"
	"time"
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
		stop.Time != time.Date(0, 11, 26, 14, 10, 9, 0, time.UTC) || stop.Length != 160 {
		t.Errorf("SHUTDOWN %+v", stop)
	}
	if got := recs[2].Time; got.UTC() != time.Date(2026, 11, 26, 13, 11, 30, 250000000, time.UTC) {
		t.Errorf("STARTUP at %v", got)
	}
	wantProblems(t, problems(diag), `messages:6: value of ACTION has no closing quote: read to the end of its line`)
	if w := diag.Warnings(); len(w) != 2 || !strings.Contains(w[0], "without a year") || !strings.Contains(w[1], "do not match") {
		t.Errorf("warnings %q", w)
	}
}
