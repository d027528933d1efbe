package main

// End-to-end tests of `latscope iotest`: real reads of real scratch files,
// files and loop devices through the built binary.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// ioReport mirrors the parts of `latscope iotest --format json` the tests
// read, with the field names the issue asks for.
type ioReport struct {
	BS     int    `json:"bs"`
	Loop   string `json:"loop"`
	Engine string `json:"engine"`
	Kind   string `json:"kind"`
	Steps  []struct {
		Concurrency int      `json:"concurrency"`
		Rate        float64  `json:"rate"`
		IOPS        float64  `json:"iops"`
		MBs         *float64 `json:"mb_s"`
		MeanUS      float64  `json:"mean_us"`
		P50US       float64  `json:"p50_us"`
		P90US       float64  `json:"p90_us"`
		P99US       float64  `json:"p99_us"`
		P999US      float64  `json:"p999_us"`
		MaxUS       float64  `json:"max_us"`
		Ops         int64    `json:"ops"`
		Seconds     float64  `json:"seconds"`
		CPUPerOpUS  float64  `json:"cpu_per_op_us"`
		Complete    bool     `json:"complete"`
		Readers     int      `json:"readers"`
		IODepth     int      `json:"iodepth"`
	} `json:"steps"`
	Knee *struct {
		Concurrency int     `json:"concurrency"`
		IOPS        float64 `json:"iops"`
		P99US       float64 `json:"p99_us"`
	} `json:"knee"`
	Modes []struct {
		CenterUS float64 `json:"center_us"`
		Fraction float64 `json:"fraction"`
		Label    string  `json:"label"`
	} `json:"modes"`
	Device struct {
		Class string `json:"class"`
	} `json:"device"`
	Warnings []string `json:"warnings"`
}

func runIOTest(t *testing.T, args ...string) (ioReport, result) {
	t.Helper()
	r := run(t, "", append([]string{"iotest", "--format", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("latscope iotest %v: exit %d\n%s", args, r.code, r.stderr)
	}
	var rep ioReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("iotest JSON: %v\n%s", err, r.stdout)
	}
	return rep, r
}

func TestIOTestSweepReportAndOutputs(t *testing.T) {
	dir := t.TempDir()
	out := t.TempDir()
	html, lsr := filepath.Join(out, "sweep.html"), filepath.Join(out, "sweep.lsr")
	rep, r := runIOTest(t, dir, "--steps", "1,2", "--duration", "1s", "--warmup", "200ms", "--size", "32M",
		"--interval", "250ms", "-o", html, "--record", lsr)
	if rep.BS != 8192 || rep.Loop != "closed" || rep.Kind != "scratch file" || len(rep.Steps) != 2 {
		t.Fatalf("report %+v", rep)
	}
	var ops int64
	for i, s := range rep.Steps {
		if s.Concurrency != []int{1, 2}[i] || s.Ops == 0 || s.IOPS <= 0 || s.MBs == nil || !s.Complete ||
			!(s.P50US <= s.P90US && s.P90US <= s.P99US && s.P99US <= s.P999US && s.P999US <= s.MaxUS) ||
			s.CPUPerOpUS <= 0 || s.Seconds < 0.99 || s.Seconds > 1.1 {
			t.Errorf("step %d: %+v", i, s)
		}
		// MB/s are 10^6 bytes per second of 8 KiB reads.
		if want := s.IOPS * 8192 / 1e6; *s.MBs < want*0.999 || *s.MBs > want*1.001 {
			t.Errorf("step %d: %g MB/s at %g IOPS, want %g", i, *s.MBs, s.IOPS, want)
		}
		ops += s.Ops
	}
	if len(rep.Modes) == 0 || rep.Modes[0].Label == "" || rep.Device.Class == "" {
		t.Errorf("modes %+v, device class %q", rep.Modes, rep.Device.Class)
	}
	if !strings.Contains(r.stderr, "2 step(s)") || !strings.Contains(r.stderr, "wrote "+html) || !strings.Contains(r.stderr, "recorded") {
		t.Errorf("stderr does not show the plan and the outputs:\n%s", r.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "random read") {
		t.Errorf("heat-map page: %v", err)
	}
	// The recording holds the warm-ups too: at least the steps' reads.
	recorded := reportJSON(t, lsr)
	if len(recorded.Series) != 1 || int64(recorded.Series[0].Count) < ops {
		t.Errorf("recording holds %+v, want one series with at least %d reads", recorded.Series, ops)
	}
}

// An io_uring depth sweep goes through the same report, page and
// recording as a reader sweep; its concurrency is readers × iodepth.
func TestIOTestUringDepthSweep(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	html, lsr := filepath.Join(out, "depth.html"), filepath.Join(out, "depth.lsr")
	args := []string{"iotest", "--format", "json", dir, "--engine", "io_uring", "--iodepth", "1,4", "--concurrency", "2",
		"--duration", "600ms", "--warmup", "100ms", "--size", "32M", "--interval", "200ms", "-o", html, "--record", lsr}
	r := run(t, "", args...)
	if r.code != 0 && strings.Contains(r.stderr, "io_uring is not available") {
		t.Skipf("skipped: %s", strings.TrimSpace(r.stderr)) // a kernel or seccomp profile without io_uring
	}
	if r.code != 0 {
		t.Fatalf("latscope %v: exit %d\n%s", args, r.code, r.stderr)
	}
	var rep ioReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("iotest JSON: %v\n%s", err, r.stdout)
	}
	if rep.Engine != "io_uring" || len(rep.Steps) != 2 {
		t.Fatalf("report %+v", rep)
	}
	var ops int64
	for i, s := range rep.Steps {
		if d := []int{1, 4}[i]; s.Readers != 2 || s.IODepth != d || s.Concurrency != 2*d || s.Ops == 0 || !s.Complete {
			t.Errorf("step %d: %+v", i, s)
		}
		ops += s.Ops
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "2 readers × iodepth 4") {
		t.Errorf("page does not name the steps readers × iodepth: %v", err)
	}
	if recorded := reportJSON(t, lsr); len(recorded.Series) != 1 || int64(recorded.Series[0].Count) < ops {
		t.Errorf("recording holds %+v, want one series with at least %d reads", recorded.Series, ops)
	}
	if r := run(t, "", "iotest", dir, "--iodepth", "8", "--duration", "1s"); r.code == 0 || !strings.Contains(r.stderr, "needs engine io_uring") {
		t.Errorf("psync with --iodepth 8: exit %d, %s", r.code, r.stderr)
	}
}

func TestIOTestTableReport(t *testing.T) {
	r := run(t, "", "iotest", t.TempDir(), "--concurrency", "2", "--duration", "500ms", "--warmup", "0s", "--size", "16M")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"latscope iotest:", "device:", "placement:", "concurrency", "p99.9", "Latency modes"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table report lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestIOTestOpenLoop(t *testing.T) {
	rep, _ := runIOTest(t, t.TempDir(), "--rate", "500", "--duration", "2s", "--warmup", "0s", "--size", "16M", "--concurrency", "4")
	if rep.Loop != "open" || len(rep.Steps) != 1 || rep.Steps[0].Rate != 500 || rep.Steps[0].Concurrency != 4 {
		t.Fatalf("report %+v", rep)
	}
	// 1000 Poisson arrivals: ±10 % is over three standard deviations.
	if iops := rep.Steps[0].IOPS; iops < 450 || iops > 550 {
		t.Errorf("open loop at 500/s did %g IOPS", iops)
	}
}

func TestIOTestBadInputs(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.dbf")
	if err := os.WriteFile(small, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{filepath.Join(dir, "missing")}, 1, "no such file"},
		{[]string{small}, 1, "less than one 8 KiB block"},
		{[]string{dir, "--bs", "1000"}, 1, "multiple of 512"},
		{[]string{dir, "--bs", "eight"}, 2, "--bs"},
		{[]string{dir, "--size", "0"}, 2, "--size"},
		{[]string{dir, "--size", "1P"}, 1, "free"},
		{[]string{dir, "--steps", "1,0"}, 1, "0 readers"},
		{[]string{dir, "--steps", "1,2", "--rate", "100"}, 2, "one of them"},
		{[]string{dir, "--rate", "-5"}, 1, "rate"},
		{[]string{small, "--write"}, 1, "only read"},
		{[]string{"/dev/null"}, 1, "neither a directory"},
		{[]string{dir, "--format", "xml"}, 2, "--format"},
		{[]string{dir, "-o", filepath.Join(dir, "x.csv")}, 1, ".json or .txt"},
	} {
		r := run(t, "", append([]string{"iotest", "--duration", "1s"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("iotest %v: exit %d, stderr %q; want exit %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "latscope-iotest-*")); len(left) != 0 {
		t.Errorf("files written: %v", left)
	}
}

// TestIOTestInterruptKeepsTheMeasuredSteps sends Ctrl-C (SIGINT) in the
// second step: the report of the first step is printed, the scratch file
// is gone and the exit code says interrupted.
func TestIOTestInterruptKeepsTheMeasuredSteps(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binary, "iotest", dir, "--steps", "1,2", "--duration", "1s", "--warmup", "0s", "--size", "16M", "--format", "json")
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1600 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit after SIGINT: %v, want 130", err)
	}
	var rep ioReport
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil || len(rep.Steps) == 0 || !rep.Steps[0].Complete {
		t.Errorf("partial report %v: %s", err, out.String())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
}

// TestIOTestBlockDevice reads a loop device as root, and as an unprivileged
// user gets a clear permission error.
func TestIOTestBlockDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "loop devices need root")
	}
	backing := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(backing, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", backing).Output()
	if err != nil {
		testenv.SkipOrFail(t, "losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	defer exec.Command("losetup", "-d", dev).Run()
	rep, _ := runIOTest(t, dev, "--concurrency", "1", "--duration", "500ms", "--warmup", "0s")
	if rep.Kind != "block device" || rep.Steps[0].Ops == 0 || !strings.Contains(rep.Device.Class, "loop") {
		t.Errorf("%s: %+v", dev, rep)
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		testenv.SkipOrFail(t, "runuser not installed")
	}
	// The binary lives in a 0700 temporary directory: copy it where nobody
	// can run it.
	pub := filepath.Join(t.TempDir(), "latscope")
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(pub); d != "/" && d != "."; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			_ = os.Chmod(d, st.Mode().Perm()|0o011)
		}
	}
	cmd := exec.Command(runuser, "-u", "nobody", "--", pub, "iotest", dev, "--duration", "1s")
	msg, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(msg), "permission denied") {
		t.Errorf("as nobody: %v\n%s", err, msg)
	}
}

// TestIOTestLiveHeatMapInATerminal runs a sweep in a real terminal (tmux):
// the live heat map shows the current step in its title, and the report
// follows on the normal screen when the test ends.
func TestIOTestLiveHeatMapInATerminal(t *testing.T) {
	dir := t.TempDir()
	statusFile := filepath.Join(t.TempDir(), "status")
	waitFor := startTerminal(t, binary+" iotest "+dir+" --steps 1,2 --duration 2s --warmup 0s --size 16M --interval 250ms; echo $? > "+statusFile).waitFor
	waitFor("step 1 in the title", func(s string) bool { return strings.Contains(s, "step 1/2: 1 reader") })
	waitFor("step 2 in the title", func(s string) bool { return strings.Contains(s, "step 2/2: 2 readers") })
	final := waitFor("the report", func(s string) bool { return strings.Contains(s, "Latency modes") })
	if !strings.Contains(final, "concurrency") {
		t.Errorf("report table missing:\n%s", final)
	}
	waitFor("exit", func(string) bool {
		st, err := os.ReadFile(statusFile)
		return err == nil && strings.TrimSpace(string(st)) == "0"
	})
}
