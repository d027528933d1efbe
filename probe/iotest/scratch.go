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

// createScratch creates, fills and syncs one scratch file of size bytes in
// cfg.Path and opens it for the test. Its name is removed as soon as it is
// open, so that not even a killed process leaves it behind; close removes
// it by name where the system refused that. On error or cancellation
// nothing is left in the directory.
func createScratch(ctx context.Context, cfg Config, size int64, rep *progressReporter) (*testFile, error) {
	f, err := os.CreateTemp(cfg.Path, scratchPattern)
	if err != nil {
		return nil, fmt.Errorf("cannot create a scratch file in %s: %w", cfg.Path, pathErr(err))
	}
	s := &testFile{path: f.Name(), size: size, owned: true}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			s.close()
		}
	}()
	if s.buffered, err = os.Open(s.path); err != nil {
		return nil, fmt.Errorf("opening the scratch file: %w", err)
	}
	if cfg.Write {
		if s.writer, err = openWriter(s.path); err != nil {
			return nil, fmt.Errorf("opening the scratch file for writing: %w", err)
		}
	}
	if err := s.openDirect(cfg); err != nil {
		return nil, err
	}
	s.removed = os.Remove(s.path) == nil
	if err := fill(ctx, f, size, rep); err != nil {
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

// openDirect opens the O_DIRECT descriptor where the filesystem allows it;
// a memory filesystem gets none (direct reads there still read memory).
func (f *testFile) openDirect(cfg Config) error {
	f.reader = f.buffered
	// A device node lives on devtmpfs; the device itself is what is read.
	if fs, memory := memoryFS(f.buffered); memory && !isDevice(f.buffered) {
		f.whyCached = fmt.Sprintf("%s is on %s, which keeps files in memory", cfg.Path, fs)
		adviseRandom(f.buffered)
		return nil
	}
	var err error
	f.direct, err = openDirect(f.path)
	switch {
	case errors.Is(err, errDirectRefused):
		f.whyCached = fmt.Sprintf("%s: %v", cfg.Path, err)
		adviseRandom(f.buffered)
		return nil
	case err != nil:
		return fmt.Errorf("opening %s with O_DIRECT: %w", f.path, pathErr(err))
	}
	if !f.owned {
		return f.chooseReader(cfg)
	}
	return nil
}

// chooseReader reads one block with O_DIRECT: some filesystems accept the
// flag on open and refuse the reads (or this block size) with EINVAL.
func (f *testFile) chooseReader(cfg Config) error {
	f.reader = f.buffered
	if f.direct == nil {
		return nil
	}
	_, err := f.direct.ReadAt(alignedBlock(cfg.BlockSize), 0)
	switch {
	case err == nil:
		f.reader = f.direct
	case errors.Is(err, errDirectRefused) || isEINVAL(err):
		f.whyCached = fmt.Sprintf("%s refuses O_DIRECT reads of %s (a block device's logical block size "+
			"must divide --bs)", cfg.Path, formatSize(int64(cfg.BlockSize)))
		f.direct.Close()
		f.direct = nil
		adviseRandom(f.buffered)
	default:
		return fmt.Errorf("test read of %s: %w", f.path, pathErr(err))
	}
	return nil
}

// fill writes size random bytes (ChaCha8, seeded from the system's
// random source: incompressible, not dedupable, no holes) and syncs them,
// reporting progress and stopping early when ctx is cancelled.
func fill(ctx context.Context, f *os.File, size int64, rep *progressReporter) error {
	var seed [32]byte
	crand.Read(seed[:])
	gen := rand.NewChaCha8(seed)
	buf := make([]byte, writeChunk)
	rep.report(rep.done, rep.done == 0)
	var sinceSync int64
	for done := int64(0); done < size; {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n := min(int64(len(buf)), size-done)
		gen.Read(buf[:n])
		if _, err := f.Write(buf[:n]); err != nil {
			return fmt.Errorf("writing a %s scratch file: %w", formatSize(size), pathErr(err))
		}
		done += n
		rep.add(n)
		if sinceSync += n; sinceSync >= syncEvery || done == size {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("syncing the scratch file: %w", err)
			}
			sinceSync = 0
		}
		rep.report(rep.done, rep.done == rep.total)
	}
	return nil
}

// progressReporter writes "creating 256 MiB scratch file in DIR: 37%"
// lines, at most one per progressEvery, over all scratch files.
type progressReporter struct {
	w           io.Writer
	total, done int64
	what        string
	last        time.Time
}

func newProgressReporter(w io.Writer, total int64, dir string, files int) *progressReporter {
	what := fmt.Sprintf("creating %s scratch file in %s", formatSize(total), dir)
	if files > 1 {
		what = fmt.Sprintf("creating %d scratch files of %s in %s", files, formatSize(total/int64(files)), dir)
	}
	return &progressReporter{w: w, total: total, what: what}
}

// add counts n more bytes written.
func (r *progressReporter) add(n int64) { r.done += n }

// report writes a line for done bytes when forced or when enough time has
// passed since the last one.
func (r *progressReporter) report(done int64, force bool) {
	if r.w == nil || (!force && time.Since(r.last) < progressEvery) {
		return
	}
	r.last = time.Now()
	fmt.Fprintf(r.w, "%s: %d%%\n", r.what, done*100/r.total)
}

// isDevice reports whether f is a device node.
func isDevice(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeDevice != 0
}
