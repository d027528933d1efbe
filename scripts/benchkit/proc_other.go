//go:build !unix

package benchkit

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

type procSignal = os.Signal

var (
	interruptSignal procSignal = os.Interrupt
	terminateSignal procSignal = os.Kill
)

func childAttr() *syscall.SysProcAttr { return nil }

// signalGroup can only reach the child itself here.
func signalGroup(cmd *exec.Cmd, sig procSignal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func childCPU(ps *os.ProcessState) (user, sys time.Duration, maxRSSKB int64) {
	return ps.UserTime(), ps.SystemTime(), 0
}

// Listening reports whether something accepts TCP connections on port of
// the loopback address.
func Listening(port int) bool { return dialListening(port) }
