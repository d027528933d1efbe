//go:build unix

package main

import (
	"os"
	"syscall"
	"time"
)

// childCPU returns a finished child's user and system CPU time and peak
// RSS from the rusage wait4 returned: the whole process, every thread.
func childCPU(ps *os.ProcessState) (user, sys time.Duration, maxRSSKB int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime(), ps.SystemTime(), 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), int64(ru.Maxrss) // KB on Linux
}
