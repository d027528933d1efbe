//go:build !unix

package main

import (
	"os"
	"time"
)

// childCPU returns a finished child's user and system CPU time.
func childCPU(ps *os.ProcessState) (user, sys time.Duration, maxRSSKB int64) {
	return ps.UserTime(), ps.SystemTime(), 0
}
