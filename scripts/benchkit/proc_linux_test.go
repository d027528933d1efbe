//go:build linux

package benchkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a server or a busy child.
const helperEnv = "BENCHKIT_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

// helper is the child: "listen PORT" (SIGTERM ends it), "stubborn PORT"
// (ignores SIGTERM) or "spin DURATION" (burns CPU).
func helper(mode string) int {
	f := strings.Fields(mode)
	if len(f) != 2 {
		return 2
	}
	switch f[0] {
	case "spin":
		d, _ := time.ParseDuration(f[1])
		for end := time.Now().Add(d); time.Now().Before(end); {
		}
		return 0
	case "listen", "stubborn":
		if f[0] == "stubborn" {
			signal.Ignore(syscall.SIGTERM)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+f[1])
		if err != nil {
			fmt.Println(err)
			return 1
		}
		defer l.Close()
		fmt.Println("helper listening")
		select {}
	}
	return 2
}

// self runs the test binary as a helper, behind a shell that first forks
// a long sleep (as qperf's server forks per test) and prints its pid.
func self(t *testing.T, mode string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(helperEnv, mode)
	return []string{"sh", "-c", `sleep 60 >/dev/null 2>&1 & echo "forked=$!"; exec "$0"`, exe}
}

var forkedPID = regexp.MustCompile(`forked=(\d+)`)

// gone waits until pid has ended (reaped by init, or a zombie).
func gone(t *testing.T, out []byte) {
	t.Helper()
	m := forkedPID.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no forked pid in %q", out)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("the forked process %d outlived its server", pid)
}

func TestServerStops(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartServer(self(t, "listen "+strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.WaitListening(t.Context(), port, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if s.Exited() || !Listening(port) {
		t.Fatal("server not running")
	}
	start := time.Now()
	p := s.Stop()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("SIGTERM took %s", d)
	}
	if !s.Exited() || p.ExitCode != -1 || !strings.Contains(string(p.Stdout), "helper listening") {
		t.Errorf("stopped server: exited %v, %+v", s.Exited(), p)
	}
	if Listening(port) {
		t.Errorf("port %d still listening", port)
	}
	gone(t, p.Stdout)
	if again := s.Stop(); again.Wall != p.Wall {
		t.Error("a second Stop differs")
	}
}

// A server that ignores SIGTERM is killed after the grace period.
func TestServerKilledAfterGrace(t *testing.T) {
	port, _ := FreePort()
	s, err := StartServer(self(t, "stubborn "+strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	s.grace = 200 * time.Millisecond
	if err := s.WaitListening(t.Context(), port, 10*time.Second); err != nil {
		s.Stop()
		t.Fatal(err)
	}
	start := time.Now()
	p := s.Stop()
	if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
		t.Errorf("Stop took %s", d)
	}
	if Listening(port) {
		t.Errorf("port %d still listening", port)
	}
	gone(t, p.Stdout)
}

func TestWaitListeningFails(t *testing.T) {
	port, _ := FreePort()
	s, err := StartServer([]string{"sh", "-c", "echo 'cannot bind: boom' >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.WaitListening(t.Context(), port, 10*time.Second); err == nil || !strings.Contains(err.Error(), "boom") ||
		!strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("err %v", err)
	}

	s, err = StartServer([]string{"sleep", "30"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.WaitListening(t.Context(), port, 100*time.Millisecond); err == nil || !strings.Contains(err.Error(), "not listening") {
		t.Errorf("err %v", err)
	}
}

func TestRun(t *testing.T) {
	// The rusage is the child's own CPU.
	exe, _ := os.Executable()
	t.Setenv(helperEnv, "spin 300ms")
	p, err := Run(t.Context(), []string{exe}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// A 300 ms spin on a shared 2-core machine may get only part of a core:
	// the CPU time must be counted, not be a full 300 ms.
	if p.CPU() < 50*time.Millisecond || p.ExitCode != 0 || p.Wall < 300*time.Millisecond {
		t.Errorf("%+v", p)
	}

	// What the child forked is killed when it ends.
	p, err = Run(t.Context(), []string{"sh", "-c", `sleep 60 >/dev/null 2>&1 & echo "forked=$!"`}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	gone(t, p.Stdout)

	p, err = Run(t.Context(), []string{"sh", "-c", "echo out; echo err >&2; exit 4"}, time.Minute)
	if err == nil || p.ExitCode != 4 || string(p.Stdout) != "out\n" || string(p.Stderr) != "err\n" {
		t.Errorf("exit 4: %v %+v", err, p)
	}
	if _, err := Run(t.Context(), []string{"/nonexistent/tool"}, time.Minute); err == nil {
		t.Error("a missing tool ran")
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := Run(ctx, []string{"sleep", "30"}, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("err %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
	_, err = Run(t.Context(), []string{"sleep", "30"}, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "still running after 100ms") {
		t.Errorf("err %v", err)
	}
}

func TestListening(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if !Listening(port) {
		t.Errorf("port %d not seen listening", port)
	}
	// An established connection's local port is not a listener.
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l.Close()
	if Listening(port) {
		t.Errorf("port %d still seen listening", port)
	}
	if local := c.LocalAddr().(*net.TCPAddr).Port; Listening(local) {
		t.Errorf("client port %d seen listening", local)
	}
}
