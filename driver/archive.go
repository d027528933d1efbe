package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/stream"
)

// maintainEvery is how often a live `record --archive` downsamples and
// applies retention.
const maintainEvery = time.Minute

// archiveBatch is how many intervals of a finished source go in one
// transaction; live intervals are committed one by one, so that a crash
// loses at most the interval being written.
const archiveBatch = 1024

// recordArchive appends the sources' stream to the embedded archive.
func recordArchive(ctx context.Context, rc RecordConfig) error {
	o, err := rc.open(ctx)
	if err != nil {
		return err
	}
	a, err := archive.Open(rc.Archive, archive.Options{})
	if err != nil {
		return err
	}
	out := &archiveOut{a: a, live: o.live, lastMaintain: time.Now()}
	// Writes go on after the sources stop (Ctrl-C, --duration): the
	// archive's own context is not the run's.
	werr := rc.forEach(ctx, o, func(iv stream.Interval) error { return out.write(context.WithoutCancel(ctx), iv) })
	err = out.close(context.WithoutCancel(ctx))
	if werr != nil {
		err = werr
	}
	o.finish(rc.Stderr)
	if err == nil {
		fmt.Fprintf(rc.Stderr, "latscope: archived %d intervals to %s\n", out.count, a.Path())
	}
	return err
}

// archiveOut writes intervals to an archive: live ones one per
// transaction, with maintenance every minute; finished ones in batches.
type archiveOut struct {
	a            *archive.Archive
	live         bool
	batch        []stream.Interval
	count        int
	lastMaintain time.Time
}

func (o *archiveOut) write(ctx context.Context, iv stream.Interval) error {
	o.count++
	if !o.live {
		o.batch = append(o.batch, iv)
		if len(o.batch) < archiveBatch {
			return nil
		}
		return o.flush(ctx)
	}
	if err := o.a.Write(ctx, iv); err != nil {
		return err
	}
	if now := time.Now(); now.Sub(o.lastMaintain) >= maintainEvery {
		o.lastMaintain = now
		return o.a.Maintain(ctx, now)
	}
	return nil
}

func (o *archiveOut) flush(ctx context.Context) error {
	err := o.a.WriteBatch(ctx, o.batch)
	o.batch = o.batch[:0]
	return err
}

// close writes what is pending, maintains a live archive (retention
// counts from now, so a finished file's old data is kept until a live
// run maintains the archive) and closes it.
func (o *archiveOut) close(ctx context.Context) error {
	var err error
	if len(o.batch) > 0 {
		err = o.flush(ctx)
	}
	if err == nil && o.live {
		err = o.a.Maintain(ctx, time.Now())
	}
	if cerr := o.a.Close(); err == nil {
		err = cerr
	}
	return err
}

// CheckSeriesPattern reports a malformed --series glob.
func CheckSeriesPattern(pattern string) error { return archive.CheckPattern(pattern) }
