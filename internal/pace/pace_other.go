//go:build !linux

package pace

import (
	"runtime"
	"time"
)

func lockThread() { runtime.LockOSThread() }

func sleep(d time.Duration) { time.Sleep(d) }

// ProcessCPU is unknown outside Linux: 0.
func ProcessCPU() time.Duration { return 0 }

// AllowedCPUs is unknown outside Linux: nil.
func AllowedCPUs() []int { return nil }
