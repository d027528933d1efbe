package oracleaud

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchInput repeats records to about size bytes.
func benchInput(size int, head string, record func(i int) string, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len() < size; i++ {
		b.WriteString(record(i))
	}
	b.WriteString(tail)
	return b.String()
}

func benchRead(b *testing.B, read Reader, name, data string, want int) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := read(context.Background(), name, strings.NewReader(data), nil, func(Record) error { n++; return nil })
		if err != nil || n != want && want > 0 {
			b.Fatalf("%d records, %v", n, err)
		}
	}
}

// BenchmarkReadText: 8 MB of 19c records, one in four with a three-line
// statement.
func BenchmarkReadText(b *testing.B) {
	n := 0
	data := benchInput(8<<20, synthHeader, func(i int) string {
		n++
		if i%4 == 3 {
			return synthRecord(stampStart, fmt.Sprintf("select owner, object_name\n  from dba_objects\n where object_id = %d", i), "3", "UNKNOWN")
		}
		return synthRecord(stampStop, "CONNECT", "100", "pts/1")
	}, "")
	benchRead(b, ReadText, "DB1_ora_4242_1.aud", data, n)
}

// BenchmarkReadXML: 8 MB of XML audit records.
func BenchmarkReadXML(b *testing.B) {
	n := 0
	data := benchInput(8<<20, xmlHead, func(i int) string {
		n++
		return xmlRecord("3", fmt.Sprintf("select * from dual where %d = :x", i))
	}, "</Audit>\n")
	benchRead(b, ReadXML, "DB1_ora_4242_1.xml", data, n)
}

// BenchmarkReadUnifiedCSV: 8 MB of SQL*Plus CSV rows.
func BenchmarkReadUnifiedCSV(b *testing.B) {
	n := 0
	head := `"EVENT_TIMESTAMP_UTC","OS_USERNAME","USERHOST","TERMINAL","DBUSERNAME","AUTHENTICATION_TYPE","ACTION_NAME","RETURN_CODE","OS_PROCESS","SQL_TEXT"` + "\n"
	data := benchInput(8<<20, head, func(i int) string {
		n++
		return fmt.Sprintf(`"26-NOV-26 02.10.09.412000 PM","oracle","db1","pts/1","SYS","(TYPE=(OS));(CLIENT ADDRESS=((PROTOCOL=beq)(HOST=[local])));","SELECT",0,"%d","select * from dual where %d = :x"`+"\n", i, i)
	}, "")
	benchRead(b, ReadUnifiedCSV, "u.csv", data, n)
}

// BenchmarkReadSyslog: 8 MB of syslog lines, one in four Oracle's.
func BenchmarkReadSyslog(b *testing.B) {
	n := 0
	data := benchInput(8<<20, "", func(i int) string {
		if i%4 != 0 {
			return "Nov 26 14:10:02 db1 sudo[4180]:    alice : TTY=pts/1 ; PWD=/home/alice ; USER=oracle ; COMMAND=/bin/bash -l\n"
		}
		n++
		return syslogRecord("Nov 26 14:10:09 db1", 4242, "CONNECT", "pts/1")
	}, "")
	benchRead(b, ReadSyslog, "messages", data, n)
}
