//go:build !unix

package runs

import (
	"os"
	"syscall"
)

// Without process groups, cancel ends the child alone.
func childAttr() *syscall.SysProcAttr { return nil }

func signalGroup(pid int, kill bool) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func processExists(pid int) bool {
	_, err := os.FindProcess(pid)
	return err == nil
}
