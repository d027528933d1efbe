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
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Defaults of Config.
const (
	DefaultFileSize  = 256 << 20
	DefaultBlockSize = 8 << 10
	DefaultReaders   = 4
	DefaultInterval  = time.Second
)

// sectorSize is the granularity O_DIRECT needs for sizes and offsets on
// every Linux block device (4096 on 4Kn devices, where smaller block sizes
// are refused and the probe falls back to the page cache).
const sectorSize = 512

// Config describes one storage latency test.
type Config struct {
	// Dir is the directory that holds the scratch file ("" means ".").
	Dir string
	// FileSize is the scratch file's size in bytes (default 256 MiB); it is
	// rounded down to whole blocks.
	FileSize int64
	// BlockSize is the size of each read in bytes (default 8 KiB, the usual
	// database block), a multiple of 512.
	BlockSize int
	// Readers is the number of concurrent readers, i.e. the queue depth
	// (default 4).
	Readers int
	// Interval is the length of each emitted window (default the
	// --interval option, else 1 s).
	Interval time.Duration
}

// resolve fills in the defaults and checks the values.
func (c Config) resolve(opts source.Options) (Config, error) {
	if c.Dir == "" {
		c.Dir = "."
	}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return c, fmt.Errorf("directory %q: %w", c.Dir, err)
	}
	c.Dir = abs
	if c.FileSize == 0 {
		c.FileSize = DefaultFileSize
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.Readers == 0 {
		c.Readers = DefaultReaders
	}
	if c.Interval == 0 {
		c.Interval = opts.Interval
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	switch {
	case c.BlockSize < 0 || c.BlockSize%sectorSize != 0:
		return c, fmt.Errorf("block size %d is not a positive multiple of %d bytes", c.BlockSize, sectorSize)
	case c.FileSize < int64(c.BlockSize):
		return c, fmt.Errorf("file size %d is smaller than one %d-byte block", c.FileSize, c.BlockSize)
	case c.Readers < 0:
		return c, fmt.Errorf("%d readers: want at least 1", c.Readers)
	case c.Interval < 0:
		return c, fmt.Errorf("interval %s is negative", c.Interval)
	}
	c.FileSize -= c.FileSize % int64(c.BlockSize)
	return c, nil
}

// Probe returns the iotest:DIR probe for the source.Opener.
func Probe() source.Probe {
	return source.Probe{
		Scheme: "iotest",
		Description: fmt.Sprintf("iotest:DIR measures storage read latency: %d random %s O_DIRECT reads at a time "+
			"from a %s scratch file in DIR (removed afterwards)",
			DefaultReaders, formatSize(DefaultBlockSize), formatSize(DefaultFileSize)),
		Open: Open,
	}
}

// Open checks that DIR (arg, "" for ".") is a directory and returns the
// probe with the default Config. The scratch file is created when the
// source runs.
func Open(arg string, opts source.Options, diag *source.Diagnostics) (source.Source, error) {
	cfg, err := Config{Dir: arg}.resolve(opts)
	if err != nil {
		return nil, fmt.Errorf("iotest: %w", err)
	}
	if err := checkDir(cfg.Dir); err != nil {
		return nil, fmt.Errorf("iotest: %w", err)
	}
	return New(cfg, opts, diag), nil
}

// checkDir returns an error naming dir unless it is an existing directory.
func checkDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named below
		}
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// New returns the probe for cfg; zero fields take their defaults. Errors in
// cfg and in DIR are returned by Run.
func New(cfg Config, opts source.Options, diag *source.Diagnostics) source.Source {
	resolved, err := cfg.resolve(opts)
	name := "iotest:" + resolved.Dir
	return &probe{cfg: resolved, cfgErr: err, opts: opts, diag: diag, name: name}
}

// probe is the running storage test.
type probe struct {
	cfg    Config
	cfgErr error
	opts   source.Options
	diag   *source.Diagnostics
	name   string
}

// Name returns "iotest:" and the absolute directory.
func (p *probe) Name() string { return p.name }

// Run creates the scratch file, measures until ctx is cancelled and removes
// the file. Cancellation, during creation too, is a normal end: it returns
// nil after emitting the last (partial) interval.
func (p *probe) Run(ctx context.Context, emit func(stream.Interval) error) error {
	if p.cfgErr != nil {
		return fmt.Errorf("%s: %w", p.name, p.cfgErr)
	}
	if err := checkDir(p.cfg.Dir); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if free, ok := freeSpace(p.cfg.Dir); ok && free < p.cfg.FileSize {
		return fmt.Errorf("%s: only %s free, the scratch file needs %s",
			p.name, formatSize(free), formatSize(p.cfg.FileSize))
	}
	sf, err := createScratch(ctx, p.cfg, p.opts.Progress)
	if ctx.Err() != nil {
		if sf != nil {
			sf.close()
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	defer sf.close()
	if sf.reader == sf.buffered {
		p.diag.Warn(p.name, "%s: reading through the page cache; posix_fadvise(DONTNEED) drops the file's "+
			"cached pages every interval, but latencies can be those of memory, not storage", sf.whyCached)
	}
	p.warnSchedulerDelay()
	return p.measure(ctx, sf, emit)
}

// warnSchedulerDelay warns when there are more readers than Go processors:
// a read that completes while every processor is taken waits for the Go
// scheduler to hand one back, up to 10 ms, and that wait is timed with
// the read. Measured here with 4 readers: a spurious ~10 ms mode at
// p99.9 with GOMAXPROCS=2, none with GOMAXPROCS=5.
func (p *probe) warnSchedulerDelay() {
	if procs := runtime.GOMAXPROCS(0); p.cfg.Readers > procs {
		p.diag.Warn(p.name, "%d readers but GOMAXPROCS=%d: reads finishing while no Go processor is free "+
			"wait for the scheduler (up to 10 ms), which can show as a spurious ~10 ms mode; "+
			"run with GOMAXPROCS=%d or more", p.cfg.Readers, procs, p.cfg.Readers+1)
	}
}

// formatSize prints a byte count as "8 KiB", "256 MiB" or "1.5 GiB".
func formatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v := float64(n)
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
