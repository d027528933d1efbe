package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/browsertest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestServeAuditWatch runs an audit watch in a real `latscope serve` over
// a copy of the synthetic scenario (testdata/audit/correlate-synthetic):
// the first stop's chain is found from the files as they are; the second
// stop's .aud file, written into the followed adump directory while the
// server runs, gives a second chain with bob's login; both are in the
// stored JSON lines, the API and the timeline page, which a viewer opens
// in a real Chromium; a restart stores nothing twice.
func TestServeAuditWatch(t *testing.T) {
	scenario := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	dir := t.TempDir()
	adump, logs := filepath.Join(dir, "adump"), filepath.Join(dir, "log")
	for _, d := range []string{adump, logs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(name, to string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(scenario, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("ORCL_ora_5201_20261120100202123456789012.aud", adump)
	copyFile("audit.log", logs)
	copyFile("auth.log", logs)
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "latscope.yaml")
	yaml := "listen: " + freePort(t) + "\ndata: " + data + "\naudit_watches:\n  - name: orcl\n    files: [" + adump + ", " +
		filepath.Join(logs, "audit.log") + ", " + filepath.Join(logs, "auth.log") + "]\n    year: 2026\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "--config", cfg)
	admin := &apiClient{t: t, base: srv.base, token: bootstrapToken(t, srv, "admin"), bodies: &strings.Builder{}}
	chains := func() []map[string]any {
		var resp struct {
			Chains []map[string]any `json:"chains"`
		}
		if err := json.Unmarshal([]byte(admin.want(http.StatusOK, "GET", "/api/v1/audit-watches/orcl/chains", "")), &resp); err != nil {
			t.Fatal(err)
		}
		return resp.Chains
	}
	stops := func() (logins []string) {
		for _, c := range chains() {
			s := c["subject"].(map[string]any)
			if s["action"] == "SHUTDOWN" {
				login, _ := c["login"].(map[string]any)
				logins = append(logins, login["user"].(string)+"@"+login["addr"].(string))
			}
		}
		return logins
	}
	eventually(t, "the first stop's chain", func() bool { return len(stops()) == 1 })
	copyFile("ORCL_ora_6300_20261120100605987654321098.aud", adump)
	eventually(t, "the second stop's chain", func() bool { return len(stops()) == 2 })
	if got := strings.Join(stops(), " "); got != "alice@203.0.113.7 bob@198.51.100.9" {
		t.Errorf("stops explained by %s; want alice@203.0.113.7 bob@198.51.100.9", got)
	}
	jsonl := admin.want(http.StatusOK, "GET", "/api/v1/audit-watches/orcl/chains?format=jsonl&since=2026-11-20T10:06:01Z", "")
	if n := strings.Count(jsonl, "\n"); n != 1 || !strings.Contains(jsonl, `"addr":"198.51.100.9"`) {
		t.Errorf("chains since 10:06:01 as JSON lines: %q; want bob's stop alone", jsonl)
	}
	var list struct {
		Watches []struct {
			State  string `json:"state"`
			Chains int    `json:"chains"`
			Stored string `json:"stored"`
		} `json:"watches"`
	}
	json.Unmarshal([]byte(admin.want(http.StatusOK, "GET", "/api/v1/audit-watches", "")), &list)
	if len(list.Watches) != 1 || list.Watches[0].State != "following" || list.Watches[0].Stored != filepath.Join(data, "auditwatch", "orcl.jsonl") {
		t.Fatalf("watches: %+v", list.Watches)
	}
	n := len(chains())

	// A viewer opens the page: the list, then the timeline in its frame.
	admin.want(http.StatusCreated, "POST", "/api/v1/users", `{"name":"vera","role":"viewer","password":"`+webViewerPassword+`"}`)
	b := browsertest.New(t)
	b.Login(srv.base, "vera", webViewerPassword)
	b.Open(srv.base + "/audit-watches?watch=orcl")
	if got := browsertest.Eval[string](b, `document.querySelector("#audit-watches tbody td").textContent`); got != "orcl" {
		t.Errorf("first watch listed: %q", got)
	}
	b.FramePainted("/api/v1/audit-watches/orcl/timeline")
	svg := b.FrameOuterHTML("/api/v1/audit-watches/orcl/timeline", "svg.timeline")
	for _, want := range []string{"203.0.113.7", "198.51.100.9", "SHUTDOWN"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the timeline's SVG has no %q", want)
		}
	}
	b.Audit("audit watches")
	b.Screenshot("audit-watches")

	// A restart reads the files again: nothing is stored twice.
	srv.stop(t)
	stored, err := os.ReadFile(filepath.Join(data, "auditwatch", "orcl.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(string(stored), "\n")
	again := startServe(t, "--config", cfg)
	admin.base = again.base
	eventually(t, "the restarted watch", func() bool {
		json.Unmarshal([]byte(admin.want(http.StatusOK, "GET", "/api/v1/audit-watches", "")), &list)
		return list.Watches[0].State == "following"
	})
	time.Sleep(4 * time.Second) // the follow's settle delay: chains of the re-read files are handed on
	if got := len(chains()); got != n {
		t.Errorf("after a restart %d chains, want %d", got, n)
	}
	stored, _ = os.ReadFile(filepath.Join(data, "auditwatch", "orcl.jsonl"))
	if got := strings.Count(string(stored), "\n"); got != lines {
		t.Errorf("after a restart %d stored lines, want %d: chains stored twice", got, lines)
	}
	again.stop(t)
}
