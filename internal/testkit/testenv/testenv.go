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
	root, ok := findRoot(dir)
	if !ok {
		t.Fatal("go.mod not found above the test's directory")
	}
	return root
}

// findRoot returns the nearest directory at or above dir holding go.mod.
func findRoot(dir string) (string, bool) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
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
