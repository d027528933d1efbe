// Package testenv holds the conventions latscope's tests share: where the
// real test data lives and when a missing component skips or fails a test.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireEnv is the variable that turns skips for missing components into
// failures; .ci/run sets it.
const RequireEnv = "LATSCOPE_REQUIRE_INTEGRATION"

// Required reports whether missing integration components must fail tests.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// SkipOrFail skips the test because a component is missing on this
// machine, or fails it when LATSCOPE_REQUIRE_INTEGRATION=1.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf("missing integration component ("+RequireEnv+"=1): "+format, args...)
	}
	t.Skipf(format, args...)
}

// SkipAlways skips a test that cannot run on these machines at all (an
// Oracle server, kernel probes); docs/testing.md lists such tests.
func SkipAlways(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Skipf("cannot run here: "+format, args...)
}

// RepoRoot returns the module root (the directory holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// SharedDataDir returns the shared real-data directory: $LATSCOPE_TESTDATA,
// else ../shared/testdata beside the repository.
func SharedDataDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("LATSCOPE_TESTDATA")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "..", "shared", "testdata")
	}
	if _, err := os.Stat(dir); err != nil {
		SkipOrFail(t, "real test data not found at %s (set LATSCOPE_TESTDATA)", dir)
	}
	return dir
}

// SharedFile returns the path of a file in the shared real-data directory,
// e.g. SharedFile(t, "pylatencymap/example_latency_data.txt").
func SharedFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(SharedDataDir(t), rel)
	if _, err := os.Stat(p); err != nil {
		SkipOrFail(t, "real test file %s not found", p)
	}
	return p
}

// Chromium returns Debian's headless-capable Chromium for browser tests;
// without it the test skips (fails under LATSCOPE_REQUIRE_INTEGRATION=1).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	SkipOrFail(t, "chromium not installed (apt-get install -y chromium)")
	return ""
}
