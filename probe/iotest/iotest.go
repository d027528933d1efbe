// Package iotest is latscope's demo source iotest:DIR: it measures the read
// latency of the storage under DIR with random block-aligned O_DIRECT reads of
// a scratch file, so that `latscope heatmap iotest:DIR` shows a real latency
// heat map on any Linux machine without a database.
//
// The test controls what a storage test must control: the page cache is
// bypassed with O_DIRECT (or, where the filesystem refuses it, dropped with
// posix_fadvise and the series is labelled "(page cache)"), the file holds
// random bytes so no layer can compress or dedupe it, every block is written
// so no sparse hole is read, the queue depth is the number of readers, and
// the result is a per-interval histogram, never only a mean. Caches below
// the filesystem (a VM host's page cache, a controller's or an SSD's DRAM)
// can still serve part of a small file: use a larger Config.FileSize to see
// past them.
package iotest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/bytesize"
	"github.com/latscope/latscope/stream"
)

// Defaults of Config.
const (
	DefaultFileSize  = 256 << 20
	DefaultBlockSize = 8 << 10
	DefaultReaders   = 4
	DefaultInterval  = time.Second
	// DefaultWorkers is the open-loop worker pool: the most I/Os in flight.
	DefaultWorkers = 64
	// maxBlockSize bounds --bs: larger reads are not a latency test.
	maxBlockSize = 64 << 20
	// maxIODepth bounds --iodepth: deeper queues are a throughput test.
	maxIODepth = 1024
)

// Engines of Config.Engine.
const (
	EnginePsync   = "psync"
	EngineIOUring = "io_uring"
)

// sectorSize is the granularity O_DIRECT needs for sizes and offsets on
// every Linux block device (4096 on 4Kn devices, where smaller block sizes
// are refused and the probe falls back to the page cache).
const sectorSize = 512

// Config describes one storage latency test.
type Config struct {
	// Path is what is read: a directory (a scratch file is created in it
	// and removed afterwards), an existing regular file or a block device
	// (both only read). "" means ".".
	Path string
	// Size is the scratch file's size in bytes (default 256 MiB), split
	// among the files with FilePerReader; for an existing file or device it
	// limits the reads to its first Size bytes (0: all of it). It is
	// rounded down to whole blocks.
	Size int64
	// BlockSize is the size of each read in bytes (default 8 KiB, the usual
	// database block), a multiple of 512.
	BlockSize int
	// Steps are the closed-loop load levels: the number of concurrent
	// readers of each step, run in order (default one step of 4).
	Steps []int
	// Engine is how a reader issues its I/Os: EnginePsync (default), one
	// pread/pwrite at a time, or EngineIOUring, IODepth I/Os kept in
	// flight on the reader's own io_uring.
	Engine string
	// IODepths are the I/Os each io_uring reader keeps in flight, one step
	// per depth (default 1); only one of Steps and IODepths may list
	// several values. psync's depth is always 1.
	IODepths []int
	// Rates, when set, makes the test an open loop: each step issues I/Os
	// at this many per second with Poisson arrivals, and latency counts
	// from the intended start. Steps is then ignored.
	Rates []float64
	// Workers is the open loop's worker pool, the most I/Os in flight
	// (default 64).
	Workers int
	// StepDuration is how long each step is measured after its warm-up;
	// 0 runs the last (or only) step until the context is cancelled.
	StepDuration time.Duration
	// Warmup runs each step this long before measuring it.
	Warmup time.Duration
	// Interval is the length of each emitted window (default the
	// --interval option, else 1 s).
	Interval time.Duration
	// Write makes the test random O_DIRECT|O_DSYNC writes instead of
	// reads; only allowed on a scratch file the test creates.
	Write bool
	// FilePerReader gives every reader (or open-loop worker) its own
	// scratch file of Size/N bytes instead of one shared file.
	FilePerReader bool
	// Events keeps only the series of these events ("read", "write");
	// empty keeps all.
	Events []string
	// Progress receives human progress lines while the scratch file is
	// created (nil: silent).
	Progress io.Writer
}

// openLoop reports whether the test runs at fixed arrival rates.
func (c Config) openLoop() bool { return len(c.Rates) > 0 }

// maxConcurrency is the most readers or workers any step runs.
func (c Config) maxConcurrency() int {
	if c.openLoop() {
		return c.Workers
	}
	return slices.Max(c.Steps)
}

// resolve fills in the defaults and checks the values.
func (c Config) resolve() (Config, error) {
	c.Path = cmp.Or(c.Path, ".")
	abs, err := filepath.Abs(c.Path)
	if err != nil {
		return c, fmt.Errorf("path %q: %w", c.Path, err)
	}
	c.Path = abs
	c.BlockSize = cmp.Or(c.BlockSize, DefaultBlockSize)
	if len(c.Steps) == 0 {
		c.Steps = []int{DefaultReaders}
	}
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.Engine = cmp.Or(c.Engine, EnginePsync)
	if len(c.IODepths) == 0 {
		c.IODepths = []int{1}
	}
	c.Interval = cmp.Or(c.Interval, DefaultInterval)
	if err := c.check(); err != nil {
		return c, err
	}
	return c, nil
}

// check rejects values no test can run with.
func (c Config) check() error {
	switch {
	case c.BlockSize < 0 || c.BlockSize%sectorSize != 0:
		return fmt.Errorf("block size %d is not a positive multiple of %d bytes", c.BlockSize, sectorSize)
	case c.BlockSize > maxBlockSize:
		return fmt.Errorf("block size %s is larger than %s: that is a throughput test, not a latency test",
			formatSize(int64(c.BlockSize)), formatSize(maxBlockSize))
	case c.Size < 0:
		return fmt.Errorf("size %d is negative", c.Size)
	case c.Size > 0 && c.Size < int64(c.BlockSize):
		return fmt.Errorf("size %s is smaller than one %s block", formatSize(c.Size), formatSize(int64(c.BlockSize)))
	case c.Workers < 1 || c.Workers > maxConcurrency:
		return fmt.Errorf("%d workers: want 1 to %d", c.Workers, maxConcurrency)
	case c.Interval < 0:
		return fmt.Errorf("interval %s is negative", c.Interval)
	case c.StepDuration < 0 || c.Warmup < 0:
		return fmt.Errorf("step duration %s and warm-up %s must not be negative", c.StepDuration, c.Warmup)
	}
	for _, n := range c.Steps {
		if n < 1 || n > maxConcurrency {
			return fmt.Errorf("%d readers: want 1 to %d", n, maxConcurrency)
		}
	}
	if err := c.checkEngine(); err != nil {
		return err
	}
	for _, r := range c.Rates {
		if !(r > 0) || math.IsInf(r, 0) || r > maxRate {
			return fmt.Errorf("rate %g I/Os per second: want more than 0 and at most %g", r, float64(maxRate))
		}
	}
	return nil
}

// checkEngine rejects an unknown engine and depths it cannot run.
func (c Config) checkEngine() error {
	for _, d := range c.IODepths {
		if d < 1 || d > maxIODepth {
			return fmt.Errorf("iodepth %d: want 1 to %d", d, maxIODepth)
		}
	}
	switch {
	case c.Engine != EnginePsync && c.Engine != EngineIOUring:
		return fmt.Errorf("engine %q: want %s or %s", c.Engine, EnginePsync, EngineIOUring)
	case c.Engine == EnginePsync && slices.Max(c.IODepths) > 1:
		return fmt.Errorf("iodepth %d needs engine %s: a psync reader has one I/O in flight "+
			"(use more readers for more)", slices.Max(c.IODepths), EngineIOUring)
	case c.Engine == EngineIOUring && c.openLoop():
		return fmt.Errorf("engine %s runs closed-loop steps (readers × iodepth); the open loop (rates) uses psync workers", EngineIOUring)
	case len(c.IODepths) > 1 && len(c.Steps) > 1:
		return errors.New("sweep either the readers or the iodepth, not both")
	}
	return nil
}

// Limits that catch typing mistakes (an extra zero) before they start
// thousands of threads.
const (
	maxConcurrency = 4096
	maxRate        = 10_000_000
)

// ProbeDescription says what the iotest:DIR probe measures.
func ProbeDescription() string {
	return fmt.Sprintf("iotest:DIR measures storage read latency: %d random %s O_DIRECT reads at a time "+
		"from a %s scratch file in DIR (removed afterwards); `latscope iotest` runs whole load sweeps",
		DefaultReaders, formatSize(DefaultBlockSize), formatSize(DefaultFileSize))
}

// OpenProbe checks that cfg.Path ("" for ".") is a directory and returns
// the test of cfg, which runs until cancelled when StepDuration is zero.
// The scratch file is created when the test runs.
func OpenProbe(cfg Config, diag *input.Diagnostics) (*Test, error) {
	resolved, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("iotest: %w", err)
	}
	if err := checkDir(resolved.Path); err != nil {
		return nil, fmt.Errorf("iotest: %w", err)
	}
	return New(cfg, diag), nil
}

// checkDir returns an error naming dir unless it is an existing directory.
func checkDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, pathErr(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// pathErr strips the path from err: callers name it themselves.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// New returns the test for cfg; zero fields take their defaults. Errors in
// cfg and in its path are returned by Run.
func New(cfg Config, diag *input.Diagnostics) *Test {
	resolved, err := cfg.resolve()
	return &Test{cfg: resolved, cfgErr: err, diag: diag, name: "iotest:" + resolved.Path}
}

// Test is one storage latency test: a source of per-interval latency
// histograms while it runs, and a Result per step when it is done.
type Test struct {
	cfg    Config
	cfgErr error
	diag   *input.Diagnostics
	name   string

	mu     sync.Mutex
	result Result
	now    now
}

// Name returns "iotest:" and the absolute path.
func (t *Test) Name() string { return t.name }

// Config returns the test's configuration with the defaults filled in.
func (t *Test) Config() Config { return t.cfg }

// Run opens the target (creating the scratch file), runs every step and
// removes the scratch file. Cancellation, during creation too, is a normal
// end: it returns nil after emitting the last (partial) interval, and the
// Result keeps the steps measured so far.
func (t *Test) Run(ctx context.Context, emit func(stream.Interval) error) error {
	if t.cfgErr != nil {
		return fmt.Errorf("%s: %w", t.name, t.cfgErr)
	}
	if t.cfg.Engine == EngineIOUring {
		if err := uringAvailable(); err != nil {
			return fmt.Errorf("%s: --engine %s: %w", t.name, EngineIOUring, err)
		}
	}
	tg, err := openTarget(ctx, t.cfg, t.cfg.Progress, t.diag)
	if ctx.Err() != nil {
		if tg != nil {
			tg.close()
		} else {
			t.diag.Warn(t.name, "stopped while preparing the test file: nothing was measured "+
				"(allow more time than writing the scratch file takes, or test an existing file)")
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	defer tg.close()
	t.setTarget(tg)
	if !tg.direct {
		t.diag.Warn(t.name, "%s: reading through the page cache; posix_fadvise(DONTNEED) drops the file's "+
			"cached pages every interval, but latencies can be those of memory, not storage", tg.whyCached)
	}
	t.warnSchedulerDelay()
	return t.runSteps(ctx, tg, emit)
}

// warnSchedulerDelay warns when there are more readers than Go processors:
// a read that completes while every processor is taken waits for the Go
// scheduler to hand one back, up to 10 ms, and that wait is timed with
// the read. Measured here with 4 readers: a spurious ~10 ms mode at
// p99.9 with GOMAXPROCS=2, none with GOMAXPROCS=5.
func (t *Test) warnSchedulerDelay() {
	if procs, n := runtime.GOMAXPROCS(0), t.cfg.maxConcurrency(); n > procs {
		t.diag.Warn(t.name, "%d readers but GOMAXPROCS=%d: reads finishing while no Go processor is free "+
			"wait for the scheduler (up to 10 ms), which can show as a spurious ~10 ms mode; "+
			"run with GOMAXPROCS=%d or more", n, procs, n+1)
	}
}

// ProcsNeeded is the GOMAXPROCS a test of cfg needs so that no reader
// waits for a Go processor: one per reader or worker, one for the view.
func ProcsNeeded(cfg Config) int {
	if len(cfg.Steps) == 0 && !cfg.openLoop() {
		return DefaultReaders + 1
	}
	if cfg.openLoop() && cfg.Workers == 0 {
		return DefaultWorkers + 1
	}
	return cfg.maxConcurrency() + 1
}

// formatSize prints a byte count as "8 KiB", "256 MiB" or "1.5 GiB".
func formatSize(n int64) string { return bytesize.Format(n) }

// IsDir reports whether path ("" for ".") is a directory, where a test
// creates scratch files.
func IsDir(path string) bool {
	if path == "" {
		path = "."
	}
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// Plan describes what a test of cfg will do and how long it takes, for
// the line printed before it starts.
func Plan(cfg Config) string {
	op := "reads"
	if cfg.Write {
		op = "O_DSYNC writes"
	}
	var load string
	if cfg.openLoop() {
		load = fmt.Sprintf("open loop at %s I/Os per second (Poisson, up to %d in flight)", joinNumbers(cfg.Rates), cfg.Workers)
	} else {
		load = fmt.Sprintf("%s concurrent readers", joinNumbers(cfg.Steps))
	}
	if cfg.Engine == EngineIOUring {
		depths := cfg.IODepths
		if len(depths) == 0 {
			depths = []int{1}
		}
		load += fmt.Sprintf(" (io_uring, iodepth %s each)", joinNumbers(depths))
	}
	where := cfg.Path
	if IsDir(cfg.Path) {
		size := cfg.Size
		if size == 0 {
			size = DefaultFileSize
		}
		where = fmt.Sprintf("a %s scratch file in %s", formatSize(size), cfg.Path)
		if cfg.FilePerReader {
			where = fmt.Sprintf("%s of scratch files (one per reader) in %s", formatSize(size), cfg.Path)
		}
	}
	steps := len(cfg.levels())
	if cfg.StepDuration == 0 {
		return fmt.Sprintf("random %s %s from %s, %s, until stopped", formatSize(int64(cfg.BlockSize)), op, where, load)
	}
	total := time.Duration(steps) * (cfg.Warmup + cfg.StepDuration)
	return fmt.Sprintf("random %s %s from %s, %s; %d step(s) of %s warm-up + %s, about %s",
		formatSize(int64(cfg.BlockSize)), op, where, load, steps, cfg.Warmup, cfg.StepDuration, total)
}

// joinNumbers prints 1,2,4 or 500,1000.
func joinNumbers[T int | float64](ns []T) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ",")
}
