//go:build unix

package runs

import (
	"errors"
	"syscall"
)

// signalGroup sends SIGTERM, or SIGKILL if kill, to the process group
// led by pid.
func signalGroup(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pid, sig) // ESRCH: the group is gone already
}

// processExists reports whether pid is a process (of anyone).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
