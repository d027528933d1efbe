package correlate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestFollowScenario writes the scenario's files piece by piece into a
// temp dir while Follow reads them: the audit log is rotated (renamed and
// created again) and the login log truncated in place (copytruncate)
// half way, the .aud files appear in the followed directory later. Both
// stops are printed once each, with the scenario's logins.
func TestFollowScenario(t *testing.T) {
	src := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	auditLines := readLines(t, filepath.Join(src, "audit.log"))
	authLines := readLines(t, filepath.Join(src, "auth.log"))
	dir := t.TempDir()
	adump := filepath.Join(dir, "adump")
	os.Mkdir(adump, 0o755)
	auditLog, authLog := filepath.Join(dir, "audit.log"), filepath.Join(dir, "auth.log")
	write := func(name string, lines []string, flag int) {
		t.Helper()
		f, err := os.OpenFile(name, flag|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines { // a line at a time, as a daemon writes
			f.WriteString(l + "\n")
		}
		f.Close()
	}
	// Alice's login, sudo and sqlplus; the first sshd lines.
	write(auditLog, auditLines[:13], os.O_TRUNC)
	write(authLog, authLines[:5], os.O_TRUNC)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []Chain
	done := make(chan error, 1)
	fo := FollowOptions{Options: Options{Year: 2026}, Settle: 300 * time.Millisecond, Poll: 50 * time.Millisecond, FlushIdle: 200 * time.Millisecond}
	go func() {
		done <- Follow(ctx, []string{adump, auditLog, authLog}, input.NewDiagnostics(nil, 0), fo, func(c Chain) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, c)
			return nil
		})
	}()
	waitFor := func(what string, ok func([]Chain) bool) {
		t.Helper()
		for ctx.Err() == nil {
			mu.Lock()
			yes := ok(got)
			mu.Unlock()
			if yes {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s; got %d chains", what, len(got))
	}
	time.Sleep(300 * time.Millisecond)
	// The server process's exec is the last event of the log: only the
	// idle flush hands it on. Then its .aud file appears.
	copyFile(t, filepath.Join(src, "ORCL_ora_5201_20261120100202123456789012.aud"), filepath.Join(adump, "ORCL_ora_5201_20261120100202123456789012.aud"))
	waitFor("alice's stop", func(cs []Chain) bool { return count(cs, "SHUTDOWN") == 1 })

	// logrotate create: the audit log renamed, a new one written.
	os.Rename(auditLog, auditLog+".1")
	write(auditLog, auditLines[13:], os.O_TRUNC)
	// copytruncate: the login log copied and truncated, then written on.
	os.Truncate(authLog, 0)
	time.Sleep(300 * time.Millisecond) // seen shorter: polling cannot tell a truncation the new lines outgrew
	write(authLog, authLines[5:], os.O_APPEND)
	copyFile(t, filepath.Join(src, "ORCL_ora_6300_20261120100605987654321098.aud"), filepath.Join(adump, "ORCL_ora_6300_20261120100605987654321098.aud"))
	waitFor("bob's stop and his srvctl", func(cs []Chain) bool { return count(cs, "SHUTDOWN") == 2 && count(cs, "srvctl stop database") == 1 })
	time.Sleep(500 * time.Millisecond) // nothing is printed twice
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Follow: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var stops []Chain
	for _, c := range got {
		t.Logf("%s %s %s → %+v (%s)", c.Subject.Time.Format("15:04:05"), c.Subject.Action, c.Subject.Source, c.Login, c.Confidence)
		if c.Subject.Action == "SHUTDOWN" {
			stops = append(stops, c)
		}
	}
	if len(got) != 4 { // alice's CONNECT and SHUTDOWN, bob's SHUTDOWN, his srvctl
		t.Errorf("%d chains, want 4", len(got))
	}
	if len(stops) != 2 || stops[0].Login == nil || stops[0].Login.User != "alice" || stops[0].Login.Addr != "203.0.113.7" ||
		stops[0].Confidence != ByProcessID || stops[1].Login == nil || stops[1].Login.User != "bob" ||
		stops[1].Login.Port != 40022 || stops[1].Confidence != ByWatch {
		t.Errorf("stops: %+v", stops)
	}
}

func count(cs []Chain, action string) int {
	n := 0
	for _, c := range cs {
		if c.Subject.Action == action {
			n++
		}
	}
	return n
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
