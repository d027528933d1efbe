package oracleaud

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

func TestKind(t *testing.T) {
	for _, c := range []struct {
		first, name string
		want        Format
	}{
		{synthHeader, "x", FormatText},
		{"\n" + stampStop + "\nLENGTH: \"385\"\n", "x", FormatText},
		{xmlHead, "x", FormatXML},
		{"\xef\xbb\xbf  <?xml version=\"1.0\"?>\n<Audit>", "x", FormatXML},
		{"\n\"EVENT_TIMESTAMP\",\"ACTION_NAME\"\n", "x", FormatUnifiedCSV},
		{"EVENT_TIMESTAMP_UTC,DBUSERNAME,ACTION_NAME\n", "x", FormatUnifiedCSV},
		{"EVENT_TIMESTAMP_UTC,DBUSERNAME\n", "x.csv", ""},
		{"hello\nworld\n", "x.aud", ""},
		{"", "DB1_ora_1_2.aud", FormatText},
		{"Audit fi", "DB1_ora_1_2.aud", FormatText},
		{"Audit fi", "DB1_ora_1_2.xml", ""},
		{"", "DB1_ora_1_2.xml", FormatXML},
		{"Nov 26 14:10:09 db1 sshd[1]: x\n", "messages.csv", ""},
		{"<?xml version=\"1.0\"?>\n<Audit", "x.bin", ""},
		{"<html><body>", "x", ""},
	} {
		if got := Kind([]byte(c.first), c.name); got != c.want {
			t.Errorf("Kind(%q, %q) = %q, want %q", c.first, c.name, got, c.want)
		}
	}
	if v := DetectText([]byte(stampStop + "\n")); v != input.NeedMore {
		t.Errorf("DetectText(timestamp alone) = %v", v)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		text   string
		number int
		want   ActionKind
	}{
		{"STARTUP", 138, KindStartup},
		{"SHUTDOWN", 138, KindShutdown},
		{" startup ", 0, KindStartup},
		{"CONNECT", 100, KindConnect},
		{"LOGON", 0, KindConnect},
		{"", 100, KindConnect},
		{"ALTER DATABASE   MOUNT", 35, KindAlterMount},
		{"ALTER DATABASE OPEN", 35, KindAlterOpen},
		{"alter database orcl open read only", 0, KindAlterOpen},
		{"ALTER DATABASE MOUNT;", 0, KindAlterMount},
		{"ALTER DATABASE OPEN", 3, KindOther},
		{"ALTER DATABASE BACKUP CONTROLFILE TO TRACE", 35, KindOther},
		{"ALTER PLUGGABLE DATABASE pdb1 OPEN", 35, KindOther},
		{"select 'STARTUP' from dual", 3, KindOther},
		{"COMMIT", 44, KindOther},
	} {
		if got := Classify(c.text, c.number); got != c.want {
			t.Errorf("Classify(%q, %d) = %s, want %s", c.text, c.number, got, c.want)
		}
	}
}

func TestProcessFromFileName(t *testing.T) {
	for _, c := range []struct {
		name string
		want Process
		ok   bool
	}{
		{"/adump/ORCLCDB_ora_9545_20201007130533362530574637.aud", Process{Instance: "ORCLCDB", Name: "ora", PID: 9545}, true},
		{"ORCLCDB_j002_28264_20201007122838056263426565.aud.log", Process{Instance: "ORCLCDB", Name: "j002", PID: 28264}, true},
		{"orcl1_ora_96876_20210806192217735586143795.aud.txt", Process{Instance: "orcl1", Name: "ora", PID: 96876}, true},
		{`C:\adump\MY_DB_ora_12_34.xml`, Process{Instance: "MY_DB", Name: "ora", PID: 12}, true},
		{"+ASM1_ora_4_5.aud.gz", Process{Instance: "+ASM1", Name: "ora", PID: 4}, true},
		{"test-oracle-database-audit.log", Process{}, false},
		{"a_b_x_1.aud", Process{}, false},
		{"ora_1_2.aud", Process{}, false},
	} {
		got, ok := processFromFileName(c.name)
		if got != c.want || ok != c.ok {
			t.Errorf("processFromFileName(%q) = %+v %v", c.name, got, ok)
		}
	}
}

func TestClassifyNotAlter(t *testing.T) {
	if got := Classify("ALTERX DATABASE OPEN", 35); got != KindOther {
		t.Errorf("ALTERX: %s", got)
	}
}

// TestOtherRealFilesAreNotClaimed: no real file of another format (traces,
// PyLatencyMap records, Linux audit and login logs, recordings, ...) is
// taken for an Oracle audit trail, by content or by name.
func TestOtherRealFilesAreNotClaimed(t *testing.T) {
	n := 0
	testenv.WalkData(t, func(p string) {
		slash := filepath.ToSlash(p)
		if strings.Contains(slash, "/audit/oracle-aud/") || strings.Contains(slash, "/audit/oracle-unified-synthetic/") ||
			strings.Contains(slash, "/audit/correlate-synthetic/") && strings.HasSuffix(slash, ".aud") {
			return
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if f := Kind(data[:min(len(data), input.DetectLimit)], p); f != "" {
			t.Errorf("%s: Kind = %q", p, f)
		}
	})
	if n < 10 {
		t.Errorf("only %d files checked", n)
	}
	t.Logf("%d real files of other formats checked", n)
}

// TestReadGzipAndCancel: Read unwraps gzip; a cancelled context stops it.
func TestReadGzipAndCancel(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(synthHeader + synthRecord(stampStop, "SHUTDOWN", "138", "pts/1")))
	zw.Close()
	recs, _ := readAll(t, "DB1_ora_4242_1.aud.gz", gz.String())
	if len(recs) != 1 || recs[0].Kind != KindShutdown || recs[0].Process.PID != 4242 {
		t.Errorf("records %+v", recs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Read(ctx, "a.aud", strings.NewReader(synthHeader+synthRecord(stampStop, "SHUTDOWN", "138", "pts/1")), nil, func(Record) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
