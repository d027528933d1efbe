//go:build linux

package iotest

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// errDirectRefused says the filesystem does not do O_DIRECT.
var errDirectRefused = errors.New("the filesystem refuses O_DIRECT")

// openDirect opens path for O_DIRECT reads; filesystems that cannot do
// direct I/O (tmpfs before Linux 6.6, some FUSE and overlay mounts) refuse
// the flag with EINVAL, reported as errDirectRefused.
func openDirect(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECT, 0)
	if isEINVAL(err) {
		return nil, errDirectRefused
	}
	return f, err
}

// isEINVAL reports whether err is EINVAL, the answer to direct I/O a
// filesystem or device cannot do.
func isEINVAL(err error) bool { return errors.Is(err, syscall.EINVAL) }

// memoryFS reports whether f lives on a filesystem that keeps files in
// memory: there O_DIRECT (accepted by tmpfs since Linux 6.6) still reads
// memory, so the test is a page-cache test whatever the flags say.
func memoryFS(f *os.File) (string, bool) {
	var st unix.Statfs_t
	if control(f, func(fd int) error { return unix.Fstatfs(fd, &st) }) != nil {
		return "", false
	}
	switch uint32(st.Type) {
	case uint32(unix.TMPFS_MAGIC):
		return "tmpfs", true
	case uint32(unix.RAMFS_MAGIC):
		return "ramfs", true
	}
	return "", false
}

// freeSpace returns the bytes an unprivileged user may still write in dir.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}

// dropCache asks the kernel to drop f's clean cached pages, as ioping does;
// it is advice, so errors are ignored.
func dropCache(f *os.File) {
	_ = control(f, func(fd int) error { return unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED) })
}

// adviseRandom turns off read-ahead for f, so that a buffered random read
// fetches one block, as a direct read does.
func adviseRandom(f *os.File) {
	_ = control(f, func(fd int) error { return unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM) })
}

// control runs op on f's descriptor without taking it out of Go's hands.
func control(f *os.File, op func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = op(int(fd)) }); err != nil {
		return err
	}
	return opErr
}

// openWriter opens path for a write test: O_DIRECT|O_DSYNC, so that each
// write returns once it is on stable storage, as a database's data and log
// writes do; O_DSYNC alone where O_DIRECT is refused.
func openWriter(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_DIRECT|syscall.O_DSYNC, 0)
	if isEINVAL(err) {
		return os.OpenFile(path, os.O_RDWR|syscall.O_DSYNC, 0)
	}
	return f, err
}

// allocatedBytes returns the bytes a file has on storage (holes excluded).
func allocatedBytes(st os.FileInfo) (int64, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return sys.Blocks * 512, true
}
