package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/pcptest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// pcpArchive returns the base name of a committed PCP archive.
func pcpArchive(t *testing.T, name string) string {
	t.Helper()
	return strings.TrimSuffix(testenv.DataFile(t, "pcp/"+name+".meta"), ".meta")
}

// TestPCPArchiveCLI reads the committed PCP archives as docs/host.md
// shows: any file of the archive or its base name, the same figures; the
// host: source name; --from/--until; a damaged volume named with its offset.
func TestPCPArchiveCLI(t *testing.T) {
	base := pcpArchive(t, "host-v3")
	whole := readHostReport(t, base, "--event", "disk.%util", "--event", "cpu.%user", "--event", "mem.kbmemused")
	util, q, ok := whole.valueOf("disk.%util", "vda")
	if !ok || q != "percent" || util <= 0 || util > 100 {
		t.Fatalf("disk.%%util @vda = %v %q (%v)", util, q, ok)
	}
	if src := whole.Means[0].Sources[0]; src != "host:vm" {
		t.Errorf("source %q, want host:vm", src)
	}
	for _, p := range []string{base + ".meta", base + ".0", base + ".index"} {
		again := readHostReport(t, p, "--event", "disk.%util")
		if v, _, _ := again.valueOf("disk.%util", "vda"); v != util {
			t.Errorf("%s: disk.%%util %v, %s gave %v", filepath.Base(p), v, filepath.Base(base), util)
		}
	}
	forced := readHostReport(t, base, "--input-format", "pcp", "--event", "disk.%util")
	if v, _, _ := forced.valueOf("disk.%util", "vda"); v != util {
		t.Errorf("--input-format pcp: %v, detected %v", v, util)
	}
	window := readHostReport(t, pcpArchive(t, "host-v2"), "--tz", "UTC", "--from", "2026-11-26 05:28:20", "--until", "2026-11-26 05:28:30", "--event", "cpu.%user")
	if _, _, ok := window.valueOf("cpu.%user", "all"); !ok {
		t.Errorf("no cpu.%%user in the 10 s --from/--until window")
	}

	dir := t.TempDir()
	for _, suffix := range []string{".meta", ".index", ".0", ".1", ".2"} {
		data, err := os.ReadFile(base + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == ".1" {
			data = data[:len(data)/2]
		}
		if err := os.WriteFile(filepath.Join(dir, "cut"+suffix), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, "", "report", filepath.Join(dir, "cut"), "--event", "load.1")
	if r.code != 0 || !strings.Contains(r.stderr, "cut.1: offset ") || !strings.Contains(r.stderr, "truncated record") || !strings.Contains(r.stdout, "load.1") {
		t.Errorf("a truncated volume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestHostCPUBesidePCP measures what recording the host costs: latscope
// recording host: at 1 s, and a pmcd with pmlogger recording the same
// metrics at 1 s, over the same seconds (60 with LATSCOPE_PCP_SECONDS
// unset). make bench runs it (LATSCOPE_PCPBENCH=1); the bound is
// 0.5 % of one core for latscope.
func TestHostCPUBesidePCP(t *testing.T) {
	if os.Getenv("LATSCOPE_PCPBENCH") != "1" {
		t.Skip("a benchmark: LATSCOPE_PCPBENCH=1 (make bench) runs it")
	}
	seconds := 60
	if s, err := strconv.Atoi(os.Getenv("LATSCOPE_PCP_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	config, err := os.ReadFile(testenv.DataFile(t, "pcp/pmlogger.conf"))
	if err != nil {
		t.Fatal(err)
	}
	pmcd := pcptest.StartPMCD(t)
	dir := t.TempDir()
	pmcdBefore := pmcd.CPU(t)
	logger := pmcd.StartLogger(t, dir, "bench", string(config), 3, seconds)
	ls := exec.Command(binary, "record", "host:", "--interval", "1s", "--duration", strconv.Itoa(seconds)+"s", "-o", filepath.Join(dir, "host.lsr"))
	start := time.Now()
	if out, err := ls.CombinedOutput(); err != nil {
		t.Fatalf("latscope record host:: %v\n%s", err, out)
	}
	logger.Wait(t, time.Duration(seconds)*time.Second+time.Minute)
	elapsed := time.Since(start)
	pmcdCPU := pmcd.CPU(t) - pmcdBefore
	lsCPU := ls.ProcessState.UserTime() + ls.ProcessState.SystemTime()
	pct := func(d time.Duration) float64 { return 100 * d.Seconds() / elapsed.Seconds() }
	t.Logf("pcp-bench: %d s at 1 s: latscope record host: %v CPU (%.2f %% of one core, start-up included); pmcd %v + pmlogger %v = %.2f %% of one core",
		seconds, lsCPU, pct(lsCPU), pmcdCPU, logger.CPU(), pct(pmcdCPU+logger.CPU()))
	if pct(lsCPU) > 0.5 {
		t.Errorf("latscope used %.2f %% of one core recording host: at 1 s, over the issue's 0.5 %%", pct(lsCPU))
	}
}
