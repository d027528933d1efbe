package auditwatch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latscope/latscope/audit/correlate"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/server/jobs"
)

// scenarioChains are the real correlation's chains of the synthetic
// scenario (testdata/audit/correlate-synthetic): two stops, their starts.
func scenarioChains(t *testing.T) []correlate.Chain {
	t.Helper()
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	files, _ := filepath.Glob(filepath.Join(dir, "*.aud"))
	files = append(files, filepath.Join(dir, "audit.log"), filepath.Join(dir, "auth.log"))
	m, err := correlate.Load(context.Background(), files, input.NewDiagnostics(nil, 0), correlate.Options{Year: 2026})
	if err != nil {
		t.Fatal(err)
	}
	chains := m.Chains(correlate.Filter{})
	if len(chains) < 2 {
		t.Fatalf("scenario: %d chains", len(chains))
	}
	return chains
}

func storedLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
	}
	return n
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRestartStoresOnce: a watch that fails restarts and reads its files
// again; the chains it had stored are not stored twice, and a second
// server start answers them from the file before following.
func TestRestartStoresOnce(t *testing.T) {
	chains := scenarioChains(t)
	data := t.TempDir()
	var attempts atomic.Int32
	follow := func(ctx context.Context, emit func(correlate.Chain) error) error {
		for _, c := range chains {
			if err := emit(c); err != nil {
				return err
			}
		}
		if attempts.Add(1) == 1 {
			return errors.New("audit.log: rotated away")
		}
		<-ctx.Done()
		return nil
	}
	s, err := Open(Options{Data: data, Backoff: jobs.Backoff{Min: time.Millisecond, Max: time.Second}}, []Watch{{Name: "orcl", Files: []string{"/x"}, Follow: follow}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	waitFor(t, "the restart", func() bool { st := s.Statuses()[0]; return st.Restarts == 1 && st.State == "following" })
	waitFor(t, "the second read", func() bool { return attempts.Load() == 2 })
	cancel()
	<-done
	s.Close()
	st := s.Statuses()[0]
	if st.Chains != len(chains) || st.State != "stopped" || st.Error != "" {
		t.Errorf("status %+v, want %d chains, stopped, no error (the restart succeeded)", st, len(chains))
	}
	if n := storedLines(t, st.Stored); n != len(chains) {
		t.Errorf("%d lines stored, want %d: a restart stored chains again", n, len(chains))
	}

	again, err := Open(Options{Data: data}, []Watch{{Name: "orcl", Follow: follow}})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	got, _, err := again.Chains("orcl", time.Time{}, time.Time{})
	if err != nil || len(got) != len(chains) {
		t.Fatalf("reopened: %d chains (%v), want %d", len(got), err, len(chains))
	}
	for i := range got {
		if SubjectKey(got[i].Subject) != SubjectKey(chains[i].Subject) || got[i].Confidence != chains[i].Confidence {
			t.Errorf("chain %d: %+v, want %+v", i, got[i].Subject, chains[i].Subject)
		}
	}
	if _, _, err := again.Chains("nope", time.Time{}, time.Time{}); !errors.Is(err, ErrNoWatch) {
		t.Errorf("unknown watch: %v", err)
	}
}

// TestImprovedChainReplaces: a chain whose link arrives later is stored
// again and replaces the first in memory; the last line of a subject in
// the file is its best chain, and reading the file back keeps that one.
func TestImprovedChainReplaces(t *testing.T) {
	best := scenarioChains(t)[0]
	first := best
	first.Links, first.Login, first.Confidence = nil, nil, correlate.Unknown
	data := t.TempDir()
	s, err := Open(Options{Data: data}, []Watch{{Name: "w", Follow: func(ctx context.Context, emit func(correlate.Chain) error) error {
		for _, c := range []correlate.Chain{first, first, best, best} {
			if err := emit(c); err != nil {
				return err
			}
		}
		<-ctx.Done()
		return nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	waitFor(t, "the chains", func() bool {
		c, _, _ := s.Chains("w", time.Time{}, time.Time{})
		return len(c) == 1 && c[0].Confidence == best.Confidence
	})
	cancel()
	<-done
	s.Close()
	if n := storedLines(t, s.Statuses()[0].Stored); n != 2 {
		t.Errorf("%d lines stored, want 2 (the first chain, then its improvement)", n)
	}
	again, err := Open(Options{Data: data}, []Watch{{Name: "w"}})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	got, _, _ := again.Chains("w", time.Time{}, time.Time{})
	if len(got) != 1 || got[0].Confidence != best.Confidence || got[0].Login == nil {
		t.Errorf("read back %+v, want the improved chain", got)
	}
}

// TestBoundAndWindow: memory keeps the newest MaxChains subjects; the
// since/until window selects by subject time; a torn last line is skipped.
func TestBoundAndWindow(t *testing.T) {
	base := scenarioChains(t)[0]
	data := t.TempDir()
	s, err := Open(Options{Data: data, MaxChains: 3}, []Watch{{Name: "w"}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	w := s.byName["w"]
	for i := range 5 {
		c := base
		c.Subject.Time = t0.Add(time.Duration(4-i) * time.Minute) // out of order on purpose
		if err := w.add(c); err != nil {
			t.Fatal(err)
		}
	}
	got, st, _ := s.Chains("w", t0.Add(2*time.Minute), t0.Add(3*time.Minute))
	if st.Chains != 3 || len(got) != 2 || !got[0].Subject.Time.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("kept %d, window %d chains from %v; want 3 kept (10:02–10:04), 2 in 10:02–10:03", st.Chains, len(got), got)
	}
	s.Close()
	f, _ := os.OpenFile(st.Stored, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"subject":{"time":"2026-11-20T10:09`)
	f.Close()
	var logged bytes.Buffer
	again, err := Open(Options{Data: data, MaxChains: 10, Logger: slog.New(slog.NewTextHandler(&logged, nil))}, []Watch{{Name: "w"}})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got, _, _ := again.Chains("w", time.Time{}, time.Time{}); len(got) != 5 {
		t.Errorf("read back %d chains, want the 5 stored (the torn line skipped)", len(got))
	}
	if !strings.Contains(logged.String(), "line=6") || !strings.Contains(logged.String(), st.Stored) {
		t.Errorf("the torn line was not reported with its file and line: %q", logged.String())
	}
}

// TestOldChainsNotStoredAgain: a restart reads the files from their start,
// so chains older than those kept in memory come again: they are in the
// file already and are not stored twice.
func TestOldChainsNotStoredAgain(t *testing.T) {
	base := scenarioChains(t)[0]
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	var chains []correlate.Chain
	for i := range 5 {
		c := base
		c.Subject.Time = t0.Add(time.Duration(i) * time.Minute)
		chains = append(chains, c)
	}
	data := t.TempDir()
	for run := range 2 {
		s, err := Open(Options{Data: data, MaxChains: 2}, []Watch{{Name: "w"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chains {
			if err := s.byName["w"].add(c); err != nil {
				t.Fatal(err)
			}
		}
		st := s.Statuses()[0]
		s.Close()
		if n := storedLines(t, st.Stored); n != 5 || st.Chains != 2 {
			t.Errorf("run %d: %d stored lines, %d chains in memory; want 5 and 2", run, n, st.Chains)
		}
	}
}
