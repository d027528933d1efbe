// Package pcptest runs Performance Co-Pilot for tests: a pmcd of its own
// (only the pmcd and linux PMDAs, loaded as DSOs) on a free loopback port
// in a temporary directory, as an unprivileged user when the tests run as
// root; pmlogger recording archives from it; pmrep reading them. Nothing
// relies on a system pmcd service. Missing PCP makes a test skip, or fail
// under LATSCOPE_REQUIRE_INTEGRATION=1 (testenv.SkipOrFail).
package pcptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/dbtest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// Where Debian's pcp and python3-pcp put the tools.
const (
	pmcdPath    = "/usr/lib/pcp/bin/pmcd"
	pmdaDir     = "/var/lib/pcp/pmdas"
	pmnsRoot    = "/var/lib/pcp/pmns/root"
	pmrepScript = "/usr/bin/pmrep"
	// pmrep runs on pmpython, which takes the first python3 on PATH; the
	// system's has the pcp module.
	systemPython = "/usr/bin/python3"
)

// need skips (or fails) the test unless every path exists.
func need(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			testenv.SkipOrFail(t, "PCP is not installed (%s missing: apt-get install pcp python3-pcp, then /var/lib/pcp/pmns/Rebuild -du)", p)
		}
	}
}

// Pmrep runs pmrep with args and returns its standard output.
func Pmrep(t testing.TB, args ...string) string {
	t.Helper()
	need(t, pmrepScript, systemPython)
	cmd := exec.Command(systemPython, append([]string{pmrepScript}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pmrep %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// PMCD is a running pmcd.
type PMCD struct {
	// Host is what clients connect to: localhost:PORT.
	Host string
	Dir  string
	pid  int
}

// CPU returns the CPU time pmcd has used so far (user and system, from
// /proc; its PMDAs run inside it as DSOs).
func (p *PMCD) CPU(t testing.TB) time.Duration {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		t.Fatalf("pmcd's CPU time: %v", err)
	}
	// Fields after the parenthesised command: state is field 3, utime 14,
	// stime 15, in clock ticks (100 per second on Linux).
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 13 {
		t.Fatalf("pmcd's /proc stat: %q", data)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// StartPMCD starts a pmcd with the linux PMDA on a free loopback port and
// stops it when the test ends.
func StartPMCD(t testing.TB) *PMCD {
	t.Helper()
	linux := filepath.Join(pmdaDir, "linux", "pmda_linux.so")
	pmcdDSO := filepath.Join(pmdaDir, "pmcd", "pmda_pmcd.so")
	need(t, pmcdPath, linux, pmcdDSO, pmnsRoot)
	owner := dbtest.ServerOwner(t)
	dir := owner.Dir(t, "pmcd")
	conf := filepath.Join(dir, "pmcd.conf")
	config := fmt.Sprintf("pmcd\t2\tdso\tpmcd_init\t%s\nlinux\t60\tdso\tlinux_init\t%s\n", pmcdDSO, linux)
	if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	port := dbtest.FreePort(t)
	user := "nobody"
	if !owner.Root {
		if u := os.Getenv("USER"); u != "" {
			user = u
		}
	}
	cmd := owner.Command(pmcdPath, "-f", "-A", "-p", strconv.Itoa(port), "-i", "127.0.0.1",
		"-s", filepath.Join(dir, "pmcd.socket"), "-c", conf, "-l", filepath.Join(dir, "pmcd.log"),
		"-x", filepath.Join(dir, "pmcd.fatal"), "-U", user)
	cmd.Env = append(os.Environ(), "PCP_RUN_DIR="+dir, "HOME=/tmp")
	proc, err := dbtest.StartProcess(cmd)
	if err != nil {
		t.Fatalf("starting pmcd: %v", err)
	}
	p := &PMCD{Host: "localhost:" + strconv.Itoa(port), Dir: dir, pid: proc.Pid()}
	t.Cleanup(func() { proc.Stop(t, syscall.SIGTERM, 10*time.Second, "pmcd did not stop within 10 s of SIGTERM") })
	if err := dbtest.WaitForPort("127.0.0.1:"+strconv.Itoa(port), 20*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "pmcd.log"))
		t.Fatalf("pmcd did not start: %v\n%s", err, log)
	}
	return p
}

// Logger is a running pmlogger.
type Logger struct {
	// Base is the archive's base name (BASE.meta, BASE.0, ...).
	Base string
	cmd  *exec.Cmd
	done chan error
	log  string
}

// StartLogger starts pmlogger recording config's metrics from p into
// dir/name as archive version (2 or 3) for samples records, with extra
// pmlogger arguments (e.g. "-v", "20" for a new volume every 20 records).
func (p *PMCD) StartLogger(t testing.TB, dir, name, config string, version, samples int, extra ...string) *Logger {
	t.Helper()
	conf := filepath.Join(dir, name+".config")
	if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, name)
	l := &Logger{Base: base, log: base + ".log", done: make(chan error, 1)}
	args := append([]string{"-h", p.Host, "-c", conf, "-V", strconv.Itoa(version), "-s", strconv.Itoa(samples), "-t", "1", "-l", l.log}, extra...)
	l.cmd = exec.Command("pmlogger", append(args, base)...)
	run := filepath.Join(dir, name+".run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	l.cmd.Env = append(os.Environ(), "PCP_RUN_DIR="+run)
	if err := l.cmd.Start(); err != nil {
		testenv.SkipOrFail(t, "pmlogger: %v", err)
	}
	go func() { l.done <- l.cmd.Wait() }()
	t.Cleanup(func() {
		_ = l.cmd.Process.Kill()
		<-l.done
		l.done <- nil
	})
	return l
}

// Kill stops pmlogger now and waits for it to exit (its archive ends
// where it was, maybe inside a record).
func (l *Logger) Kill() {
	_ = l.cmd.Process.Kill()
	err := <-l.done
	l.done <- err
}

// CPU returns the CPU time pmlogger used (after Wait).
func (l *Logger) CPU() time.Duration {
	if l.cmd.ProcessState == nil {
		return 0
	}
	return l.cmd.ProcessState.UserTime() + l.cmd.ProcessState.SystemTime()
}

// Wait waits until pmlogger has written its samples and exited.
func (l *Logger) Wait(t testing.TB, limit time.Duration) {
	t.Helper()
	select {
	case err := <-l.done:
		l.done <- err
		if err != nil {
			log, _ := os.ReadFile(l.log)
			t.Fatalf("pmlogger %s: %v\n%s", l.Base, err, log)
		}
	case <-time.After(limit):
		log, _ := os.ReadFile(l.log)
		t.Fatalf("pmlogger %s did not finish within %s\n%s", l.Base, limit, log)
	}
}
