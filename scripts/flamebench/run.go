package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/latscope/latscope/scripts/benchkit"
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

// meter runs the measured children with their standard output in a file.
// Peak RSS comes from GNU time (benchkit.WithPeakRSS); CPU time from the
// rusage (time's own share is a millisecond).
type meter struct {
	scratch string
}

func newMeter(scratch string) meter { return meter{scratch: scratch} }

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
	full, rssFile := benchkit.WithPeakRSS(argv, filepath.Join(m.scratch, "rss.txt"))
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
		if u.MaxRSSKB, err = benchkit.ReadPeakRSS(rssFile); err != nil {
			return u, err
		}
	}
	return u, nil
}
