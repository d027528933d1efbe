package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestAuditScenario runs `latscope audit` on the synthetic scenario
// (testdata/audit/correlate-synthetic): alice's sqlplus SHUTDOWN and bob's
// srvctl stop database, each attributed to its login and address.
func TestAuditScenario(t *testing.T) {
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	auds, _ := filepath.Glob(filepath.Join(dir, "*.aud"))
	args := append([]string{"audit"}, auds...)
	args = append(args, filepath.Join(dir, "audit.log"), filepath.Join(dir, "auth.log"), "--year", "2026")

	r := run(t, "", append(args, "--format", "json")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Chains []struct {
			Subject struct {
				Kind, Action, DB string
			} `json:"subject"`
			Links []struct {
				Confidence string `json:"confidence"`
			} `json:"links"`
			Login *struct {
				User, Addr string
				Port       int
				Ses        string `json:"ses"`
			} `json:"login"`
			Confidence string `json:"confidence"`
		} `json:"chains"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var got []string
	for _, c := range doc.Chains {
		if c.Subject.Kind == "oracle" && c.Subject.Action == "SHUTDOWN" && c.Login != nil {
			got = append(got, c.Login.User+" "+c.Login.Addr+" "+c.Login.Ses+" "+c.Links[0].Confidence+" "+c.Links[1].Confidence)
		}
	}
	want := []string{
		"alice 203.0.113.7 42 by process id exact: same ses",
		"bob 198.51.100.9 43 by execute watch and time exact: same ses",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("SHUTDOWN chains:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The table, filtered to the Grid stop.
	r = run(t, "", append(args, "--since", "2026-11-20 10:06:01", "--db", "orcl")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "who: bob from 198.51.100.9 port 40022") || strings.Contains(r.stdout, "alice") ||
		!strings.Contains(r.stdout, "by execute watch and time") {
		t.Errorf("table:\n%s", r.stdout)
	}

	// One chain a line.
	r = run(t, "", append(args, "--format", "jsonl")...)
	if n := strings.Count(r.stdout, "\n"); r.code != 0 || n != len(doc.Chains) {
		t.Errorf("jsonl: exit %d, %d lines, want %d", r.code, n, len(doc.Chains))
	}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("jsonl line %q", l)
		}
	}

	// Usage errors.
	for _, bad := range [][]string{{"audit"}, {"audit", auds[0], "--format", "html"}, {"audit", auds[0], "--since", "yesterday"}} {
		if r := run(t, "", bad...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, r.code, r.stderr)
		}
	}
	if r := run(t, "", "audit", "--help"); r.code != 0 || !strings.Contains(r.stdout, "execute") {
		t.Errorf("--help: exit %d\n%s", r.code, r.stdout)
	}
}

func TestAuditDocExample(t *testing.T) { checkDocExamples(t, "audit.md", 1) }
