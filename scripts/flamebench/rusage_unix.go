//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// childUsage reads a finished child's CPU time and peak RSS.
func childUsage(ps *os.ProcessState) usage {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return usage{}
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		rss /= 1024 // bytes there, KiB elsewhere
	}
	return usage{
		User:     time.Duration(ru.Utime.Nano()),
		Sys:      time.Duration(ru.Stime.Nano()),
		MaxRSSKB: rss,
	}
}
