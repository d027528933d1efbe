package collapse

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestInfernoRecorded records C++, Go and Rust programs
// (testdata/recorded: templates, lambdas, std::function, closures,
// generics, trait methods) with perf record -g on this machine and
// compares the default collapse of their perf script text with
// inferno-collapse-perf, in every option set.
func TestInfernoRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("records with perf for seconds")
	}
	tool := testenv.Inferno(t, "inferno-collapse-perf")
	perf := testenv.RecordingPerf(t)
	src, err := filepath.Abs(filepath.Join("testdata", "recorded"))
	if err != nil {
		t.Fatal(err)
	}
	builds := []struct {
		name, compiler string
		args           func(bin string) []string
	}{
		{"c++", "g++", func(bin string) []string {
			return []string{"-O1", "-g", "-fno-omit-frame-pointer", "-o", bin, filepath.Join(src, "cxx.cpp")}
		}},
		{"go", "go", func(bin string) []string { return []string{"build", "-o", bin, filepath.Join(src, "gomain.go")} }},
		{"rust", "rustc", func(bin string) []string {
			return []string{"-O", "-g", "-C", "force-frame-pointers=yes", "-o", bin, filepath.Join(src, "rustmain.rs")}
		}},
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			compiler := findCompiler(t, b.compiler)
			dir := t.TempDir()
			bin := filepath.Join(dir, "prog")
			if out, err := exec.Command(compiler, b.args(bin)...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", b.compiler, err, out)
			}
			data := filepath.Join(dir, "perf.data")
			rec := exec.Command(perf, "record", "-q", "-F", "999", "-g", "-e", "cpu-clock", "-o", data, "--", bin)
			if out, err := rec.CombinedOutput(); err != nil {
				t.Fatalf("perf record: %v\n%s", err, out)
			}
			script, err := exec.Command(perf, "script", "-i", data).Output()
			if err != nil {
				t.Fatalf("perf script: %v", err)
			}
			runs, same := differential(t, tool, PerfFormat(), b.name+" recording", script, infernoPerfCases)
			t.Logf("%d bytes of perf script: %d of %d comparisons identical", len(script), same, runs)
		})
	}
}

// findCompiler finds a compiler on PATH (rustc also in ~/.cargo/bin, where
// the inferno install puts the toolchain), or skips that part: a missing
// compiler is no missing component of latscope's.
func findCompiler(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, ".cargo", "bin", name); fileExists(p) {
			return p
		}
	}
	t.Skipf("%s not installed: no recording of its program compared", name)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
