//go:build linux

package pace

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// lockThread pins the goroutine to its thread and sets the thread's timer
// slack to 1 ns (the default 50 µs lets the kernel wake it that late).
func lockThread() {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
}

// sleep sleeps d with nanosleep on the locked thread.
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// ProcessCPU returns the user and system CPU time the process has used.
func ProcessCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// AllowedCPUs lists the CPUs the process may run on (its affinity mask, as
// set by taskset or a cgroup cpuset); nil when unknown.
func AllowedCPUs() []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	var cpus []int
	for i := range 1024 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}
