package main

import (
	"encoding/json"
	"os"
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

// TestAuditOutputAndInputFormat: -o FILE.html writes the timeline page,
// -o FILE.json the JSON (stdout empty); - reads the standard input, its
// format detected or forced with --input-format; bad names are usage errors.
func TestAuditOutputAndInputFormat(t *testing.T) {
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	auds, _ := filepath.Glob(filepath.Join(dir, "*.aud"))
	files := append(auds, filepath.Join(dir, "audit.log"), filepath.Join(dir, "auth.log"))
	out := t.TempDir()
	for _, name := range []string{"t.html", "t.json", "t.jsonl"} {
		p := filepath.Join(out, name)
		r := run(t, "", append(append([]string{"audit"}, files...), "--year", "2026", "-o", p)...)
		data, _ := os.ReadFile(p)
		if r.code != 0 || r.stdout != "" || len(data) == 0 {
			t.Fatalf("-o %s: exit %d, stdout %q, %d bytes: %s", name, r.code, r.stdout, len(data), r.stderr)
		}
		switch name {
		case "t.html":
			for _, want := range []string{"<svg class=\"timeline\"", "bob from 198.51.100.9", "alice from 203.0.113.7", "by execute watch and time"} {
				if !strings.Contains(string(data), want) {
					t.Errorf("page lacks %q", want)
				}
			}
		case "t.json":
			if !json.Valid(data) || !strings.Contains(string(data), `"chains"`) {
				t.Errorf("json: %.300s", data)
			}
		case "t.jsonl":
			if strings.Count(string(data), "\n") != 4 {
				t.Errorf("jsonl: %s", data)
			}
		}
	}

	// The login log on stdin: detected beside the other files, then with
	// --input-format auth-log alone.
	auth, err := os.ReadFile(filepath.Join(dir, "auth.log"))
	if err != nil {
		t.Fatal(err)
	}
	detected := append(append([]string{"audit"}, auds...), filepath.Join(dir, "audit.log"), "-", "--year", "2026")
	forced := []string{"audit", "-", "--year", "2026", "--input-format", "auth-log"}
	for _, args := range [][]string{detected, forced} {
		r := run(t, string(auth), args...)
		if r.code != 0 || !strings.Contains(r.stdout, "# -: auth-log, 10 records read, 8 kept") {
			t.Fatalf("%v: exit %d: %s\n%s", args, r.code, r.stderr, r.stdout)
		}
	}
	if r := run(t, string(auth), detected...); !strings.Contains(r.stdout, "who: alice from 203.0.113.7 port 51022") {
		t.Errorf("stdin's login log not used:\n%s", r.stdout)
	}

	for _, bad := range [][]string{
		{"audit", auds[0], "--input-format", "oracle"},
		{"audit", auds[0], "-o", filepath.Join(out, "t.csv")},
		{"audit", "-", "-"},
	} {
		r := run(t, "", bad...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, r.code, r.stderr)
		}
		if bad[2] == "--input-format" && !strings.Contains(r.stderr, "oracle-aud, oracle-aud-xml, oracle-unified-csv, oracle-audit-syslog, linux-audit, auth-log, journal-export, journal-json") {
			t.Errorf("--input-format error lists no names: %s", r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "t.csv")); err == nil {
		t.Error("-o t.csv written")
	}
}

func TestAuditDocExample(t *testing.T) { checkDocExamples(t, "audit.md", 2) }
