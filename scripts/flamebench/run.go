package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/benchkit"
)

// runTimeout bounds one child: a collapse of 90 MB takes well under ten
// seconds even on a busy machine.
const runTimeout = 2 * time.Minute

// usage is what one finished child cost.
type usage struct {
	Wall     time.Duration
	User     time.Duration
	Sys      time.Duration
	MaxRSSKB int64
}

// meter runs the measured children. Peak RSS comes from GNU time's %M
// when /usr/bin/time exists: the rusage Go's wait4 returns cannot be used
// for it, because Go starts children with vfork semantics (CLONE_VM) and
// Linux carries the parent's high-water RSS into the child at exec, so
// every child would show at least the harness's own peak RSS (32 MiB
// here). GNU time forks from a small process. CPU time comes from the
// rusage (time's own share is a millisecond).
type meter struct {
	time    string // /usr/bin/time, or "" (RSS then from rusage, a floor of the harness's)
	scratch string
}

func newMeter(scratch string) meter {
	return meter{time: executable("/usr/bin/time"), scratch: scratch}
}

// measure runs argv with its standard output going to the file stdoutPath
// (a file, not a pipe: nothing is read while timing) and returns its
// usage; a failure carries the end of its stderr.
func (m meter) measure(ctx context.Context, argv []string, stdoutPath string) (usage, error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	out, err := os.Create(stdoutPath)
	if err != nil {
		return usage{}, err
	}
	defer out.Close()
	full, rssFile := argv, ""
	if m.time != "" {
		rssFile = filepath.Join(m.scratch, "rss.txt")
		full = append([]string{m.time, "-f", "%M", "-o", rssFile}, argv...)
	}
	var errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	cmd.Stdout, cmd.Stderr = out, &errOut
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return usage{}, fmt.Errorf("%q: %v%s", argv, err, benchkit.Indent(benchkit.Tail(errOut.Bytes(), 10)))
	}
	u := childUsage(cmd.ProcessState)
	u.Wall = wall
	if rssFile != "" {
		b, err := os.ReadFile(rssFile)
		if err != nil {
			return u, fmt.Errorf("%s: %w", m.time, err)
		}
		if u.MaxRSSKB, err = parseTimeRSS(b); err != nil {
			return u, fmt.Errorf("%s -o %s: %w", m.time, rssFile, err)
		}
	}
	return u, nil
}

// parseTimeRSS reads GNU time's -f %M output: the peak RSS in KiB on the
// last line (earlier lines would be time's notes).
func parseTimeRSS(b []byte) (int64, error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	kb, err := strconv.ParseInt(last, 10, 64)
	if err != nil || kb < 0 {
		return 0, fmt.Errorf("peak RSS %q: not a number of KiB", last)
	}
	return kb, nil
}
