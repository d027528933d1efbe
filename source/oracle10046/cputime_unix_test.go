//go:build unix

package oracle10046

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) this process has used, so
// benchmarks can report throughput per CPU second on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
