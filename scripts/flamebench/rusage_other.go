//go:build !unix

package main

import "os"

// childUsage: CPU and RSS are unknown where there is no rusage.
func childUsage(ps *os.ProcessState) usage {
	return usage{User: ps.UserTime(), Sys: ps.SystemTime()}
}
