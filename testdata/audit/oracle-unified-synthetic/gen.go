//go:build ignore

// gen writes the SYNTHETIC UNIFIED_AUDIT_TRAIL exports of this folder (no
// real export is public): `go run gen.go` here. The column names and their
// order are UNIFIED_AUDIT_TRAIL's (Oracle Database Reference, 19c); the
// values are made up, in the shapes Oracle writes them.
package main

import (
	"fmt"
	"os"
	"strings"
)

var columns = []string{"AUDIT_TYPE", "SESSIONID", "PROXY_SESSIONID", "OS_USERNAME", "USERHOST", "TERMINAL",
	"INSTANCE_ID", "DBID", "AUTHENTICATION_TYPE", "DBUSERNAME", "CLIENT_PROGRAM_NAME", "ENTRY_ID",
	"STATEMENT_ID", "EVENT_TIMESTAMP", "EVENT_TIMESTAMP_UTC", "ACTION_NAME", "RETURN_CODE", "OS_PROCESS",
	"SCN", "OBJECT_SCHEMA", "OBJECT_NAME", "SQL_TEXT", "SYSTEM_PRIVILEGE_USED", "CURRENT_USER",
	"UNIFIED_AUDIT_POLICIES"}

// numeric columns are written without quotes, as SQL*Plus and SQL Developer do.
var numeric = map[string]bool{"SESSIONID": true, "PROXY_SESSIONID": true, "INSTANCE_ID": true, "DBID": true,
	"ENTRY_ID": true, "STATEMENT_ID": true, "RETURN_CODE": true, "SCN": true}

const beq = "(TYPE=(OS));(CLIENT ADDRESS=((PROTOCOL=beq)(HOST=[local])));"

// rows: a DBA logged in over ssh, `sudo -iu oracle`, `sqlplus / as sysdba`:
// shutdown immediate, startup (mount, open); an application user's
// logon over TCP, a failed one, and a statement spanning lines.
var rows = []map[string]string{
	{"AUDIT_TYPE": "Standard", "SESSIONID": "2349012785", "OS_USERNAME": "oracle", "USERHOST": "db1.example.com", "TERMINAL": "pts/1", "INSTANCE_ID": "1", "DBID": "2824230686", "AUTHENTICATION_TYPE": beq, "DBUSERNAME": "SYS", "CLIENT_PROGRAM_NAME": "sqlplus@db1.example.com (TNS V1-V3)", "ENTRY_ID": "1", "STATEMENT_ID": "1", "EVENT_TIMESTAMP": "26-NOV-26 03.10.01.100000 PM", "EVENT_TIMESTAMP_UTC": "26-NOV-26 02.10.01.100000 PM", "ACTION_NAME": "LOGON", "RETURN_CODE": "0", "OS_PROCESS": "41020", "SYSTEM_PRIVILEGE_USED": "SYSDBA", "CURRENT_USER": "SYS", "UNIFIED_AUDIT_POLICIES": "ORA_LOGON_FAILURES"},
	{"AUDIT_TYPE": "Standard", "SESSIONID": "2349012785", "OS_USERNAME": "oracle", "USERHOST": "db1.example.com", "TERMINAL": "pts/1", "INSTANCE_ID": "1", "DBID": "2824230686", "AUTHENTICATION_TYPE": beq, "DBUSERNAME": "SYS", "CLIENT_PROGRAM_NAME": "sqlplus@db1.example.com (TNS V1-V3)", "ENTRY_ID": "2", "STATEMENT_ID": "7", "EVENT_TIMESTAMP": "26-NOV-26 03.10.09.412000 PM", "EVENT_TIMESTAMP_UTC": "26-NOV-26 02.10.09.412000 PM", "ACTION_NAME": "SHUTDOWN", "RETURN_CODE": "0", "OS_PROCESS": "41020", "SQL_TEXT": "shutdown immediate", "SYSTEM_PRIVILEGE_USED": "SYSDBA", "CURRENT_USER": "SYS"},
	{"AUDIT_TYPE": "Standard", "SESSIONID": "0", "OS_USERNAME": "oracle", "USERHOST": "db1.example.com", "TERMINAL": "pts/1", "INSTANCE_ID": "1", "DBID": "0", "AUTHENTICATION_TYPE": beq, "DBUSERNAME": "SYS", "CLIENT_PROGRAM_NAME": "sqlplus@db1.example.com (TNS V1-V3)", "ENTRY_ID": "1", "STATEMENT_ID": "1", "EVENT_TIMESTAMP": "26-NOV-26 03.11.30.000001 PM", "EVENT_TIMESTAMP_UTC": "26-NOV-26 02.11.30.000001 PM", "ACTION_NAME": "STARTUP", "RETURN_CODE": "0", "OS_PROCESS": "41311", "SQL_TEXT": "startup", "SYSTEM_PRIVILEGE_USED": "SYSDBA", "CURRENT_USER": "SYS"},
	{"AUDIT_TYPE": "Standard", "SESSIONID": "4294967295", "OS_USERNAME": "oracle", "USERHOST": "db1.example.com", "TERMINAL": "pts/1", "INSTANCE_ID": "1", "DBID": "2824230686", "AUTHENTICATION_TYPE": beq, "DBUSERNAME": "SYS", "CLIENT_PROGRAM_NAME": "sqlplus@db1.example.com (TNS V1-V3)", "ENTRY_ID": "3", "STATEMENT_ID": "3", "EVENT_TIMESTAMP": "26-NOV-26 03.11.38.250000 PM", "EVENT_TIMESTAMP_UTC": "26-NOV-26 02.11.38.250000 PM", "ACTION_NAME": "ALTER DATABASE", "RETURN_CODE": "0", "OS_PROCESS": "41311", "SQL_TEXT": "ALTER DATABASE   MOUNT", "SYSTEM_PRIVILEGE_USED": "SYSDBA", "CURRENT_USER": "SYS"},
	{"AUDIT_TYPE": "Standard", "SESSIONID": "4294967295", "OS_USERNAME": "oracle", "USERHOST": "db1.example.com", "TERMINAL": "pts/1", "INSTANCE_ID": "1", "DBID": "2824230686", "AUTHENTICATION_TYPE": beq, "DBUSERNAME": "SYS", "CLIENT_PROGRAM_NAME": "sqlplus@db1.example.com (TNS V1-V3)", "ENTRY_ID": "4", "STATEMENT_ID": "4", "EVENT_TIMESTAMP": "26-NOV-26 03.11.52.007000 PM", "EVENT_TIMESTAMP_UTC": "26-NOV-26 02.11.52.007000 PM", "ACTION_NAME": "ALTER DATABASE", "RETURN_CODE": "0", "OS_PROCESS": "41311", "SQL_TEXT": "ALTER DATABASE OPEN", "SYSTEM_PRIVILEGE_USED": "SYSDBA", "CURRENT_USER": "SYS"},
	{"AUDIT_TYPE": "Standard", "SESSIONID": "3011298837", "OS_USERNAME": "appsvc", "USERHOST": "app7.example.com", "TERMINAL": "unknown", "INSTANCE_ID": "1", "DBID": "2824230686", "AUTHENTICATION_TYPE": "(TYPE=(DATABASE));(CLIENT ADDRESS=((ADDRESS=(PROTOCOL=tcp)(HOST=192.0.2.17)(PORT=50412))));", "DBUSERNAME": "SCOTT", "CLIENT_PROGRAM_NAME": "JDBC Thin Client", "ENTRY_ID": "1", "STATEMENT_ID": "1", "EVENT_TIMESTAMP": "26-NOV-26 03.14.00.000000 PM", "EVENT_TIMESTAMP_UTC": "26-NOV-26 02.14.00.000000 PM", "ACTION_NAME": "LOGON", "RETURN_CODE": "1017", "OS_PROCESS": "41377", "CURRENT_USER": "SCOTT", "UNIFIED_AUDIT_POLICIES": "ORA_LOGON_FAILURES"},
	{"AUDIT_TYPE": "Standard", "SESSIONID": "3011298838", "OS_USERNAME": "appsvc", "USERHOST": "app7.example.com", "TERMINAL": "unknown", "INSTANCE_ID": "1", "DBID": "2824230686", "AUTHENTICATION_TYPE": "(TYPE=(DATABASE));(CLIENT ADDRESS=((ADDRESS=(PROTOCOL=tcp)(HOST=192.0.2.17)(PORT=50418))));", "DBUSERNAME": "SCOTT", "CLIENT_PROGRAM_NAME": "JDBC Thin Client", "ENTRY_ID": "2", "STATEMENT_ID": "9", "EVENT_TIMESTAMP": "26-NOV-26 03.14.05.500000 PM", "EVENT_TIMESTAMP_UTC": "26-NOV-26 02.14.05.500000 PM", "ACTION_NAME": "UPDATE", "RETURN_CODE": "0", "OS_PROCESS": "41380", "OBJECT_SCHEMA": "SCOTT", "OBJECT_NAME": "EMP", "SQL_TEXT": "UPDATE emp\n   SET sal = sal * 1.1, comm = NULL\n WHERE ename = 'SMITH' AND job = \"CLERK\"", "CURRENT_USER": "SCOTT", "UNIFIED_AUDIT_POLICIES": "EMP_UPDATES"},
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// write writes the rows under the given columns the way an exporter does.
func write(path string, cols []string, quoteHeader bool, value func(col, v string) string, trailer string) {
	var b strings.Builder
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c
		if quoteHeader {
			head[i] = quote(c)
		}
	}
	b.WriteString(strings.Join(head, ",") + "\n")
	for _, r := range rows {
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = value(c, r[c])
		}
		b.WriteString(strings.Join(vals, ",") + "\n")
	}
	b.WriteString(trailer)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	// SQL*Plus 19c `set markup csv on` (quote on): every column quoted in
	// the header, strings quoted, numbers bare, NULL empty, then the feedback.
	sqlplus := func(col, v string) string {
		if v == "" || numeric[col] {
			return v
		}
		return quote(v)
	}
	write("unified_audit_trail_sqlplus.csv", columns, true, sqlplus, "\n7 rows selected.\n\n")
	// SQL Developer's CSV export of a query without EVENT_TIMESTAMP_UTC:
	// EVENT_TIMESTAMP is in the session's time zone, with no offset.
	var dev []string
	for _, c := range columns {
		if c != "EVENT_TIMESTAMP_UTC" {
			dev = append(dev, c)
		}
	}
	sqldev := func(col, v string) string {
		if col == "EVENT_TIMESTAMP" && v != "" {
			v = strings.Replace(v, " PM", "000 PM", 1)
		}
		return sqlplus(col, v)
	}
	write("unified_audit_trail_sqldeveloper.csv", dev, true, sqldev, "")
}
