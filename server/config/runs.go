package config

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Runs limits the on-demand runs (iotest, nettest, flame, report) that
// operators start through the API.
type Runs struct {
	// MaxConcurrent runs at once; more wait in a queue (0: 2).
	MaxConcurrent int `yaml:"max_concurrent"`
	// IOTestDirs are the directories (and their subdirectories) where an
	// iotest run may create its scratch file; none: only DATA/runs/scratch.
	IOTestDirs []string `yaml:"iotest_dirs"`
	// NetTestTargets are the HOST:PORT a nettest run may measure; none:
	// only loopback addresses.
	NetTestTargets []string `yaml:"nettest_targets"`
	// Keep is how long ended runs and their outputs are kept: a Go
	// duration or days, "30d" (empty: 30 days).
	Keep string `yaml:"keep"`

	// KeepFor is Keep parsed (0: the default).
	KeepFor time.Duration `yaml:"-"`
}

func (r *Runs) check() error {
	if r.MaxConcurrent < 0 || r.MaxConcurrent > 64 {
		return fmt.Errorf("max_concurrent %d: want 1 to 64", r.MaxConcurrent)
	}
	for _, d := range r.IOTestDirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("iotest_dirs: %q: want an absolute path", d)
		}
	}
	for _, t := range r.NetTestTargets {
		if host, _, err := net.SplitHostPort(t); err != nil || host == "" {
			return fmt.Errorf("nettest_targets: %q: want HOST:PORT", t)
		}
	}
	if r.Keep == "" {
		return nil
	}
	d, err := parseDays(r.Keep)
	if err != nil || d <= 0 {
		return fmt.Errorf("keep %q: want a positive duration such as 30d or 72h", r.Keep)
	}
	r.KeepFor = d
	return nil
}

// parseDays reads "30d" as 30 days, anything else as a Go duration.
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days > 100000 {
			return 0, fmt.Errorf("days %q", n)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}
