//go:build unix && !linux

package runs

import "syscall"

// childAttr puts a child in its own process group, so that cancel reaches
// what it starts.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
