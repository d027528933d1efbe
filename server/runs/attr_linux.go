package runs

import "syscall"

// childAttr puts a child in its own process group, so that cancel reaches
// what it starts (perf record), and sends it SIGTERM if the server dies
// without cleaning up (kill -9), so it removes its scratch files and ends.
// (Pdeathsig follows the OS thread that started the child; Go's runtime
// does not end idle threads.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
