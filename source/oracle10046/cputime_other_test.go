//go:build !unix

package oracle10046

import "time"

func cpuTime() time.Duration { return 0 }
