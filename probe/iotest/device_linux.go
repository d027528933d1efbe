//go:build linux

package iotest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DescribePath describes the storage behind path: a directory (where a
// test creates its scratch file), a file or a block device node. It never
// fails: what the system does not reveal stays empty and Class "unknown".
func DescribePath(path string) Device {
	return liveSystem().describe(path, 0)
}

// sysView is where the kernel's description of devices is read: the
// sysfs root (Documentation/ABI/stable/sysfs-block) and the mount table.
// Tests point it at fake trees.
type sysView struct {
	sys       string
	mountinfo string
}

// liveSystem reads the running kernel's views.
func liveSystem() sysView {
	return sysView{sys: "/sys", mountinfo: "/proc/self/mountinfo"}
}

// describe describes path; depth counts the loop devices and stacks
// already followed.
func (v sysView) describe(path string, depth int) Device {
	d := Device{Path: path, Class: ClassUnknown}
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return d
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		d.Kind = kindDevice
		v.describeBlock(&d, devNumber(st.Rdev), depth)
		return d
	case unix.S_IFDIR:
		d.Kind = kindScratch
	case unix.S_IFREG:
		d.Kind = kindFile
	default:
		return d
	}
	m := v.mountOf(path, devNumber(st.Dev))
	d.Filesystem = filesystemName(path, m.fstype)
	if class, virtual := filesystemClass(d.Filesystem); class != "" {
		d.Class, d.Virtual = class, virtual
		return d
	}
	if v.describeBlock(&d, devNumber(st.Dev), depth) {
		return d
	}
	// Filesystems with anonymous device numbers (btrfs subvolumes, zfs)
	// name their device only in the mount table.
	d.MajorMinor = ""
	var src unix.Stat_t
	if strings.HasPrefix(m.source, "/dev/") && unix.Stat(m.source, &src) == nil && src.Mode&unix.S_IFMT == unix.S_IFBLK {
		v.describeBlock(&d, devNumber(src.Rdev), depth)
	}
	return d
}

// devNumber formats a device number as sysfs names it, "254:0".
func devNumber(dev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
}

// describeBlock fills d from the block device numbered num; it reports
// whether sysfs knows the device.
func (v sysView) describeBlock(d *Device, num string, depth int) bool {
	dir, err := filepath.EvalSymlinks(filepath.Join(v.sys, "dev", "block", num))
	if err != nil {
		return false
	}
	d.MajorMinor = num
	v.describeSysDir(d, dir, depth)
	return true
}

// describeSysDir fills d from a block device's sysfs directory: a whole
// disk, or a partition (it has a "partition" file) whose parent directory
// is the disk.
func (v sysView) describeSysDir(d *Device, dir string, depth int) {
	disk := dir
	if exists(filepath.Join(dir, "partition")) {
		d.Partition = filepath.Base(dir)
		disk = filepath.Dir(dir)
	}
	d.Device = filepath.Base(disk)
	if d.MajorMinor == "" {
		d.MajorMinor = readSys(filepath.Join(dir, "dev"))
	}
	d.Rotational = readBool(filepath.Join(disk, "queue", "rotational"))
	d.LogicalBlockSize = readInt(filepath.Join(disk, "queue", "logical_block_size"))
	d.PhysicalBlockSize = readInt(filepath.Join(disk, "queue", "physical_block_size"))
	hw := filepath.Join(disk, "device")
	d.Model = readSys(filepath.Join(hw, "model"))
	d.Vendor = readSys(filepath.Join(hw, "vendor"))
	hwDir, err := filepath.EvalSymlinks(hw)
	if err != nil {
		hwDir = ""
	}
	d.Driver = v.driver(d.Device, hwDir)
	d.Transport = transport(d.Device, disk, hwDir)
	if depth < maxStackDepth {
		v.describeStack(d, disk, depth)
		v.describeLoop(d, disk, depth)
	}
	d.Virtual = isVirtual(*d)
	d.Class = classify(*d)
}

// driver returns the kernel driver bound to the disk's hardware: the
// first "driver" link from the device up its parents (an NVMe namespace's
// driver is on the PCI function two levels up); disks without hardware
// are named after their driver.
func (v sysView) driver(name, hwDir string) string {
	devices := filepath.Join(v.sys, "devices") + string(filepath.Separator)
	for dir := hwDir; strings.HasPrefix(dir, devices); dir = filepath.Dir(dir) {
		if target, err := os.Readlink(filepath.Join(dir, "driver")); err == nil {
			return filepath.Base(target)
		}
	}
	for _, p := range namePrefixes {
		if p.re.MatchString(name) {
			return p.driver
		}
	}
	return ""
}

// namePrefixes names the drivers of disks that have no hardware device.
var namePrefixes = []struct {
	re     *regexp.Regexp
	driver string
}{
	{regexp.MustCompile(`^dm-\d+$`), "device-mapper"},
	{regexp.MustCompile(`^md(\d+|_d\d+)$`), "md"},
	{regexp.MustCompile(`^loop\d+$`), "loop"},
	{regexp.MustCompile(`^zram\d+$`), "zram"},
	{regexp.MustCompile(`^ram\d+$`), "brd"},
	{regexp.MustCompile(`^nbd\d+$`), "nbd"},
	{regexp.MustCompile(`^rbd\d+$`), "rbd"},
	{regexp.MustCompile(`^pmem\d+`), "nd_pmem"},
	{regexp.MustCompile(`^bcache\d+$`), "bcache"},
	{regexp.MustCompile(`^drbd\d+$`), "drbd"},
	{regexp.MustCompile(`^nvme\d+n\d+$`), "nvme"},
}

// transportPaths guess the link from the sysfs path of the disk, which
// runs through the buses it hangs on.
var transportPaths = []struct {
	re        *regexp.Regexp
	transport string
}{
	{regexp.MustCompile(`/virtio\d+/`), "virtio"},
	{regexp.MustCompile(`/vbd-\d+/`), "Xen"},
	{regexp.MustCompile(`(?i)/vmbus`), "Hyper-V VMBus"},
	{regexp.MustCompile(`/usb\d+/`), "USB"},
	{regexp.MustCompile(`/session\d+/`), "iSCSI"},
	{regexp.MustCompile(`/rport-`), "Fibre Channel"},
	{regexp.MustCompile(`/end_device-`), "SAS"},
	{regexp.MustCompile(`/ata\d+/`), "SATA"},
	{regexp.MustCompile(`/mmc\d+/`), "MMC/SD"},
	{regexp.MustCompile(`/ndbus\d+/`), "NVDIMM"},
}

// nvmeTransports names the NVMe controller transports (the controller's
// "transport" attribute, Documentation/ABI/testing/sysfs-class-nvme).
var nvmeTransports = map[string]string{
	"pcie": "PCIe", "tcp": "NVMe/TCP", "rdma": "NVMe/RDMA", "fc": "NVMe/FC", "loop": "NVMe loop",
}

// transport guesses how the disk is attached.
func transport(name, disk, hwDir string) string {
	if hwDir != "" {
		t := readSys(filepath.Join(hwDir, "transport"))
		if t == "" {
			// A multipath NVMe head's device is the subsystem; its
			// controllers (nvme0…) carry the transport.
			if m, _ := filepath.Glob(filepath.Join(hwDir, "nvme*", "transport")); len(m) > 0 {
				t = readSys(m[0])
			}
		}
		if nt, ok := nvmeTransports[t]; ok {
			return nt
		}
	}
	for _, p := range transportPaths {
		if p.re.MatchString(disk + "/") {
			return p.transport
		}
	}
	switch {
	case strings.HasPrefix(name, "nbd"):
		return "network (NBD)"
	case strings.HasPrefix(name, "rbd"):
		return "network (Ceph RBD)"
	}
	return ""
}

// describeStack fills the layer and members of a device-mapper, md or
// bcache device (Documentation/ABI/testing/sysfs-block-dm, md.rst).
func (v sysView) describeStack(d *Device, disk string, depth int) {
	switch {
	case exists(filepath.Join(disk, "dm")):
		d.Layer = dmLayer(readSys(filepath.Join(disk, "dm", "name")), readSys(filepath.Join(disk, "dm", "uuid")))
	case exists(filepath.Join(disk, "md")):
		d.Layer = readSys(filepath.Join(disk, "md", "level"))
		if d.Layer == "" {
			d.Layer = "md"
		}
	case exists(filepath.Join(disk, "bcache")):
		d.Layer = "bcache"
	}
	entries, err := os.ReadDir(filepath.Join(disk, "slaves"))
	if err != nil {
		return
	}
	for _, e := range entries {
		dir, err := filepath.EvalSymlinks(filepath.Join(disk, "slaves", e.Name()))
		if err != nil {
			continue
		}
		s := Device{Kind: kindDevice}
		v.describeSysDir(&s, dir, depth+1)
		d.Slaves = append(d.Slaves, s)
	}
}

// dmLayer says what a device-mapper device is from its uuid prefix, set
// by the tool that made it (LVM2, cryptsetup, multipath, kpartx, VDO).
func dmLayer(name, uuid string) string {
	kinds := []struct{ prefix, kind string }{
		{"LVM-", "LVM"}, {"CRYPT-", "dm-crypt"}, {"mpath-", "multipath"}, {"part", "partition"},
		{"VDO-", "VDO"}, {"stratis-", "Stratis"},
	}
	for _, k := range kinds {
		if strings.HasPrefix(uuid, k.prefix) {
			return strings.TrimSpace(k.kind + " " + name)
		}
	}
	return strings.TrimSpace("device-mapper " + name)
}

// describeLoop fills a loop device's backing file and direct-I/O mode
// (Documentation/ABI/testing/sysfs-block-loop).
func (v sysView) describeLoop(d *Device, disk string, depth int) {
	dir := filepath.Join(disk, "loop")
	if !exists(dir) {
		return
	}
	d.LoopDirectIO = readBool(filepath.Join(dir, "dio"))
	if file := readSys(filepath.Join(dir, "backing_file")); file != "" {
		b := v.describe(strings.TrimSuffix(file, " (deleted)"), depth+1)
		b.Path = file
		d.Backing = &b
	}
}

// mount is one line of the mount table.
type mount struct {
	point, fstype, source string
}

// maxMountinfo bounds how much of the mount table is read.
const maxMountinfo = 16 << 20

// mountOf returns the mount holding path: the one with the device number
// num, else (btrfs subvolumes have their own numbers) the one whose mount
// point is the longest prefix of path. The zero mount when unknown.
func (v sysView) mountOf(path, num string) mount {
	f, err := os.Open(v.mountinfo)
	if err != nil {
		return mount{}
	}
	defer f.Close()
	abs, err := filepath.Abs(path)
	if err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
	}
	var best mount
	sc := bufio.NewScanner(io.LimitReader(f, maxMountinfo))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m, dev, ok := parseMountinfo(sc.Text())
		switch {
		case !ok:
		case dev == num:
			return m
		case within(abs, m.point) && len(m.point) > len(best.point):
			best = m
		}
	}
	return best
}

// parseMountinfo parses a line of /proc/PID/mountinfo
// (Documentation/filesystems/proc.rst): "36 35 98:0 /mnt1 /mnt2 rw,noatime
// master:1 - ext3 /dev/root rw,errors=continue".
func parseMountinfo(line string) (m mount, dev string, ok bool) {
	f := strings.Fields(line)
	sep := slices.Index(f, "-")
	if sep < 6 || sep+2 >= len(f) {
		return mount{}, "", false
	}
	return mount{point: unescapeMount(f[4]), fstype: f[sep+1], source: unescapeMount(f[sep+2])}, f[2], true
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// within reports whether path is mount point dir or below it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// filesystemName names the filesystem holding path: the mount table's
// type, else the statfs magic number's.
func filesystemName(path, fstype string) string {
	if fstype != "" {
		return fstype
	}
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return ""
	}
	return fsMagic[uint32(st.Type)]
}

// fsMagic names filesystems by statfs magic (linux/magic.h).
var fsMagic = map[uint32]string{
	unix.EXT4_SUPER_MAGIC: "ext4", unix.XFS_SUPER_MAGIC: "xfs", unix.BTRFS_SUPER_MAGIC: "btrfs",
	unix.TMPFS_MAGIC: "tmpfs", unix.RAMFS_MAGIC: "ramfs", unix.HUGETLBFS_MAGIC: "hugetlbfs",
	unix.NFS_SUPER_MAGIC: "nfs", unix.CIFS_SUPER_MAGIC: "cifs", unix.SMB2_SUPER_MAGIC: "smb3",
	unix.CEPH_SUPER_MAGIC: "ceph", unix.V9FS_MAGIC: "9p", unix.FUSE_SUPER_MAGIC: "fuse",
	unix.OVERLAYFS_SUPER_MAGIC: "overlay", unix.F2FS_SUPER_MAGIC: "f2fs", unix.BCACHEFS_SUPER_MAGIC: "bcachefs",
	unix.SQUASHFS_MAGIC: "squashfs", unix.MSDOS_SUPER_MAGIC: "vfat", unix.EXFAT_SUPER_MAGIC: "exfat",
	unix.OCFS2_SUPER_MAGIC: "ocfs2", unix.REISERFS_SUPER_MAGIC: "reiserfs", unix.AFS_SUPER_MAGIC: "afs",
	unix.NILFS_SUPER_MAGIC: "nilfs2", unix.UDF_SUPER_MAGIC: "udf", unix.ISOFS_SUPER_MAGIC: "iso9660",
	0x2fc12fc1: "zfs", 0x47504653: "gpfs", 0x0bd00bd0: "lustre", 0x5346544e: "ntfs",
}

// filesystemClass returns the class of a filesystem that has no block
// device of its own (memory, network, a VM host's share), "" otherwise.
func filesystemClass(fs string) (class string, virtual bool) {
	switch fs {
	case "tmpfs":
		return ClassTmpfs, false
	case "ramfs", "hugetlbfs":
		return "memory (" + fs + ")", false
	case "nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "fuse.glusterfs", "lustre", "gpfs",
		"afs", "fuse.sshfs", "beegfs", "fuse.cephfs", "fuse.s3fs", "fuse.gcsfuse":
		return ClassNetworkFSPrefix + " (" + fs + ")", false
	case "9p", "virtiofs":
		return "host filesystem shared into the VM (" + fs + ")", true
	}
	return "", false
}

// isVirtual reports whether d is emulated: by a hypervisor or cloud
// (virtio, Xen, Hyper-V, QEMU, VMware, VirtualBox, EBS, Persistent Disk)
// or by the kernel (loop, nbd, rbd, zram, brd).
func isVirtual(d Device) bool {
	switch d.Driver {
	case "virtio_blk", "vbd", "xen-blkfront", "loop", "nbd", "rbd", "zram", "brd":
		return true
	}
	switch d.Transport {
	case "virtio", "Xen", "Hyper-V VMBus":
		return true
	}
	id := strings.ToLower(d.Vendor + " " + d.Model)
	for _, marker := range []string{"qemu", "vmware", "vbox", "virtual", "msft", "amazon elastic block store",
		"persistentdisk", "nvme_card-pd", "xen"} {
		if strings.Contains(id, marker) {
			return true
		}
	}
	if len(d.Slaves) == 0 {
		return false
	}
	for _, s := range d.Slaves {
		if !s.Virtual {
			return false
		}
	}
	return true
}

// classify returns d's class from what describeSysDir found.
func classify(d Device) string {
	switch {
	case d.Driver == "zram" || d.Driver == "brd":
		return ClassRAMDisk
	case d.Driver == "nd_pmem":
		return ClassPmem
	case d.Driver == "loop":
		if d.Backing != nil {
			return ClassLoopPrefix + d.Backing.Path
		}
		return ClassUnknown
	case d.Driver == "nbd" || d.Driver == "rbd" || d.Transport == "iSCSI" || strings.HasPrefix(d.Transport, "NVMe/"):
		return ClassNetworkBlock
	case len(d.Slaves) > 0:
		return combineClasses(d.Slaves)
	case d.Layer != "":
		return ClassUnknown
	case d.Virtual:
		return ClassVirtual
	case isArray(d.Vendor, d.Model):
		return ClassArray
	case d.Transport == "MMC/SD":
		return ClassFlashCard
	case d.Rotational == nil:
		return ClassUnknown
	case *d.Rotational:
		return ClassHDD
	case d.Driver == "nvme":
		return ClassNVMe
	}
	return ClassSSD
}

// combineClasses returns the members' class when they share one, else
// "mixed: A + B" (an LVM cache or bcache of flash over rotating disks).
func combineClasses(members []Device) string {
	var classes []string
	for _, m := range members {
		if !slices.Contains(classes, m.Class) {
			classes = append(classes, m.Class)
		}
	}
	if len(classes) == 1 {
		return classes[0]
	}
	return ClassMixedPrefix + strings.Join(classes, " + ")
}

// isArray reports whether a SCSI vendor and model name a volume of a RAID
// controller or a storage array: its rotational flag describes the volume,
// not the media behind the array's caches.
func isArray(vendor, model string) bool {
	vendor, model = strings.ToUpper(vendor), strings.ToUpper(model)
	switch vendor {
	case "NETAPP", "DGC", "3PARDATA", "PURE", "NIMBLE", "COMPELNT", "NEXSAN", "EQLOGIC", "HUAWEI", "LSI",
		"AVAGO", "BROADCOM", "ADAPTEC":
		return true
	}
	if vendor == "IBM" && (strings.HasPrefix(model, "2145") || strings.HasPrefix(model, "2107") ||
		strings.Contains(model, "FLASHSYSTEM")) {
		return true
	}
	for _, marker := range []string{"PERC", "LOGICAL VOLUME", "MEGARAID", "SERVERAID", "SMART ARRAY", "RAID",
		"OPEN-V", "SYMMETRIX", "FLASHARRAY"} {
		if strings.Contains(model, marker) {
			return true
		}
	}
	return false
}

// maxSysFile bounds a sysfs attribute read (they are one short line).
const maxSysFile = 4096

// readSys returns a sysfs attribute without surrounding blanks ("ATA     "
// → "ATA"), "" when it cannot be read.
func readSys(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSysFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// readInt returns a numeric attribute, 0 when absent or not a number.
func readInt(path string) int {
	n, err := strconv.Atoi(readSys(path))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// readBool returns a 0/1 attribute, nil when absent or anything else.
func readBool(path string) *bool {
	switch readSys(path) {
	case "0":
		return new(false)
	case "1":
		return new(true)
	}
	return nil
}

// exists reports whether path exists (a file, directory or link).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
