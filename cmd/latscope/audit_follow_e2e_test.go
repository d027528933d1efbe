package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestAuditFollowJSONLines: `latscope audit --follow --format jsonl` on the
// scenario prints each chain once as a JSON line, and SIGTERM ends it with
// exit status 0.
func TestAuditFollowJSONLines(t *testing.T) {
	src := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	dir := t.TempDir()
	adump := filepath.Join(dir, "adump")
	os.Mkdir(adump, 0o755)
	for _, name := range []string{"audit.log", "auth.log", "ORCL_ora_5201_20261120100202123456789012.aud", "ORCL_ora_6300_20261120100605987654321098.aud"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, name)
		if filepath.Ext(name) == ".aud" {
			to = filepath.Join(adump, name)
		}
		os.WriteFile(to, data, 0o644)
	}
	cmd := exec.Command(binary, "audit", adump, filepath.Join(dir, "audit.log"), filepath.Join(dir, "auth.log"),
		"--year", "2026", "--follow", "--format", "jsonl", "--settle", "200ms")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	actions := map[string]int{}
	for n := 0; n < 4; n++ {
		select {
		case l := <-lines:
			var c struct {
				Subject struct{ Action string } `json:"subject"`
				Login   *struct{ Addr string }  `json:"login"`
			}
			if err := json.Unmarshal([]byte(l), &c); err != nil || c.Login == nil {
				t.Fatalf("line %q: %v", l, err)
			}
			actions[c.Subject.Action]++
		case <-deadline:
			t.Fatalf("timed out; chains so far %v", actions)
		}
	}
	if actions["SHUTDOWN"] != 2 || actions["srvctl stop database"] != 1 || actions["CONNECT"] != 1 {
		t.Errorf("chains %v", actions)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	for l := range lines {
		t.Errorf("printed again after the settle: %s", l)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
}
