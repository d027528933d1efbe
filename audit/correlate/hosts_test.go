package correlate

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// scenarioVariant writes the synthetic scenario's files into a temporary
// directory, audit.log and auth.log passed through edit functions, and
// returns the chains of its two SHUTDOWN records.
func scenarioVariant(t *testing.T, editAudit, editAuth func(string) string) (stop1, stop2 Chain) {
	t.Helper()
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	tmp := t.TempDir()
	auds, _ := filepath.Glob(filepath.Join(dir, "*.aud"))
	files := append([]string{}, auds...)
	for name, edit := range map[string]func(string) string{"audit.log": editAudit, "auth.log": editAuth} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if edit != nil {
			text = edit(text)
		}
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	m, err := Load(context.Background(), files, nil, Options{Year: 2026})
	if err != nil {
		t.Fatal(err)
	}
	var stops []Chain
	for _, c := range m.Chains(Filter{}) {
		if c.Subject.Action == "SHUTDOWN" {
			stops = append(stops, c)
		}
	}
	if len(stops) != 2 {
		t.Fatalf("%d SHUTDOWN chains, want 2", len(stops))
	}
	for _, c := range stops {
		t.Logf("%s → %+v (%s)", c.Subject.Source, c.Login, c.Confidence)
		for _, l := range c.Links {
			t.Logf("   %-28s %s", l.Confidence, l.What)
		}
	}
	return stops[0], stops[1]
}

// onNodeEdit prefixes every audit record with node=NAME, as auditd's
// name_format writes it.
func onNodeEdit(name string) func(string) string {
	return func(text string) string {
		return strings.ReplaceAll(strings.TrimSuffix("\n"+text, "\n"), "\ntype=", "\nnode="+name+" type=")[1:] + "\n"
	}
}

// TestNoLinkAcrossHosts: the Oracle records say host db1; the same audit
// events written by host db2 (node=db2) would link both stops by process
// id and execute watch: they must not. The login log of db1 still gives
// alice's sudo on pts/1 (no audit session then).
func TestNoLinkAcrossHosts(t *testing.T) {
	stop1, stop2 := scenarioVariant(t, onNodeEdit("db2"), nil)
	if stop1.Login != nil || stop1.Links[0].Confidence != ByTerminal || !strings.Contains(stop1.Links[0].What, "no audit session") {
		t.Errorf("stop 1 linked to db2's events: %+v", stop1)
	}
	if stop2.Login != nil || stop2.Confidence != Unknown {
		t.Errorf("stop 2 linked to db2's srvctl: %+v", stop2)
	}
}

// TestSameHostByFirstLabel: node=DB1.example.com is the Oracle header's db1.
func TestSameHostByFirstLabel(t *testing.T) {
	stop1, stop2 := scenarioVariant(t, onNodeEdit("DB1.example.com"), nil)
	if stop1.Login == nil || stop1.Login.Addr != "203.0.113.7" || stop1.Login.Port != 51022 {
		t.Errorf("stop 1: %+v", stop1.Login)
	}
	if stop2.Login == nil || stop2.Login.Addr != "198.51.100.9" || stop2.Confidence != ByWatch {
		t.Errorf("stop 2: %+v (%s)", stop2.Login, stop2.Confidence)
	}
}

// TestNoSSHLineOfAnotherHost: the login log is db2's (same addresses and
// times): the audit session's USER_LOGIN on db1 still gives the address,
// but no sshd line of db2 adds a user name and port.
func TestNoSSHLineOfAnotherHost(t *testing.T) {
	stop1, _ := scenarioVariant(t, onNodeEdit("db1"), func(text string) string { return strings.ReplaceAll(text, " db1 ", " db2 ") })
	if stop1.Login == nil || stop1.Login.Addr != "203.0.113.7" || stop1.Login.Port != 0 {
		t.Errorf("stop 1: %+v", stop1.Login)
	}
	for _, l := range stop1.Links {
		if strings.Contains(l.What, "Accepted") {
			t.Errorf("linked to db2's sshd line: %s", l.What)
		}
	}
}

// srvctlBy is a clusterware command under the execute watch at 10:06:03 in
// session ses (42: alice's, 43: bob's).
func srvctlBy(ses, args string) func(string) string {
	return func(text string) string {
		words := strings.Fields(args)
		execve := `type=EXECVE msg=audit(1795169163.401:1130): argc=` + strconv.Itoa(len(words)+2) + ` a0="/bin/sh" a1="/u01/app/19.0.0/grid/bin/srvctl"`
		for i, w := range words {
			execve += " a" + strconv.Itoa(i+2) + `="` + w + `"`
		}
		return text + `type=SYSCALL msg=audit(1795169163.401:1130): arch=c000003e syscall=59 success=yes exit=0 a0=1c2d0a0 a1=1c2d2b0 a2=1c2c010 a3=7ffe3c4d5e60 items=3 ppid=6150 pid=6400 auid=1001 uid=1100 gid=1100 euid=1100 suid=1100 fsuid=1100 egid=1100 sgid=1100 fsgid=1100 tty=pts1 ses=` + ses + ` comm="srvctl" exe="/usr/bin/bash" key="oracrs"
` + execve + "\n"
	}
}

// TestAmbiguousWatch: alice (ses 42) also runs srvctl stop database -d ORCL
// three seconds after bob: the stop is ambiguous, neither is taken, both are
// listed with their logins.
func TestAmbiguousWatch(t *testing.T) {
	_, stop2 := scenarioVariant(t, srvctlBy("42", "stop database -d ORCL"), nil)
	if stop2.Confidence != Ambiguous || stop2.Login != nil || len(stop2.Links) != 1 || stop2.Links[0].Confidence != Ambiguous {
		t.Fatalf("stop 2: %+v", stop2)
	}
	if !strings.Contains(stop2.Links[0].What, "2 clusterware commands") {
		t.Errorf("link %q", stop2.Links[0].What)
	}
	var who []string
	for _, c := range stop2.Candidates {
		if c.Login == nil || c.Link.Confidence != Ambiguous {
			t.Fatalf("candidate %+v", c)
		}
		who = append(who, c.Login.User+"@"+c.Login.Addr)
	}
	if strings.Join(who, " ") != "alice@203.0.113.7 bob@198.51.100.9" {
		t.Errorf("candidates %v, want alice's (latest) then bob's", who)
	}
}

// TestWatchNotAmbiguous: a status command of another session, or the same
// session's retry, leaves bob's stop attributed to bob.
func TestWatchNotAmbiguous(t *testing.T) {
	for _, edit := range []func(string) string{srvctlBy("42", "status database -d ORCL"), srvctlBy("43", "stop database -d ORCL")} {
		_, stop2 := scenarioVariant(t, edit, nil)
		if stop2.Confidence != ByWatch || stop2.Login == nil || stop2.Login.User != "bob" || len(stop2.Candidates) != 0 {
			t.Errorf("stop 2: %+v", stop2)
		}
	}
}

func TestSameHost(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"db1", "db1", true}, {"DB1", "db1", true}, {"db1", "db1.example.com", true}, {"DB1.Example.com", "db1.example.com", true},
		{"db1.example.com", "db1.other.net", false}, {"db1", "db2", false}, {"db1", "", true}, {"", "db2", true},
		{"10.0.0.1", "10.0.0.1", true}, {"10.0.0.1", "10", false}, {"db1", "db10.example.com", false},
	} {
		if got := sameHost(tc.a, tc.b); got != tc.want {
			t.Errorf("sameHost(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
	// A remote client's terminal is on its USERHOST, the process on the server.
	s := Subject{Host: "db1", ClientHost: "app7"}
	if s.terminalHost() != "app7" || (Subject{Host: "db1"}).terminalHost() != "db1" {
		t.Error("terminalHost")
	}
}
