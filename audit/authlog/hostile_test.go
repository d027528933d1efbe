package authlog

import (
	"encoding/binary"
	"strings"
	"testing"
)

const (
	acceptedLine = "Mar 27 13:08:09 ip-10-77-20-248 sshd[1361]: Accepted publickey for ubuntu from 85.245.107.41 port 54259 ssh2: RSA SHA256:Kl8k"
	sudoLine     = "Mar 27 13:09:37 ip-10-77-20-248 sudo:   ubuntu : TTY=pts/0 ; PWD=/home/ubuntu ; USER=root ; COMMAND=/usr/sbin/service filebeat stop"
)

// problemLines returns the lines diag reported for name, and their reasons.
func problemLines(t *testing.T, recs []Record, text string) ([]int, []string, []Record) {
	t.Helper()
	got, diag := readString(t, "auth.log", text)
	var lines []int
	var reasons []string
	for _, sp := range diag.Problems() {
		for _, p := range sp.First {
			lines = append(lines, p.Line)
			reasons = append(reasons, p.Reason)
		}
	}
	return lines, reasons, got
}

// TestHostileSyslog: truncated lines, a huge line, bytes that are not
// UTF-8 and lines that are not syslog are reported with their line, the
// rest kept.
func TestHostileSyslog(t *testing.T) {
	huge := "Mar 27 13:10:00 h sshd[1]: " + strings.Repeat("x", DefaultMaxLineBytes)
	text := strings.Join([]string{
		acceptedLine,
		"Mar 27 13:0",                     // cut inside the stamp
		"Mar 27 13:08:10 ip-10-77-20-248", // cut after the host
		huge,
		"Mar 27 13:08:11 h sshd[9]: Invalid user j\xe9r\xf4me from 10.0.0.1",
		"garbage that is no syslog line",
		"",
		"Mar 27 13:08:12 h sshd[9]: Accepted password for", // cut inside the message: kept as other
		sudoLine[:len(sudoLine)-20],                        // COMMAND cut: kept, command shorter
		sudoLine,
	}, "\n")
	lines, reasons, recs := problemLines(t, nil, text)
	if want := []int{2, 3, 4, 6}; !equalInts(lines, want) {
		t.Errorf("problems on lines %v (%q), want %v", lines, reasons, want)
	}
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5", len(recs))
	}
	if r := recs[1]; r.Kind != KindSSHInvalidUser || r.User != "j\uFFFDr\uFFFDme" || r.Line != 5 {
		t.Errorf("non-UTF-8 line: %+v", r)
	}
	if r := recs[2]; r.Kind != KindOther || r.Line != 8 {
		t.Errorf("cut sshd line: %+v", r)
	}
	if r := recs[3]; r.Kind != KindSudo || r.Command != "/usr/sbin/s" {
		t.Errorf("cut sudo line: %+v", r)
	}
	if !strings.Contains(reasons[2], "longer than") {
		t.Errorf("huge line: %q", reasons[2])
	}
}

// TestTimestampForms: RSYSLOG_FileFormat, RFC 5424 and the old PAM tag.
func TestTimestampForms(t *testing.T) {
	text := strings.Join([]string{
		"2026-11-26T08:01:02.123456+01:00 db1 sshd[77]: Accepted password for oracle from 192.0.2.5 port 22022 ssh2",
		`<86>1 2026-11-26T07:01:03.5Z db1 sudo 78 - [meta sequenceId="1"] oracle : TTY=pts/1 ; PWD=/home/oracle ; USER=root ; COMMAND=/bin/systemctl stop dbora`,
		"Jun 14 15:16:01 combo su(pam_unix)[21416]: session opened for user cyrus by (uid=0)",
		"Dec 31 23:59:59 combo su[1]: (to oracle) grid on pts/3",
		"Jan  1 00:00:01 combo su[1]: FAILED su for root by grid",
	}, "\n")
	recs, diag := readString(t, "x", text)
	if diag.Count("x") != 0 || len(recs) != 5 {
		t.Fatalf("%d records: %v", len(recs), diag.Problems())
	}
	want := []string{"2026-11-26T07:01:02.123456Z", "2026-11-26T07:01:03.5Z", "2024-06-14T15:16:01Z", "2024-12-31T23:59:59Z", "2025-01-01T00:00:01Z"}
	for i, r := range recs {
		if got := r.Time.Format("2006-01-02T15:04:05.999999Z07:00"); got != want[i] {
			t.Errorf("line %d: time %s, want %s", i+1, got, want[i])
		}
	}
	if r := recs[1]; r.Kind != KindSudo || r.Program != "sudo" || r.PID != 78 || r.Command != "/bin/systemctl stop dbora" || r.Host != "db1" {
		t.Errorf("RFC 5424: %+v", r)
	}
	if r := recs[2]; r.Kind != KindSessionOpened || r.Program != "su" || r.Service != "su" || r.TargetUser != "cyrus" {
		t.Errorf("old PAM form: %+v", r)
	}
	if r := recs[3]; r.Kind != KindSu || r.User != "grid" || r.TargetUser != "oracle" || r.TTY != "pts/3" || r.Result != ResultSuccess {
		t.Errorf("su: %+v", r)
	}
	if r := recs[4]; r.Kind != KindSu || r.Result != ResultFailed || r.User != "grid" {
		t.Errorf("failed su: %+v", r)
	}
}

// TestHostileJournalExport: a binary field cut short, one too long, a
// field without '=' nor length, and a bad timestamp.
func TestHostileJournalExport(t *testing.T) {
	binField := func(key, value string, claimed int) string {
		var size [8]byte
		binary.LittleEndian.PutUint64(size[:], uint64(claimed))
		return key + "\n" + string(size[:]) + value
	}
	entry := "__REALTIME_TIMESTAMP=1700000000000000\n_HOSTNAME=h\nSYSLOG_IDENTIFIER=sshd\n_PID=5\nMESSAGE=Invalid user bob from 10.1.1.1\n\n"
	text := entry +
		"__REALTIME_TIMESTAMP=not-a-number\n" + binField("MESSAGE", "two\nlines", 9) + "\nSYSLOG_IDENTIFIER=x\n\n" +
		"__REALTIME_TIMESTAMP=1700000001000000\n" + binField("MESSAGE", strings.Repeat("y", 10), DefaultMaxLineBytes+1) + "\n"
	recs, diag := readString(t, "j", text)
	var lines []int
	for _, p := range diag.Problems()[0].First {
		lines = append(lines, p.Line)
	}
	if len(recs) != 3 || !equalInts(lines, []int{14}) || !strings.Contains(strings.Join(diag.Warnings(), " "), "entry of line 7: __REALTIME_TIMESTAMP \"not-a-number\"") {
		t.Fatalf("%d records, problems on lines %v: %v", len(recs), lines, diag.Problems()[0].First)
	}
	if recs[1].Message != "two\nlines" || !recs[1].Time.IsZero() || recs[1].Program != "x" || recs[1].Line != 7 {
		t.Errorf("binary field entry: %+v", recs[1])
	}
	if recs[2].Message != "" {
		t.Errorf("too long binary field kept: %+v", recs[2])
	}
}

// TestHostileJSON: a broken object is reported, the rest kept.
func TestHostileJSON(t *testing.T) {
	text := `{"__REALTIME_TIMESTAMP":"1700000000000000","MESSAGE":"Removed session 7.","SYSLOG_IDENTIFIER":"systemd-logind","_HOSTNAME":"h"}
{"__REALTIME_TIMESTAMP":"17000000
{"__REALTIME_TIMESTAMP":"1700000002000000","MESSAGE":[78,101,119,32,115,101,115,115,105,111,110,32,56,32,111,102,32,117,115,101,114,32,111,46],"SYSLOG_IDENTIFIER":["systemd-logind","x"]}
`
	recs, diag := readString(t, "j.json", text)
	if len(recs) != 2 || diag.Count("j.json") != 1 || diag.Problems()[0].First[0].Line != 2 {
		t.Fatalf("%d records: %v", len(recs), diag.Problems())
	}
	if r := recs[1]; r.Kind != KindLogindNew || r.Session != "8" || r.User != "o" {
		t.Errorf("byte array MESSAGE: %+v", r)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
