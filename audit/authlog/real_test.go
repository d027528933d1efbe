package authlog

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// realFiles are the real login logs; loghub's are shared-only.
var realFiles = []string{
	"audit/auth-log/elastic-examples/auth.log",
	"audit/auth-log/elastic-beats/filebeat_system_auth_test.log",
	"audit/auth-log/logpai-loghub/OpenSSH_2k.log",
	"audit/auth-log/logpai-loghub/Linux_2k.log",
}

// readAll reads a file with the year 2017 and returns its records.
func readAll(t testing.TB, rel string) ([]Record, *input.Diagnostics, []byte) {
	t.Helper()
	data, err := os.ReadFile(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	diag := input.NewDiagnostics(nil, 0)
	var recs []Record
	err = Reader{Year: 2017}.Read(context.Background(), rel, bytes.NewReader(data), diag, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, diag, data
}

// grepCount counts the lines matching re, as grep -c does.
func grepCount(data []byte, re string) int {
	n, match := 0, regexp.MustCompile(re)
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if match.Match(line) {
			n++
		}
	}
	return n
}

// TestRealEveryLine: every non-blank line of every real file is one
// record, none skipped, in file order.
func TestRealEveryLine(t *testing.T) {
	for _, rel := range realFiles {
		t.Run(rel, func(t *testing.T) {
			recs, diag, data := readAll(t, rel)
			if n := diag.Count(rel); n != 0 {
				t.Errorf("%d lines skipped: %v", n, diag.Problems())
			}
			want := len(bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")))
			if len(recs) != want {
				t.Errorf("%d records, the file has %d lines", len(recs), want)
			}
			for i, r := range recs {
				if r.Line != i+1 || r.Time.IsZero() || r.Host == "" {
					t.Fatalf("record %d: line %d, time %v, host %q", i, r.Line, r.Time, r.Host)
				}
			}
		})
	}
}

// TestRealCounts: each kind counted equals grep's count of its lines.
func TestRealCounts(t *testing.T) {
	for _, rel := range realFiles {
		t.Run(rel, func(t *testing.T) {
			recs, _, data := readAll(t, rel)
			count := func(keep func(Record) bool) int {
				n := 0
				for _, r := range recs {
					if keep(r) {
						n++
					}
				}
				return n
			}
			kind := func(k Kind, method string) func(Record) bool {
				return func(r Record) bool { return r.Kind == k && (method == "" || r.Method == method) }
			}
			for _, c := range []struct {
				what string
				keep func(Record) bool
				grep string
			}{
				{"Accepted password", kind(KindSSHAccepted, "password"), `sshd\[\d+\]: Accepted password for `},
				{"Accepted publickey", kind(KindSSHAccepted, "publickey"), `sshd\[\d+\]: Accepted publickey for `},
				{"Failed password", kind(KindSSHFailed, "password"), `sshd\[\d+\]: (message repeated \d+ times: \[ )?Failed password for `},
				{"Failed", kind(KindSSHFailed, ""), `sshd\[\d+\]: (message repeated \d+ times: \[ )?Failed \S+ for `},
				{"Invalid user", kind(KindSSHInvalidUser, ""), `sshd\[\d+\]: Invalid user .* from `},
				{"disconnect", kind(KindSSHDisconnect, ""), `sshd\[\d+\]: (Disconnected from|Connection closed by|Received disconnect from) `},
				{"sudo COMMAND", kind(KindSudo, ""), `sudo: .* : .*COMMAND=`},
				{"session opened", kind(KindSessionOpened, ""), `(\(\S+:session\)|\(pam_unix\)\[\d+\]): session opened for user `},
				{"session closed", kind(KindSessionClosed, ""), `(\(\S+:session\)|\(pam_unix\)\[\d+\]): session closed for user `},
				{"logind new", kind(KindLogindNew, ""), `systemd-logind\[\d+\]: New session \S+ of user `},
				{"logind removed", kind(KindLogindRemoved, ""), `systemd-logind\[\d+\]: Removed session `},
				{"su", kind(KindSu, ""), `su\[\d+\]: (Successful su for|FAILED su for|\(to )`},
				{"useradd", kind(KindUserAdded, ""), `useradd\[\d+\]: new user: name=`},
				{"groupadd", kind(KindGroupAdded, ""), `(useradd|groupadd)\[\d+\]: new group: name=`},
				{"auth failure", kind(KindAuthFailure, ""), `(\(\S+:auth\)|\(pam_unix\)\[\d+\]): authentication failure;`},
				{"repeated", func(r Record) bool { return r.Repeated > 0 }, `: message repeated \d+ times: \[`},
			} {
				if got, want := count(c.keep), grepCount(data, c.grep); got != want {
					t.Errorf("%s: %d records, grep counts %d", c.what, got, want)
				}
			}
		})
	}
}

// TestRealAuthLogNumbers pins the numbers the sample's README gives.
func TestRealAuthLogNumbers(t *testing.T) {
	recs, _, _ := readAll(t, "audit/auth-log/elastic-examples/auth.log")
	got := map[string]int{}
	for _, r := range recs {
		got[string(r.Kind)+" "+r.Method]++
	}
	want := map[string]int{"ssh-accepted password": 190, "ssh-accepted publickey": 36, "ssh-failed password": 713, "sudo ": 186}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d, want %d", k, got[k], n)
		}
	}
	if first, last := recs[0].Time, recs[len(recs)-1].Time; !first.Equal(time.Date(2017, 3, 27, 13, 6, 56, 0, time.UTC)) || last.Year() != 2017 || last.Month() != time.April {
		t.Errorf("spans %v – %v", first, last)
	}
}

// TestRealTypedFields checks the fields of real lines.
func TestRealTypedFields(t *testing.T) {
	recs, _, _ := readAll(t, "audit/auth-log/elastic-examples/auth.log")
	at := func(line int) Record { return recs[line-1] }
	check := func(got, want Record) {
		t.Helper()
		got.Source, got.Format, got.Message, got.Line = "", "", "", 0
		if got != want {
			t.Errorf("\n got %+v\nwant %+v", got, want)
		}
	}
	ts := func(s string) time.Time {
		v, err := time.Parse("2006 Jan _2 15:04:05", "2017 "+s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	const host = "ip-10-77-20-248"
	check(at(6), Record{Time: ts("Mar 27 13:08:09"), Host: host, Program: "sshd", PID: 1361, Kind: KindSSHAccepted, Result: ResultSuccess,
		User: "ubuntu", Addr: "85.245.107.41", Port: 54259, Method: "publickey", Key: "RSA SHA256:Kl8kPGZrTiz7g4FO1hyqHdsSBBb5Fge6NWOobN03XJg"})
	check(at(7), Record{Time: ts("Mar 27 13:08:09"), Host: host, Program: "sshd", PID: 1361, Kind: KindSessionOpened, Result: ResultSuccess,
		User: "ubuntu", TargetUser: "ubuntu", Service: "sshd"})
	check(at(8), Record{Time: ts("Mar 27 13:08:09"), Host: host, Program: "systemd", Kind: KindSessionOpened, Result: ResultSuccess,
		User: "ubuntu", TargetUser: "ubuntu", Service: "systemd-user"})
	check(at(9), Record{Time: ts("Mar 27 13:08:09"), Host: host, Program: "systemd-logind", PID: 1118, Kind: KindLogindNew, User: "ubuntu", Session: "1"})
	for _, r := range recs {
		if r.Kind == KindSudo && r.Command == "/usr/sbin/service filebeat stop" {
			if r.User != "ubuntu" || r.TargetUser != "root" || r.TTY != "pts/0" || r.PWD == "" || r.Result != ResultSuccess {
				t.Errorf("sudo service filebeat stop: %+v", r)
			}
			return
		}
	}
	t.Error("no sudo of /usr/sbin/service filebeat stop")
}

// TestRealBeatsLines checks the beats sample's lines one by one.
func TestRealBeatsLines(t *testing.T) {
	recs, _, _ := readAll(t, "audit/auth-log/elastic-beats/filebeat_system_auth_test.log")
	want := []struct {
		kind                    Kind
		result                  Result
		user, target, addr, tty string
		port                    int
	}{
		{KindSSHAccepted, ResultSuccess, "vagrant", "", "10.0.2.2", "", 63673},
		{KindSSHAccepted, ResultSuccess, "vagrant", "", "192.168.33.1", "", 58803},
		{KindSSHInvalidUser, ResultFailed, "test", "", "10.0.2.2", "", 0},
		{KindSSHFailed, ResultFailed, "root", "", "216.160.83.57", "", 29160},
		{KindSudo, ResultSuccess, "vagrant", "root", "", "pts/0", 0},
		{KindOther, "", "", "", "", "", 0},
		{KindSudo, ResultSuccess, "vagrant", "root", "", "pts/1", 0},
		{KindSudo, ResultFailed, "tsg", "root", "", "pts/1", 0},
		{KindGroupAdded, ResultSuccess, "", "apache", "", "", 0},
		{KindUserAdded, ResultSuccess, "", "apache", "", "", 0},
	}
	for i, w := range want {
		r := recs[i]
		if r.Kind != w.kind || r.Result != w.result || r.User != w.user || r.TargetUser != w.target || r.Addr != w.addr || r.TTY != w.tty || r.Port != w.port {
			t.Errorf("line %d: %+v", i+1, r)
		}
	}
	if recs[6].Command != "/bin/cat /var/log/secure" {
		t.Errorf("command %q", recs[6].Command)
	}
}

// TestRealOldPAMForm: Linux_2k's "su(pam_unix)[pid]: session opened for
// user cyrus by (uid=0)".
func TestRealOldPAMForm(t *testing.T) {
	recs, _, _ := readAll(t, "audit/auth-log/logpai-loghub/Linux_2k.log")
	found := 0
	for _, r := range recs {
		if r.Kind == KindSessionOpened && r.Service == "su" && r.TargetUser == "cyrus" && r.PID > 0 {
			found++
		}
	}
	if found != 43 {
		t.Errorf("%d su sessions opened for cyrus, grep counts 43", found)
	}
	// "Jun 15 02:04:59 combo sshd(pam_unix)[20882]: authentication failure;
	// logname= uid=0 euid=0 tty=NODEVssh ruser=
	// rhost=220-135-151-1.hinet-ip.hinet.net  user=root"
	if r := recs[3]; r.Kind != KindAuthFailure || r.Service != "sshd" || r.Addr != "220-135-151-1.hinet-ip.hinet.net" || r.User != "root" || r.TTY != "NODEVssh" {
		t.Errorf("line 4: %+v", r)
	}
}
