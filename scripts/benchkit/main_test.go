package benchkit

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type testConfig struct {
	Options
	runs int
}

func parseTest(args []string, stderr io.Writer) (testConfig, error) {
	c := testConfig{Options: Options{Repo: "/repo"}}
	fs := NewFlagSet("testbench", "what it compares.", stderr)
	c.Define(fs, "test.json", "the runs", "a requirement")
	fs.IntVar(&c.runs, "runs", 3, "runs per tool")
	if err := Parse(fs, args); err != nil {
		return c, err
	}
	if c.runs < 1 {
		return c, errors.New("-runs must be at least 1")
	}
	return c, nil
}

func TestFlags(t *testing.T) {
	c, err := parseTest([]string{"-runs", "5", "-strict"}, io.Discard)
	if err != nil || c.runs != 5 || !c.Strict || c.Out != "/repo/bench-out/test.json" {
		t.Errorf("%+v, %v", c, err)
	}
	var help strings.Builder
	if _, err := parseTest([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
	for _, want := range []string{"usage: go run ./scripts/testbench [flags]\n\nwhat it compares.\n\n", "JSON file for the runs (default \"/repo/bench-out/test.json\")", "exit 3 when a requirement fails"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, help.String())
		}
	}
	if _, err := parseTest([]string{"extra"}, io.Discard); err == nil || err.Error() != `unexpected argument "extra"` {
		t.Errorf("extra argument: %v", err)
	}
}

// Main's exit codes: help, bad flags, a harness error, a failed
// requirement with and without -strict.
func TestMainExitCodes(t *testing.T) {
	bench := func(pass bool, err error) func(context.Context, testConfig, io.Writer, io.Writer) (bool, error) {
		return func(ctx context.Context, c testConfig, stdout, stderr io.Writer) (bool, error) {
			if ctx.Err() != nil {
				t.Error("context cancelled")
			}
			return pass, err
		}
	}
	for _, c := range []struct {
		args   []string
		pass   bool
		err    error
		code   int
		stderr string
	}{
		{[]string{"-h"}, true, nil, 0, "usage: "},
		{[]string{"-runs", "0"}, true, nil, ExitUsage, "testbench: -runs must be at least 1\n"},
		{nil, true, errors.New("boom"), ExitHarness, "testbench: boom\n"},
		{nil, false, nil, 0, ""},
		{[]string{"-strict"}, false, nil, ExitFailed, ""},
		{[]string{"-strict"}, true, nil, 0, ""},
	} {
		var stderr strings.Builder
		code := Main("testbench", c.args, io.Discard, &stderr, parseTest, bench(c.pass, c.err))
		if code != c.code || !strings.HasPrefix(stderr.String(), c.stderr) || (c.stderr == "" && stderr.Len() > 0) {
			t.Errorf("%v (pass %v, err %v): exit %d, stderr %q; want %d, %q", c.args, c.pass, c.err, code, stderr.String(), c.code, c.stderr)
		}
	}
}

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(path, []byte("old and longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("%q", b)
	}
	// An incomplete file is removed.
	err := WriteFile(path, func(w io.Writer) error { io.WriteString(w, "part"); return errors.New("cut short") })
	if err == nil || err.Error() != "cut short" {
		t.Errorf("err %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("incomplete file left: %v", err)
	}
	if err := WriteFile(filepath.Join(path, "x", "y"), func(io.Writer) error { return nil }); err == nil {
		t.Error("a file in a missing directory written")
	}
}

func TestDecodeSaveJSON(t *testing.T) {
	var v struct{ A int }
	if err := DecodeJSON([]byte("note: first\n{\"A\": 3}\n"), &v); err != nil || v.A != 3 {
		t.Errorf("%+v, %v", v, err)
	}
	for _, bad := range []string{"no JSON\n", "{\"A\": \"x\"}"} {
		if err := DecodeJSON([]byte(bad), &v); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var stdout strings.Builder
	path := filepath.Join(t.TempDir(), "out", "r.json")
	if err := SaveJSON(&stdout, path, "results", v); err != nil || stdout.String() != "results: "+path+"\n" {
		t.Errorf("%q, %v", stdout.String(), err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\n  \"A\": 3\n}\n" {
		t.Errorf("%q", b)
	}
}

// RunTo's child writes to the file itself; Process.Stdout stays empty.
func TestRunTo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := RunTo(t.Context(), []string{"sh", "-c", "echo to-file; echo to-err >&2"}, time.Minute, f)
	if err != nil || len(p.Stdout) != 0 || string(p.Stderr) != "to-err\n" || p.Wall <= 0 {
		t.Errorf("%+v, %v", p, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "to-file\n" {
		t.Errorf("file %q", b)
	}
}

func TestMachineSummary(t *testing.T) {
	m := Machine{CPU: "cpu", Cores: 2, Kernel: "6.1", Go: "go1.25"}
	if got := m.Summary(); got != "cpu, 2 cores; kernel 6.1; go1.25" {
		t.Errorf("%q", got)
	}
}

// FindLatscope without building: a named binary must exist; the
// repository's bin/latscope is used when asked for and there.
func TestFindLatscope(t *testing.T) {
	repo := t.TempDir()
	bin := filepath.Join(repo, "bin", "latscope")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		bin        string
		useRepoBin bool
		want       string
	}{{bin, false, bin}, {"", true, bin}} {
		if got, err := FindLatscope(t.Context(), c.bin, c.useRepoBin, repo, t.TempDir(), io.Discard); err != nil || got != c.want {
			t.Errorf("%q, %v: %q, %v", c.bin, c.useRepoBin, got, err)
		}
	}
	if _, err := FindLatscope(t.Context(), filepath.Join(repo, "none"), true, repo, t.TempDir(), io.Discard); err == nil || !strings.Contains(err.Error(), "-latscope") {
		t.Errorf("a missing named binary: %v", err)
	}
}
