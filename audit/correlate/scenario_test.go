package correlate

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestScenario: an ssh login, sudo to oracle, sqlplus / as sysdba shutdown,
// and a srvctl stop database under the execute watch (testdata/audit/
// correlate-synthetic, made from real record shapes): both stops are
// attributed to the right login and address with the right confidence.
func TestScenario(t *testing.T) {
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	files, _ := filepath.Glob(filepath.Join(dir, "*.aud"))
	files = append(files, filepath.Join(dir, "audit.log"), filepath.Join(dir, "auth.log"))
	var msgs bytes.Buffer
	diag := input.NewDiagnostics(&msgs, 100)
	m, err := Load(context.Background(), files, diag, Options{Year: 2026})
	if err != nil {
		t.Fatal(err)
	}
	if diag.Count("") != 0 || msgs.Len() != 0 {
		t.Errorf("diagnostics: %s", msgs.String())
	}
	var stops []Chain
	for _, c := range m.Chains(Filter{}) {
		t.Logf("%s %s %s %s → %+v (%s)", c.Subject.Time.Format("15:04:05"), c.Subject.Kind, c.Subject.Action, c.Subject.DB, c.Login, c.Confidence)
		for _, l := range c.Links {
			t.Logf("   %-28s %s", l.Confidence, l.What)
		}
		if c.Subject.Kind == "oracle" && c.Subject.Action == "SHUTDOWN" {
			stops = append(stops, c)
		}
	}
	if len(stops) != 2 {
		t.Fatalf("%d SHUTDOWN chains, want 2", len(stops))
	}
	check := func(c Chain, user, addr string, port int, first Confidence) {
		t.Helper()
		if c.Login == nil || c.Login.User != user || c.Login.Addr != addr || c.Login.Port != port {
			t.Errorf("%s: login %+v, want %s from %s port %d", c.Subject.Source, c.Login, user, addr, port)
		}
		if len(c.Links) < 2 || c.Links[0].Confidence != first {
			t.Fatalf("%s: links %+v, want first %q", c.Subject.Source, c.Links, first)
		}
		if c.Links[1].Confidence != Exact {
			t.Errorf("%s: session link %q, want %q", c.Subject.Source, c.Links[1].Confidence, Exact)
		}
	}
	// Stop 1: .aud pid 5201 is the bequeath server exec'd by sqlplus (5200) in ses 42.
	check(stops[0], "alice", "203.0.113.7", 51022, ByProcessID)
	if stops[0].Login.Session != "42" || stops[0].Confidence != ByProcessID {
		t.Errorf("stop 1: ses %s confidence %q", stops[0].Login.Session, stops[0].Confidence)
	}
	if len(stops[0].Steps) == 0 {
		t.Errorf("stop 1: no sudo steps")
	}
	// Stop 2: terminal UNKNOWN: srvctl stop database -d ORCL under key oracrs, ses 43.
	check(stops[1], "bob", "198.51.100.9", 40022, ByWatch)
	if stops[1].Login.Session != "43" || stops[1].Confidence != ByWatch {
		t.Errorf("stop 2: ses %s confidence %q", stops[1].Login.Session, stops[1].Confidence)
	}
}

// TestTerminalFallback: without the server process's exec the SHUTDOWN on
// pts/1 is linked by terminal and time to ses 42.
func TestTerminalFallback(t *testing.T) {
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	m, err := Load(context.Background(), []string{
		filepath.Join(dir, "ORCL_ora_5201_20261120100202123456789012.aud"),
		filepath.Join(dir, "audit.log"), filepath.Join(dir, "auth.log")}, nil, Options{Year: 2026})
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.audit {
		if m.audit[i].PID == "5201" {
			m.audit[i].PID = "1"
		}
	}
	cs := m.Chains(Filter{DB: "orcl"})
	var got *Chain
	for i := range cs {
		if cs[i].Subject.Action == "SHUTDOWN" {
			got = &cs[i]
		}
	}
	if got == nil || got.Links[0].Confidence != ByTerminal || got.Login == nil || got.Login.User != "alice" {
		t.Fatalf("chain %+v", got)
	}
}

// TestNoLinkAcrossYears: real .aud records of 2020 and real audit/login
// logs of 2016–2017 from other hosts share terminals (pts/0): no record
// may be linked to them.
func TestNoLinkAcrossYears(t *testing.T) {
	auds := testenv.DataFiles(t, "audit/oracle-aud/elastic-beats/*")
	if len(auds) == 0 {
		t.Skip("needs the shared-only audit/oracle-aud/elastic-beats/ (Elastic License): $LATSCOPE_TESTDATA")
	}
	files := append(auds,
		testenv.DataFiles(t, "audit/linux-audit/elastic-go-libaudit/*")...)
	files = append(files, testenv.DataFiles(t, "audit/linux-audit/elastic-beats/*")...)
	for i, rel := range files {
		files[i] = testenv.DataFile(t, rel) // skips without the shared-only .aud files
	}
	m, err := Load(context.Background(), files, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := m.Chains(Filter{})
	n := 0
	for _, c := range cs {
		if c.Subject.Kind != "oracle" {
			continue
		}
		n++
		if c.Confidence != Unknown || len(c.Links) != 1 {
			t.Errorf("%s:%d linked: %+v", c.Subject.Source, c.Subject.Line, c.Links)
		}
	}
	if n == 0 {
		t.Error("no Oracle subjects")
	}
}
