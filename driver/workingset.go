package driver

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/analysis/workingset"
	"github.com/latscope/latscope/stream"
)

// WorkingSetConfig is what `latscope workingset` runs.
type WorkingSetConfig struct {
	Config
	// Format is table, csv or json (stdout); Output writes by extension:
	// .json, .csv, else a table.
	Format string
	Output string
	// Split divides read calls into cache-like and media-like: 0 takes the
	// valley between the latency modes, NoClasses none.
	Split     time.Duration
	NoClasses bool
	Counter   workingset.Options
}

// WorkingSet counts the block-read working set of the sources' block reads
// (10046 WAIT lines, the Oracle wait-history samplers) and writes it.
func WorkingSet(ctx context.Context, wc WorkingSetConfig) error {
	counter := workingset.NewCounter(wc.Counter)
	var mu sync.Mutex // sources run concurrently
	c := wc.Config
	c.Read.BlockReads = func(r stream.BlockRead) {
		mu.Lock()
		counter.Add(r)
		mu.Unlock()
	}
	o, err := c.open(ctx)
	if err != nil {
		return err
	}
	err = c.run(ctx, o, func(stream.Interval) error { return nil })
	o.finish(c.Stderr)
	if err != nil {
		return fmt.Errorf("reading %s: %w", strings.Join(wc.Sources, ", "), err)
	}
	split := wc.Split
	if split == 0 && !wc.NoClasses {
		split, _ = counter.SuggestSplit()
	}
	if wc.NoClasses {
		split = 0
	}
	r := counter.Result(split)
	if r.Total.ReadCalls == 0 {
		return fmt.Errorf("%s: no block read with an address (db file sequential read, db file scattered read, direct path read [temp]): "+
			"a 10046 trace with waits, or an oracle:// wait-history sampler, has them", strings.Join(wc.Sources, ", "))
	}
	if r.Skipped > 0 {
		fmt.Fprintf(c.Stderr, "latscope: %d block read(s) with an impossible address left out\n", r.Skipped)
	}
	return writeOutput(wc.Output, c.Stdout, wc.Format, func(w *bufio.Writer, format string) error {
		return workingset.Write(w, r, format)
	})
}
