//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/latscope/latscope/scripts/benchkit"
)

// filesystems names the statfs magic numbers a benchmark directory is
// likely to be on.
var filesystems = map[int64]string{
	unix.EXT4_SUPER_MAGIC:      "ext2/3/4",
	unix.XFS_SUPER_MAGIC:       "xfs",
	unix.BTRFS_SUPER_MAGIC:     "btrfs",
	unix.TMPFS_MAGIC:           "tmpfs",
	unix.RAMFS_MAGIC:           "ramfs",
	unix.OVERLAYFS_SUPER_MAGIC: "overlay",
	unix.NFS_SUPER_MAGIC:       "nfs",
	unix.F2FS_SUPER_MAGIC:      "f2fs",
	0x2fc12fc1:                 "zfs",
	unix.FUSE_SUPER_MAGIC:      "fuse",
}

// describeStorage finds the filesystem (statfs) and the block device
// (stat's st_dev, then /sys/dev/block) under dir.
func describeStorage(dir string) storageFacts {
	s := storageFacts{Dir: dir}
	if abs, err := filepath.Abs(dir); err == nil {
		s.Dir = abs
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err == nil {
		magic := int64(fs.Type)
		s.Filesystem = filesystems[magic]
		if s.Filesystem == "" {
			s.Filesystem = fmt.Sprintf("0x%x", uint32(fs.Type))
		}
		s.InMemory = magic == unix.TMPFS_MAGIC || magic == unix.RAMFS_MAGIC
	}
	if s.InMemory {
		s.Note = s.Filesystem + " keeps files in memory: both tools read RAM, not storage; use -dir on a disk"
		return s
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return s
	}
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	real, err := filepath.EvalSymlinks(sys)
	if err != nil {
		s.Note = "no block device under " + sys + " (network, overlay or virtual filesystem)"
		return s
	}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		s.Partition = filepath.Base(real)
		real = filepath.Dir(real)
	}
	s.Device = filepath.Base(real)
	s.Model = benchkit.ReadTrimmed(filepath.Join(real, "device", "model"))
	s.Vendor = benchkit.ReadTrimmed(filepath.Join(real, "device", "vendor"))
	s.Rotational = benchkit.ReadTrimmed(filepath.Join(real, "queue", "rotational"))
	s.Scheduler = activeScheduler(benchkit.ReadTrimmed(filepath.Join(real, "queue", "scheduler")))
	if n, err := strconv.ParseInt(benchkit.ReadTrimmed(filepath.Join(real, "size")), 10, 64); err == nil {
		s.SizeBytes = n * 512 // sysfs counts 512-byte sectors whatever the device's block size
	}
	if strings.HasPrefix(s.Device, "vd") || strings.HasPrefix(s.Device, "xvd") {
		s.Note = "virtual disk: its latency is the hypervisor's and the host's cache, rotational flag included"
	}
	return s
}

// activeScheduler picks the bracketed entry of queue/scheduler
// ("none [mq-deadline] kyber" → "mq-deadline").
func activeScheduler(line string) string {
	if i := strings.IndexByte(line, '['); i >= 0 {
		if j := strings.IndexByte(line[i:], ']'); j > 0 {
			return line[i+1 : i+j]
		}
	}
	return line
}
