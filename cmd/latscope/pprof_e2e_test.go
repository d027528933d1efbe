package main

// End-to-end tests of pprof output and input: `collapse|flame -o x.pb.gz`,
// reading it back, a real Go CPU profile drawn, and malformed profiles.

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	runtimepprof "runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

func TestPprofOutputReadsBack(t *testing.T) {
	dir := t.TempDir()
	in := testenv.DataFile(t, "flamegraph/FlameGraph-test/perf-vertx-stacks-01.txt")
	want := run(t, "", "collapse", in, "--kernel")
	if want.code != 0 {
		t.Fatalf("collapse: exit %d\n%s", want.code, want.stderr)
	}
	gz, bare := filepath.Join(dir, "vertx.pb.gz"), filepath.Join(dir, "vertx.pb")
	for _, out := range []string{gz, bare} {
		if r := run(t, "", "collapse", in, "--kernel", "-o", out); r.code != 0 || !strings.Contains(r.stderr, "wrote "+out) {
			t.Fatalf("collapse -o %s: exit %d\n%s", out, r.code, r.stderr)
		}
	}
	if b, _ := os.ReadFile(gz); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("%s is not gzip-compressed", gz)
	}
	raw, _ := os.ReadFile(bare)
	for _, args := range [][]string{{"collapse", gz}, {"collapse", "pprof", bare}, {"collapse", bare}, {"collapse", "-", "--input-format", "pprof"}} {
		stdin := ""
		if args[1] == "-" {
			stdin = string(raw)
		}
		if r := run(t, stdin, args...); r.code != 0 || r.stdout != want.stdout {
			t.Errorf("latscope %v: exit %d, %d bytes, want the %d of the folded stacks\n%s", args, r.code, len(r.stdout), len(want.stdout), r.stderr)
		}
	}
	// flame writes pprof too, and --countname names the sample type.
	fromFlame := filepath.Join(dir, "flame.pprof")
	if r := run(t, "", "flame", in, "--kernel", "--countname", "cpu-clock", "-o", fromFlame); r.code != 0 {
		t.Fatalf("flame -o .pprof: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, "", "collapse", fromFlame, "--sample-index", "cpu-clock"); r.code != 0 || r.stdout != want.stdout {
		t.Errorf("collapse --sample-index cpu-clock: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, "", "flame", "--diff", in, in, "-o", filepath.Join(dir, "diff.pb.gz")); r.code == 0 || !strings.Contains(r.stderr, "differential") {
		t.Errorf("flame --diff -o .pb.gz: exit %d\n%s", r.code, r.stderr)
	}
}

//go:noinline
func spinForProfile(n int) int {
	s := 0
	for i := range n {
		s += i * i % 7
	}
	return s
}

func TestFlameOfAGoCPUProfile(t *testing.T) {
	dir := t.TempDir()
	cpu := filepath.Join(dir, "cpu.pb.gz")
	f, err := os.Create(cpu)
	if err != nil {
		t.Fatal(err)
	}
	if err := runtimepprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		spinForProfile(1 << 16)
	}
	runtimepprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "collapse", cpu)
	if r.code != 0 || !strings.Contains(r.stdout, "TestFlameOfAGoCPUProfile;github.com/latscope/latscope/cmd/latscope.spinForProfile ") {
		t.Fatalf("collapse cpu.pb.gz: exit %d, no stack ending in the busy loop:\n%.3000s\n%s", r.code, r.stdout, r.stderr)
	}
	// The counts are the profile's default type, cpu nanoseconds, and the
	// graph, the message and a pprof written from it say so.
	html := filepath.Join(dir, "cpu.html")
	if r := run(t, "", "flame", cpu, "-o", html); r.code != 0 || !strings.Contains(r.stderr, " nanoseconds in ") {
		t.Fatalf("flame cpu.pb.gz -o cpu.html: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("latscope.spinForProfile")) || !bytes.Contains(b, []byte(`"countName":"nanoseconds"`)) {
		t.Errorf("the flame graph lacks the busy loop or does not count nanoseconds")
	}
	again := filepath.Join(dir, "again.pb.gz")
	if r := run(t, "", "collapse", cpu, "-o", again); r.code != 0 {
		t.Fatalf("collapse cpu.pb.gz -o again.pb.gz: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, "", "flame", again, "--format", "json"); r.code != 0 || !strings.Contains(r.stdout, `"sample_type": "cpu",
  "sample_unit": "nanoseconds"`) {
		t.Errorf("pprof from pprof: exit %d, not cpu/nanoseconds:\n%.300s\n%s", r.code, r.stdout, r.stderr)
	}
	// Samples counted and nanoseconds do not add up: the second input is
	// refused (the stacks read before it are written, as for any input).
	folded := filepath.Join(dir, "cpu.folded")
	if err := os.WriteFile(folded, []byte("main;f 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", "collapse", folded, cpu); r.stdout != "main;f 1\n" || !strings.Contains(r.stderr, cpu+": its cpu/nanoseconds cannot be added to the samples/count") {
		t.Errorf("samples, then nanoseconds: exit %d, %q\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestPprofBadInput(t *testing.T) {
	dir := t.TempDir()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write([]byte("\x0a\x04\x08\x01\x10\x02\x0a\x04\x08\x03\x10\x04\x12\xff\xff"))
	_ = zw.Close()
	bad := filepath.Join(dir, "cut.pb.gz")
	if err := os.WriteFile(bad, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", "collapse", bad); r.code == 0 || !strings.Contains(r.stderr, bad+": not a valid pprof profile") {
		t.Errorf("collapse of a cut profile: exit %d\n%s", r.code, r.stderr)
	}
	text := filepath.Join(dir, "notes.pb")
	if err := os.WriteFile(text, []byte("main;f 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", "collapse", "--input-format", "pprof", text); r.code == 0 || !strings.Contains(r.stderr, text+": not a valid pprof profile") {
		t.Errorf("--input-format pprof of text: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, "", "collapse", "--input-format", "pdf", text); r.code == 0 || !strings.Contains(r.stderr, "pprof") {
		t.Errorf("--input-format pdf: exit %d\n%s", r.code, r.stderr)
	}
}
