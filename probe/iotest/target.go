package iotest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/latscope/latscope/input"
)

// Kinds of target.
const (
	kindScratch = "scratch file"
	kindFile    = "file"
	kindDevice  = "block device"
)

// target is what a test reads: one scratch file, one per reader, or an
// existing file or block device.
type target struct {
	kind  string
	files []*testFile
	// direct says reads bypass the page cache; whyCached says why not.
	direct    bool
	whyCached string
}

// testFile is one file (or device) of the target.
type testFile struct {
	path string
	// owned files are scratch files the test created: removed on close and
	// the only ones ever written.
	owned   bool
	removed bool
	// size is the readable region: whole blocks from offset 0.
	size int64
	// buffered always reads through the page cache; direct is the O_DIRECT
	// descriptor, nil where it is refused or pointless; writer is the
	// O_DIRECT|O_DSYNC descriptor of a write test.
	buffered, direct, writer *os.File
	// reader is the descriptor reads use: direct, else buffered.
	reader *os.File
	// whyCached says why reads go through the page cache.
	whyCached string
}

// close closes the descriptors and removes an owned file if it still has a
// name.
func (f *testFile) close() {
	for _, d := range []*os.File{f.writer, f.direct, f.buffered} {
		if d != nil {
			d.Close()
		}
	}
	if f.owned && !f.removed {
		f.removed = os.Remove(f.path) == nil
	}
}

// close closes every file of the target.
func (t *target) close() {
	for _, f := range t.files {
		f.close()
	}
}

// fileFor returns the file reader (or worker) i uses.
func (t *target) fileFor(i int) *testFile { return t.files[i%len(t.files)] }

// openTarget opens what cfg.Path names: a directory gets scratch files; a
// regular file or block device is opened read-only. On error or
// cancellation nothing is left behind.
func openTarget(ctx context.Context, cfg Config, progress io.Writer, diag *input.Diagnostics) (*target, error) {
	st, err := os.Stat(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, pathErr(err))
	}
	switch mode := st.Mode(); {
	case mode.IsDir():
		return openScratch(ctx, cfg, progress)
	case mode.IsRegular(), mode&os.ModeDevice != 0 && mode&os.ModeCharDevice == 0:
		return openExisting(cfg, st, diag)
	default:
		return nil, fmt.Errorf("%s is neither a directory, a regular file nor a block device", cfg.Path)
	}
}

// openScratch creates the scratch files in cfg.Path: one, or one per
// reader of the largest step.
func openScratch(ctx context.Context, cfg Config, progress io.Writer) (*target, error) {
	size := cfg.Size
	if size == 0 {
		size = DefaultFileSize
	}
	n := 1
	if cfg.FilePerReader {
		n = cfg.maxConcurrency()
	}
	each := size / int64(n)
	each -= each % int64(cfg.BlockSize)
	if each < int64(cfg.BlockSize) {
		return nil, fmt.Errorf("%s split among %d files is less than one %s block per file",
			formatSize(size), n, formatSize(int64(cfg.BlockSize)))
	}
	if free, ok := freeSpace(cfg.Path); ok && free < each*int64(n) {
		return nil, fmt.Errorf("only %s free in %s, the scratch file needs %s",
			formatSize(free), cfg.Path, formatSize(each*int64(n)))
	}
	t := &target{kind: kindScratch, direct: true}
	rep := newProgressReporter(progress, each*int64(n), cfg.Path, n)
	for range n {
		f, err := createScratch(ctx, cfg, each, rep)
		if f != nil {
			t.files = append(t.files, f)
		}
		if err != nil {
			t.close()
			return nil, err
		}
	}
	t.direct = t.files[0].reader == t.files[0].direct
	t.whyCached = t.files[0].whyCached
	return t, nil
}

// openExisting opens a regular file or block device read-only.
func openExisting(cfg Config, st os.FileInfo, diag *input.Diagnostics) (*target, error) {
	kind := kindFile
	if !st.Mode().IsRegular() {
		kind = kindDevice
	}
	if cfg.Write {
		return nil, fmt.Errorf("--write only writes to scratch files latscope creates; %s is an existing %s, "+
			"so it is only read: give a directory to test writes", cfg.Path, kind)
	}
	if cfg.FilePerReader {
		return nil, fmt.Errorf("--file-per-reader needs a directory for the scratch files; %s is a %s", cfg.Path, kind)
	}
	f := &testFile{path: cfg.Path}
	var err error
	if f.buffered, err = os.Open(cfg.Path); err != nil {
		return nil, openError(cfg.Path, kind, err)
	}
	size, err := f.buffered.Seek(0, io.SeekEnd)
	if err != nil {
		f.close()
		return nil, fmt.Errorf("size of %s: %w", cfg.Path, err)
	}
	if size < int64(cfg.BlockSize) {
		f.close()
		return nil, fmt.Errorf("%s holds %d bytes, less than one %s block", cfg.Path, size, formatSize(int64(cfg.BlockSize)))
	}
	if cfg.Size > 0 && cfg.Size < size {
		size = cfg.Size
	}
	f.size = size - size%int64(cfg.BlockSize)
	t := &target{kind: kind, files: []*testFile{f}}
	if err := f.openDirect(cfg); err != nil {
		f.close()
		return nil, err
	}
	t.direct, t.whyCached = f.reader == f.direct, f.whyCached
	if kind == kindFile {
		warnSparse(cfg.Path, st, diag)
	}
	return t, nil
}

// openError explains a refused open of an existing file or device.
func openError(path, kind string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		hint := ""
		if kind == kindDevice {
			hint = " (run as root, or as a member of the group that owns it, usually \"disk\")"
		}
		return fmt.Errorf("cannot open %s %s for reading: permission denied%s", kind, path, hint)
	}
	return fmt.Errorf("cannot open %s %s for reading: %w", kind, path, pathErr(err))
}

// warnSparse warns when a file has holes: reading a hole returns zeros
// without touching storage, which looks like very fast I/O.
func warnSparse(path string, st os.FileInfo, diag *input.Diagnostics) {
	allocated, ok := allocatedBytes(st)
	if ok && allocated < st.Size()*9/10 {
		diag.Warn("iotest:"+path, "%s is sparse: only %s of its %s are allocated, and holes are read as zeros "+
			"without touching storage", path, formatSize(allocated), formatSize(st.Size()))
	}
}
