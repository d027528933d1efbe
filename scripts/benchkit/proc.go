package benchkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Process is what a finished child left: its output, its CPU time from
// the rusage wait4 returned (the whole process, every thread) and its peak
// memory from GNU time (see WithPeakRSS), the same method for every tool
// measured.
type Process struct {
	Stdout, Stderr []byte
	Wall           time.Duration
	User, Sys      time.Duration
	MaxRSSKB       int64
	// ExitCode is -1 when the child was ended by a signal; State says how
	// it ended ("exit status 1", "signal: terminated").
	ExitCode int
	State    string
}

// CPU is user plus system time.
func (p Process) CPU() time.Duration { return p.User + p.Sys }

// stopGrace is how long a child has to exit after SIGINT or SIGTERM
// before its process group is killed.
const stopGrace = 5 * time.Second

// Run runs argv to completion within timeout, in its own process group.
// Cancelling ctx (Ctrl-C) interrupts the group as a terminal would and
// kills it if it lingers; whatever the child forked is killed when it ends.
func Run(ctx context.Context, argv []string, timeout time.Duration) (Process, error) {
	return RunTo(ctx, argv, timeout, nil)
}

// RunTo is Run with the child's standard output going to the file stdout
// (nothing read while it runs) instead of Process.Stdout; nil keeps it
// there.
func RunTo(ctx context.Context, argv []string, timeout time.Duration, stdout *os.File) (Process, error) {
	if len(argv) == 0 {
		return Process{}, errors.New("empty command")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rss, err := os.CreateTemp("", "benchkit-rss-")
	if err != nil {
		return Process{}, err
	}
	rss.Close()
	defer os.Remove(rss.Name())
	argv, rssFile := WithPeakRSS(argv, rss.Name())
	var captured, stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &captured, &stderr
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.SysProcAttr = childAttr()
	cmd.WaitDelay = stopGrace
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Process{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = stopGroup(cmd, done, interruptSignal)
	}
	killGroup(cmd) // anything the child forked and left behind
	p := finished(cmd, start, captured.Bytes(), stderr.Bytes())
	if rssFile != "" {
		if kb, rerr := ReadPeakRSS(rssFile); rerr == nil {
			p.MaxRSSKB = kb
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return p, fmt.Errorf("still running after %s: killed", timeout)
	case ctx.Err() != nil:
		return p, fmt.Errorf("interrupted: %w", context.Cause(ctx))
	case err != nil:
		return p, err
	}
	return p, nil
}

// stopGroup sends sig to the child's process group, waits for the child up
// to stopGrace, then kills the group and waits again.
func stopGroup(cmd *exec.Cmd, done <-chan error, sig procSignal) error {
	signalGroup(cmd, sig)
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		killGroup(cmd)
		return <-done
	}
}

func finished(cmd *exec.Cmd, start time.Time, stdout, stderr []byte) Process {
	p := Process{Stdout: stdout, Stderr: stderr, Wall: time.Since(start), ExitCode: -1}
	if ps := cmd.ProcessState; ps != nil {
		p.User, p.Sys, p.MaxRSSKB = childCPU(ps)
		p.ExitCode, p.State = ps.ExitCode(), ps.String()
	}
	return p
}

// Server is a child that runs in the background, in its own process group,
// until Stop: a network peer's server.
type Server struct {
	cmd   *exec.Cmd
	start time.Time
	out   syncBuffer
	done  chan struct{}
	err   error // cmd.Wait's, valid once done is closed
	once  sync.Once
	proc  Process
	// grace is how long Stop waits after SIGTERM (stopGrace; tests
	// shorten it).
	grace time.Duration
}

// StartServer starts argv in the background; stdout and stderr are kept
// together. The caller must Stop it (defer s.Stop()).
func StartServer(argv []string) (*Server, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	s := &Server{done: make(chan struct{}), grace: stopGrace}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	s.cmd.SysProcAttr = childAttr()
	s.cmd.WaitDelay = stopGrace
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// Output is what the server printed so far.
func (s *Server) Output() []byte { return s.out.Bytes() }

// Exited reports whether the server has ended (on its own or stopped).
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// WaitListening waits until something listens on TCP port (the server
// started up), failing when the server exits first or timeout passes.
func (s *Server) WaitListening(ctx context.Context, port int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if Listening(port) {
			return nil
		}
		if s.Exited() {
			return fmt.Errorf("server exited before listening on port %d (%v)%s", port, s.err, Indent(Tail(s.Output(), 10)))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server not listening on port %d after %s%s", port, timeout, Indent(Tail(s.Output(), 10)))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Stop ends the server: SIGTERM to its process group, SIGKILL after a
// grace period, then whatever it forked. It returns the server's output
// and rusage; calling it again returns the same.
func (s *Server) Stop() Process {
	s.once.Do(func() {
		if !s.Exited() {
			signalGroup(s.cmd, terminateSignal)
			t := time.NewTimer(s.grace)
			select {
			case <-s.done:
			case <-t.C:
				killGroup(s.cmd)
				<-s.done
			}
			t.Stop()
		}
		killGroup(s.cmd)
		s.proc = finished(s.cmd, s.start, s.out.Bytes(), nil)
	})
	return s.proc
}

// FreePort returns a TCP port free on the loopback address now. Another
// program may take it before the server binds it; WaitListening then sees
// the server fail (or a stranger listen, which the test's own checks
// catch), and the caller may retry.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer is a bytes.Buffer safe to read while the child writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// A server that logs without end must not fill the memory.
	const limit = 1 << 20
	if b.b.Len() > limit {
		return len(p), nil
	}
	return b.b.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// dialListening probes port with a connection, where the kernel's socket
// table cannot be read.
func dialListening(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(port)), 100*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
