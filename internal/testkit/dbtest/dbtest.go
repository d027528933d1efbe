// Package dbtest starts real database servers for tests: each in its own
// temporary directory, on a free loopback port, as an unprivileged user
// when the tests run as root (CI does; PostgreSQL and MariaDB refuse to
// run as root), torn down when the test ends. Servers missing on the
// machine make the test skip, or fail under LATSCOPE_REQUIRE_INTEGRATION=1
// (see testenv.SkipOrFail).
package dbtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// FreePort returns a loopback TCP port nobody listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Owner is the account a server runs as: the current user, or "nobody"
// when running as root.
type Owner struct {
	UID, GID int
	// Root says the tests run as root and commands are run as UID/GID
	// through setpriv.
	Root bool
}

// ServerOwner returns the account servers run as.
func ServerOwner(t testing.TB) Owner {
	t.Helper()
	if os.Geteuid() != 0 {
		return Owner{UID: os.Geteuid(), GID: os.Getegid()}
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("running as root and no user nobody to run servers as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return Owner{UID: uid, GID: gid, Root: true}
}

// Dir returns a new directory owned by o, removed when the test ends.
// Under root it is made outside the test's 0700 temporary directory, in a
// 0711 parent, so that o can reach it.
func (o Owner) Dir(t testing.TB, name string) string {
	t.Helper()
	parent, err := os.MkdirTemp("", "latscope-dbtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o711); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, o.UID, o.GID); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Command returns cmd to run as o (through setpriv when root).
func (o Owner) Command(name string, args ...string) *exec.Cmd {
	if !o.Root {
		return exec.Command(name, args...)
	}
	full := append([]string{"--reuid", strconv.Itoa(o.UID), "--regid", strconv.Itoa(o.GID), "--clear-groups", name}, args...)
	cmd := exec.Command("setpriv", full...)
	cmd.Env = append(os.Environ(), "HOME=/tmp")
	return cmd
}

// WaitForPort waits until something accepts connections on addr.
func WaitForPort(addr string, timeout time.Duration) error {
	return WaitForDial("tcp", addr, timeout)
}

// WaitForDial waits until something accepts connections on network addr
// ("tcp" or "unix").
func WaitForDial(network, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout(network, addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s: %w", addr, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Process is a started server and the outcome of its Wait.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // Wait's outcome, set before done closes
}

// StartProcess starts cmd and collects its exit.
func StartProcess(cmd *exec.Cmd) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// WaitReady calls ready every 50 ms until it succeeds, the process exits
// or timeout passes. A server's port opens before it serves: a query or a
// ping is what says it has started.
func (p *Process) WaitReady(timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("the server exited (%v): %w", p.err, err)
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %w", timeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Pid is the process id (setpriv execs the server, so it is the server's).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop sends sig (setpriv execs the server, so the signal reaches it) and
// waits up to limit, then kills it and fails the test with why. A nil
// process (never started, or stopped) is left alone.
func (p *Process) Stop(t testing.TB, sig os.Signal, limit time.Duration, why string) {
	t.Helper()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%s", why)
	}
}
