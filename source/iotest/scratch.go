package iotest

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"
)

const (
	// scratchPattern names the scratch file (os.CreateTemp: O_EXCL, 0600).
	scratchPattern = "latscope-iotest-*.dat"
	// writeChunk is how much random data one write carries.
	writeChunk = 1 << 20
	// syncEvery bounds the dirty data so that progress follows the device,
	// not the page cache.
	syncEvery = 32 << 20
	// progressEvery is the least time between two progress lines.
	progressEvery = 250 * time.Millisecond
)

// scratch is the test file, open for reading. Its name is removed as soon
// as the file is open, so that not even a killed process leaves it behind;
// close removes it by name where the system refused that.
type scratch struct {
	path    string
	removed bool
	size    int64
	// buffered always reads through the page cache; direct is the O_DIRECT
	// descriptor, nil where it is refused or pointless.
	buffered *os.File
	direct   *os.File
	// reader is the descriptor the test reads: direct, else buffered.
	reader *os.File
	// whyCached says why reads go through the page cache.
	whyCached string
}

// createScratch creates, fills and syncs the scratch file in cfg.Dir. On
// error or cancellation nothing is left in the directory.
func createScratch(ctx context.Context, cfg Config, progress io.Writer) (*scratch, error) {
	f, err := os.CreateTemp(cfg.Dir, scratchPattern)
	if err != nil {
		return nil, fmt.Errorf("cannot create a scratch file: %w", err)
	}
	s := &scratch{path: f.Name(), size: cfg.FileSize}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			s.close()
		}
	}()
	if err := s.open(cfg.Dir); err != nil {
		return nil, err
	}
	s.removed = os.Remove(s.path) == nil
	if err := fill(ctx, f, cfg, progress); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("writing the scratch file: %w", err)
	}
	dropCache(s.buffered)
	if err := s.chooseReader(cfg); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// open opens the read descriptors: buffered always, O_DIRECT where allowed.
func (s *scratch) open(dir string) error {
	var err error
	if s.buffered, err = os.Open(s.path); err != nil {
		return fmt.Errorf("opening the scratch file: %w", err)
	}
	if fs, memory := memoryFS(s.buffered); memory {
		s.whyCached = fmt.Sprintf("%s is on %s, which keeps files in memory", dir, fs)
		return nil
	}
	s.direct, err = openDirect(s.path)
	switch {
	case errors.Is(err, errDirectRefused):
		s.whyCached = fmt.Sprintf("%s: %v", dir, err)
	case err != nil:
		return fmt.Errorf("opening the scratch file with O_DIRECT: %w", err)
	}
	return nil
}

// chooseReader reads one block with O_DIRECT: some filesystems accept the
// flag on open and refuse the reads (or this block size) with EINVAL.
func (s *scratch) chooseReader(cfg Config) error {
	s.reader = s.buffered
	if s.direct == nil {
		adviseRandom(s.buffered)
		return nil
	}
	_, err := s.direct.ReadAt(alignedBlock(cfg.BlockSize), 0)
	switch {
	case err == nil:
		s.reader = s.direct
	case errors.Is(err, errDirectRefused) || isEINVAL(err):
		s.whyCached = fmt.Sprintf("%s: the filesystem refuses O_DIRECT reads of %s", cfg.Dir, formatSize(int64(cfg.BlockSize)))
		s.direct.Close()
		s.direct = nil
		adviseRandom(s.buffered)
	default:
		return fmt.Errorf("test read of the scratch file: %w", err)
	}
	return nil
}

// close closes the descriptors and removes the file if it still has a name.
func (s *scratch) close() {
	if s.direct != nil {
		s.direct.Close()
	}
	if s.buffered != nil {
		s.buffered.Close()
	}
	if !s.removed {
		s.removed = os.Remove(s.path) == nil
	}
}

// fill writes cfg.FileSize random bytes (ChaCha8, seeded from the system's
// random source: incompressible, not dedupable, no holes) and syncs them,
// reporting progress and stopping early when ctx is cancelled.
func fill(ctx context.Context, f *os.File, cfg Config, progress io.Writer) error {
	var seed [32]byte
	crand.Read(seed[:])
	gen := rand.NewChaCha8(seed)
	buf := make([]byte, writeChunk)
	rep := newProgressReporter(progress, cfg)
	rep.report(0, true)
	var sinceSync int64
	for done := int64(0); done < cfg.FileSize; {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n := min(int64(len(buf)), cfg.FileSize-done)
		gen.Read(buf[:n])
		if _, err := f.Write(buf[:n]); err != nil {
			return fmt.Errorf("writing a %s scratch file: %w", formatSize(cfg.FileSize), err)
		}
		done += n
		if sinceSync += n; sinceSync >= syncEvery || done == cfg.FileSize {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("syncing the scratch file: %w", err)
			}
			sinceSync = 0
		}
		rep.report(done, done == cfg.FileSize)
	}
	return nil
}

// progressReporter writes "creating 256 MiB scratch file in DIR: 37%"
// lines, at most one per progressEvery.
type progressReporter struct {
	w     io.Writer
	total int64
	what  string
	last  time.Time
}

func newProgressReporter(w io.Writer, cfg Config) *progressReporter {
	return &progressReporter{
		w:     w,
		total: cfg.FileSize,
		what:  fmt.Sprintf("creating %s scratch file in %s", formatSize(cfg.FileSize), cfg.Dir),
	}
}

// report writes a line for done bytes when forced or when enough time has
// passed since the last one.
func (r *progressReporter) report(done int64, force bool) {
	if r.w == nil || (!force && time.Since(r.last) < progressEvery) {
		return
	}
	r.last = time.Now()
	fmt.Fprintf(r.w, "%s: %d%%\n", r.what, done*100/r.total)
}
