// Package testenv holds the conventions latscope's tests share: where the
// real test data lives and when a missing component skips or fails a test.
package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// RunChromium runs headless Chromium on url with the flags every browser
// test needs (no sandbox as root, no network chatter, a fresh profile,
// every compositor stage run before a screenshot is taken) plus extra
// (--dump-dom, --screenshot=FILE, --virtual-time-budget=MS, ...), and
// returns what it printed. It fails the test when Chromium fails or
// takes longer than timeout.
func RunChromium(t testing.TB, url string, timeout time.Duration, extra ...string) string {
	t.Helper()
	stdout, _ := RunChromiumLog(t, url, timeout, extra...)
	return stdout
}

// RunChromiumLog is RunChromium that also returns Chromium's log (stderr),
// where --enable-logging=stderr writes the page's console messages and
// script errors as lines holding "CONSOLE".
func RunChromiumLog(t testing.TB, url string, timeout time.Duration, extra ...string) (stdout, log string) {
	t.Helper()
	bin := Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--run-all-compositor-stages-before-draw", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(append(args, extra...), url)...)
	var out, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := stderr.String()
		t.Fatalf("chromium %s: %v\n%s", url, err, msg[max(0, len(msg)-2000):])
	}
	return out.String(), stderr.String()
}

// Inferno finds one of inferno's tools (PATH, then ~/.cargo/bin, where
// `cargo install` puts them; .ci/run installs them), or skips (fails when
// integration is required).
func Inferno(t testing.TB, tool string) string {
	t.Helper()
	if p, err := exec.LookPath(tool); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cargo", "bin", tool)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	SkipOrFail(t, "%s not installed (cargo install inferno --version 0.12.8 --locked)", tool)
	return ""
}

// RecordingPerf returns perf's path when it can sample here (root or a
// permissive perf_event_paranoid; cpu-clock works in VMs), or skips (fails
// when integration is required).
func RecordingPerf(t testing.TB) string {
	t.Helper()
	perf, err := exec.LookPath("perf")
	if err != nil {
		SkipOrFail(t, "perf not installed (Debian linux-perf)")
	}
	probe := exec.Command(perf, "record", "-q", "-e", "cpu-clock", "-o", filepath.Join(t.TempDir(), "p.data"), "--", "true")
	if out, err := probe.CombinedOutput(); err != nil {
		SkipOrFail(t, "perf record cannot sample here: %v: %s", err, out)
	}
	return perf
}
