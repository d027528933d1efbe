//go:build unix

package benchkit

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

type procSignal = syscall.Signal

const (
	interruptSignal = syscall.SIGINT
	terminateSignal = syscall.SIGTERM
)

// signalGroup signals the child's whole process group (the child and what
// it forked: qperf's server forks one process per test).
func signalGroup(cmd *exec.Cmd, sig procSignal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig) // ESRCH: the group is gone
	}
}

func killGroup(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGKILL) }

// childCPU returns a finished child's user and system CPU time and peak
// RSS from the rusage wait4 returned: the whole process, every thread.
func childCPU(ps *os.ProcessState) (user, sys time.Duration, maxRSSKB int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime(), ps.SystemTime(), 0
	}
	maxRSSKB = int64(ru.Maxrss)
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		maxRSSKB /= 1024 // bytes there, KiB elsewhere
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), maxRSSKB
}
