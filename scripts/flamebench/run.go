package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/latscope/latscope/scripts/benchkit"
)

// runTimeout bounds one child: a collapse of 90 MB takes well under ten
// seconds even on a busy machine.
const runTimeout = 2 * time.Minute

// measure runs argv with its standard output going to the file stdoutPath
// (a file, not a pipe: nothing is read while timing) and returns what it
// cost: wall and CPU time (rusage) and peak RSS (GNU time, see
// benchkit.WithPeakRSS). A failure carries the end of its stderr.
func measure(ctx context.Context, argv []string, stdoutPath string) (benchkit.Process, error) {
	out, err := os.Create(stdoutPath)
	if err != nil {
		return benchkit.Process{}, err
	}
	defer out.Close()
	p, err := benchkit.RunTo(ctx, argv, runTimeout, out)
	if err != nil {
		return p, fmt.Errorf("%q: %v%s", argv, err, benchkit.Indent(benchkit.Tail(p.Stderr, 10)))
	}
	return p, nil
}
