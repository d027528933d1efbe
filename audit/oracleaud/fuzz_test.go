package oracleaud

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// seedRealFiles adds the real files matching pattern as seeds.
func seedRealFiles(f *testing.F, pattern string) {
	for _, rel := range testenv.DataFiles(f, pattern) {
		data, err := os.ReadFile(testenv.DataFile(f, rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
}

// fuzzRead checks what every reader promises on any input: no panic, no
// error but the caller's, records on lines of the input, valid UTF-8 in
// every text, a known kind.
func fuzzRead(t *testing.T, read Reader, name, data string) {
	lines := strings.Count(data, "\n") + 1
	err := read(context.Background(), name, strings.NewReader(data), input.NewDiagnostics(nil, 1), func(r Record) error {
		if r.Line < 1 || r.Line > lines {
			t.Errorf("record on line %d of %d", r.Line, lines)
		}
		if Classify(r.Action, r.ActionNumber) != r.Kind && r.Format != FormatUnifiedCSV {
			t.Errorf("kind %s of %q %d", r.Kind, r.Action, r.ActionNumber)
		}
		checkUTF8(t, reflect.ValueOf(r))
		return nil
	})
	if err != nil {
		t.Errorf("error %v", err)
	}
}

// checkUTF8 walks a record's strings (maps included).
func checkUTF8(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			t.Errorf("not UTF-8: %q", v.String())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				checkUTF8(t, v.Field(i))
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			checkUTF8(t, k)
			checkUTF8(t, v.MapIndex(k))
		}
	}
}

func FuzzReadAud(f *testing.F) {
	seedRealFiles(f, "audit/oracle-aud/elastic-*/*")
	seedRealFiles(f, "audit/oracle-aud/ddkk-*/*")
	f.Add(synthHeader + synthRecord(stampStop, "SHUTDOWN", "138", "pts/1"))
	f.Add(stampStop + "\nLENGTH: \"40\"\nSESSIONID:[3] \"1\" ACTION:[3] \"100\" X:[1] \"\"\n")
	f.Fuzz(func(t *testing.T, data string) { fuzzRead(t, ReadText, "DB1_ora_4242_1.aud", data) })
}

func FuzzReadXML(f *testing.F) {
	seedRealFiles(f, "audit/oracle-aud/xml/*")
	f.Add(xmlHead + xmlRecord("138", "STARTUP"))
	f.Add(xmlHead + xmlRecord("3", "select '\xe9'") + "</Audit>")
	f.Fuzz(func(t *testing.T, data string) { fuzzRead(t, ReadXML, "DB1_ora_4242_1.xml", data) })
}

func FuzzReadUnifiedCSV(f *testing.F) {
	seedRealFiles(f, "audit/oracle-unified-synthetic/*.csv")
	f.Add("EVENT_TIMESTAMP_UTC,ACTION_NAME,SQL_TEXT\n2026-11-26 13:10:09,ALTER DATABASE,\"alter database\nopen\"\n")
	f.Fuzz(func(t *testing.T, data string) { fuzzRead(t, ReadUnifiedCSV, "u.csv", data) })
}

func FuzzReadSyslog(f *testing.F) {
	f.Add(syslogRecord("Nov 26 14:10:09 db1", 4242, "SHUTDOWN", "pts/1"))
	f.Add(syslogRecord("2026-11-26T14:11:30.250000+01:00 db1", 4311, "STARTUP", "pts/1") + "Nov 26 14:10:02 db1 sudo[4180]: x\n")
	f.Add(`Nov 26 14:10:01 db1 Oracle Unified Audit[41020]: LENGTH: '215' TYPE:"4" DBID:"2824230686" SESID:"1" DBUSER:"SYS" ACTION:"100" RETCODE:"0" OBJNAME:"EMP "X""` + "\n")
	f.Fuzz(func(t *testing.T, data string) { fuzzRead(t, ReadSyslog, "messages", data) })
}
