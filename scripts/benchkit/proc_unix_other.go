//go:build unix && !linux

package benchkit

import "syscall"

// childAttr puts a child in its own process group (see proc_linux.go).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Listening reports whether something accepts TCP connections on port of
// the loopback address.
func Listening(port int) bool { return dialListening(port) }
