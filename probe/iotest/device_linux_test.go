//go:build linux

package iotest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// writeSysTree builds the fake sysfs tree testdata/sysfs/NAME.tree in a
// temporary directory and returns its root. The format is described at
// the top of workstation.tree.
func writeSysTree(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	f, err := os.Open(filepath.Join("testdata", "sysfs", name+".tree"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	expand := func(s string) string { return os.Expand(s, func(k string) string { return vars[k] }) }
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.SplitN(text, " ", 3)
		if len(fields) < 2 {
			t.Fatalf("%s.tree:%d: %q: want OP PATH [VALUE]", name, line, text)
		}
		op, path := fields[0], expand(fields[1])
		value := ""
		if len(fields) == 3 {
			value = expand(fields[2])
		}
		full := filepath.Join(root, path)
		switch op {
		case "set":
			vars[fields[1]] = value
			continue
		case "dir":
			err = os.MkdirAll(full, 0o755)
		case "file":
			if strings.HasPrefix(value, `"`) {
				if value, err = strconv.Unquote(value); err != nil {
					t.Fatalf("%s.tree:%d: %v", name, line, err)
				}
			}
			if err = os.MkdirAll(filepath.Dir(full), 0o755); err == nil {
				err = os.WriteFile(full, []byte(value+"\n"), 0o644)
			}
		case "link":
			if strings.HasPrefix(value, "/") {
				value, err = filepath.Rel(filepath.Dir(full), filepath.Join(root, value))
			}
			if err == nil {
				err = os.MkdirAll(filepath.Dir(full), 0o755)
			}
			if err == nil {
				err = os.Symlink(value, full)
			}
		default:
			t.Fatalf("%s.tree:%d: unknown operation %q", name, line, op)
		}
		if err != nil {
			t.Fatalf("%s.tree:%d: %v", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return root
}

// describeFake describes the block device numbered num in a fake tree, as
// DescribePath does once it has the device number of a block device node.
func describeFake(root, num string) Device {
	d := Device{Path: "/dev/x", Kind: kindDevice, Class: ClassUnknown}
	sysView{sys: root}.describeBlock(&d, num, 0)
	return d
}

// TestDescribeFakeTrees checks every device of the synthetic trees field by
// field.
func TestDescribeFakeTrees(t *testing.T) {
	trees := map[string]string{}
	for _, name := range []string{"workstation", "server", "cloud"} {
		trees[name] = writeSysTree(t, name)
	}
	yes, no := boolPtr(true), boolPtr(false)
	nvmeP3 := Device{Kind: kindDevice, Device: "nvme0n1", Partition: "nvme0n1p3", MajorMinor: "259:3",
		Rotational: no, LogicalBlockSize: 512, PhysicalBlockSize: 512, Model: "Samsung SSD 970 EVO Plus 1TB",
		Driver: "nvme", Transport: "PCIe", Class: ClassNVMe}
	sda1 := Device{Kind: kindDevice, Device: "sda", Partition: "sda1", MajorMinor: "8:1", Rotational: no,
		LogicalBlockSize: 512, PhysicalBlockSize: 512, Model: "Samsung SSD 860", Vendor: "ATA", Driver: "sd",
		Transport: "SATA", Class: ClassSSD}
	sdb1 := Device{Kind: kindDevice, Device: "sdb", Partition: "sdb1", MajorMinor: "8:17", Rotational: yes,
		LogicalBlockSize: 512, PhysicalBlockSize: 4096, Model: "ST600MM0088", Vendor: "SEAGATE", Driver: "sd",
		Transport: "SAS", Class: ClassHDD}
	sdc1 := Device{Kind: kindDevice, Device: "sdc", Partition: "sdc1", MajorMinor: "8:33", Rotational: yes,
		LogicalBlockSize: 512, PhysicalBlockSize: 512, Model: "HUC101860CSS200", Vendor: "HGST", Driver: "sd",
		Transport: "SAS", Class: ClassHDD}
	md0 := Device{Kind: kindDevice, Device: "md0", MajorMinor: "9:0", Layer: "raid1",
		Slaves: []Device{sdb1, sdc1}, Rotational: yes, LogicalBlockSize: 512, PhysicalBlockSize: 4096,
		Driver: "md", Class: ClassHDD}
	sdd := Device{Kind: kindDevice, Device: "sdd", MajorMinor: "8:48", Rotational: no, LogicalBlockSize: 512,
		PhysicalBlockSize: 4096, Model: "INTEL SSDSC2KB48", Vendor: "ATA", Driver: "sd", Transport: "SAS",
		Class: ClassSSD}
	tests := []struct {
		tree, num string
		want      Device
		summary   string
	}{
		{"workstation", "259:0", Device{Device: "nvme0n1", MajorMinor: "259:0", Rotational: no,
			LogicalBlockSize: 512, PhysicalBlockSize: 512, Model: "Samsung SSD 970 EVO Plus 1TB", Driver: "nvme",
			Transport: "PCIe", Class: ClassNVMe},
			"nvme0n1 (nvme, PCIe, NVMe SSD, Samsung SSD 970 EVO Plus 1TB), 512 B logical blocks"},
		{"workstation", "259:3", nvmeP3,
			"nvme0n1p3 on nvme0n1 (nvme, PCIe, NVMe SSD, Samsung SSD 970 EVO Plus 1TB), 512 B logical blocks"},
		{"workstation", "8:0", Device{Device: "sda", MajorMinor: "8:0", Rotational: no, LogicalBlockSize: 512,
			PhysicalBlockSize: 512, Model: "Samsung SSD 860", Vendor: "ATA", Driver: "sd", Transport: "SATA",
			Class: ClassSSD},
			"sda (sd, SATA, SSD, Samsung SSD 860), 512 B logical blocks"},
		{"workstation", "253:0", Device{Device: "dm-0", MajorMinor: "253:0", Layer: "LVM vg0-root",
			Slaves: []Device{nvmeP3}, Rotational: no, LogicalBlockSize: 512, PhysicalBlockSize: 512,
			Driver: "device-mapper", Class: ClassNVMe},
			"dm-0 (device-mapper, LVM vg0-root over nvme0n1p3, NVMe SSD), 512 B logical blocks"},
		{"workstation", "253:1", Device{Device: "dm-1", MajorMinor: "253:1", Layer: "dm-crypt luks-data",
			Slaves: []Device{sda1}, Rotational: no, LogicalBlockSize: 512, PhysicalBlockSize: 4096,
			Driver: "device-mapper", Class: ClassSSD},
			"dm-1 (device-mapper, dm-crypt luks-data over sda1, SSD), 512 B logical / 4 KiB physical blocks"},
		{"server", "8:17", sdb1,
			"sdb1 on sdb (sd, SAS, rotating disk (HDD), ST600MM0088), 512 B logical / 4 KiB physical blocks"},
		{"server", "9:0", md0,
			"md0 (md, raid1 over sdb1 + sdc1, rotating disk (HDD)), 512 B logical / 4 KiB physical blocks"},
		{"server", "8:0", Device{Device: "sda", MajorMinor: "8:0", Rotational: yes, LogicalBlockSize: 512,
			PhysicalBlockSize: 512, Model: "PERC H730P Mini", Vendor: "DELL", Driver: "sd", Class: ClassArray},
			"sda (sd, storage array or RAID volume, PERC H730P Mini, reports rotational=1), 512 B logical blocks"},
		{"server", "253:2", Device{Device: "dm-2", MajorMinor: "253:2", Layer: "LVM data-oradata",
			Slaves: []Device{md0, sdd}, Rotational: yes, LogicalBlockSize: 512, PhysicalBlockSize: 4096,
			Driver: "device-mapper", Class: "mixed: rotating disk (HDD) + SSD"},
			"dm-2 (device-mapper, LVM data-oradata over md0 + sdd, mixed: rotating disk (HDD) + SSD, " +
				"reports rotational=1), 512 B logical / 4 KiB physical blocks"},
		{"cloud", "259:0", Device{Device: "nvme0n1", MajorMinor: "259:0", Rotational: no, LogicalBlockSize: 512,
			PhysicalBlockSize: 512, Model: "Amazon Elastic Block Store", Driver: "nvme", Transport: "PCIe",
			Virtual: true, Class: ClassVirtual},
			"nvme0n1 (nvme, PCIe, virtual disk, Amazon Elastic Block Store, reports rotational=0), 512 B logical blocks"},
		{"cloud", "259:1", Device{Device: "nvme1n1", MajorMinor: "259:1", Rotational: no, LogicalBlockSize: 512,
			PhysicalBlockSize: 512, Model: "Amazon EC2 NVMe Instance Storage", Driver: "nvme", Transport: "PCIe",
			Class: ClassNVMe},
			"nvme1n1 (nvme, PCIe, NVMe SSD, Amazon EC2 NVMe Instance Storage), 512 B logical blocks"},
		{"cloud", "202:0", Device{Device: "xvda", MajorMinor: "202:0", Rotational: no, LogicalBlockSize: 512,
			PhysicalBlockSize: 512, Driver: "vbd", Transport: "Xen", Virtual: true, Class: ClassVirtual},
			"xvda (vbd, Xen, virtual disk, reports rotational=0), 512 B logical blocks"},
		{"cloud", "8:16", Device{Device: "sdb", MajorMinor: "8:16", Rotational: yes, LogicalBlockSize: 512,
			PhysicalBlockSize: 4096, Model: "PersistentDisk", Vendor: "Google", Driver: "sd", Transport: "virtio",
			Virtual: true, Class: ClassVirtual},
			"sdb (sd, virtio, virtual disk, PersistentDisk, reports rotational=1), 512 B logical / 4 KiB physical blocks"},
		{"cloud", "7:0", Device{Device: "loop0", MajorMinor: "7:0", Rotational: yes, LogicalBlockSize: 512,
			PhysicalBlockSize: 512, Driver: "loop", Virtual: true, LoopDirectIO: yes,
			Backing: &Device{Path: "/var/lib/images/disk.img", Class: ClassUnknown},
			Class:   "loop device over /var/lib/images/disk.img"},
			"loop0 (loop, direct I/O on, loop device over /var/lib/images/disk.img), 512 B logical blocks; " +
				"the file is on unknown device"},
		{"cloud", "259:2", Device{Device: "nvme2n1", MajorMinor: "259:2", Rotational: no, LogicalBlockSize: 512,
			PhysicalBlockSize: 512, Model: "Linux", Driver: "nvme", Transport: "NVMe/TCP", Class: ClassNetworkBlock},
			"nvme2n1 (nvme, NVMe/TCP, network block device, Linux), 512 B logical blocks"},
	}
	for _, tc := range tests {
		t.Run(tc.tree+"/"+tc.num, func(t *testing.T) {
			want := tc.want
			want.Path, want.Kind = "/dev/x", kindDevice
			got := describeFake(trees[tc.tree], tc.num)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got\n%s\nwant\n%s", jsonOf(t, got), jsonOf(t, want))
			}
			if s := got.Summary(); s != tc.summary {
				t.Errorf("Summary() = %q\nwant        %q", s, tc.summary)
			}
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDescribeBrokenTree: attributes that are not what the kernel writes,
// missing directories, dangling links, a slave cycle and a self-link give
// empty fields, never a failure.
func TestDescribeBrokenTree(t *testing.T) {
	root := writeSysTree(t, "broken")
	odd := describeFake(root, "250:0")
	want := Device{Path: "/dev/x", Kind: kindDevice, Device: "odd0", MajorMinor: "250:0", Class: ClassUnknown}
	if !reflect.DeepEqual(odd, want) {
		t.Errorf("odd0: got\n%s\nwant\n%s", jsonOf(t, odd), jsonOf(t, want))
	}
	bare := describeFake(root, "250:1")
	want = Device{Path: "/dev/x", Kind: kindDevice, Device: "bare0", MajorMinor: "250:1", Class: ClassUnknown}
	if !reflect.DeepEqual(bare, want) {
		t.Errorf("bare0: got\n%s\nwant\n%s", jsonOf(t, bare), jsonOf(t, want))
	}
	// The cycle is followed maxStackDepth levels deep and then cut.
	cycle := describeFake(root, "253:7")
	depth := 0
	for d := cycle; len(d.Slaves) > 0; d = d.Slaves[0] {
		depth++
		if d.Device != "dm-7" && d.Device != "dm-8" {
			t.Errorf("level %d: device %q", depth, d.Device)
		}
	}
	if depth != maxStackDepth {
		t.Errorf("slave cycle followed %d levels, want %d", depth, maxStackDepth)
	}
	if cycle.Layer != "device-mapper a" || len(cycle.Slaves) != 1 {
		t.Errorf("dm-7: layer %q, %d slaves (the dangling one must be skipped)", cycle.Layer, len(cycle.Slaves))
	}
	for _, num := range []string{"250:2", "250:3", "1:1", "x"} {
		d := describeFake(root, num)
		want := Device{Path: "/dev/x", Kind: kindDevice, Class: ClassUnknown}
		if !reflect.DeepEqual(d, want) {
			t.Errorf("%s: got %s", num, jsonOf(t, d))
		}
	}
	// A missing sysfs altogether.
	d := Device{Class: ClassUnknown}
	if (sysView{sys: filepath.Join(root, "none")}).describeBlock(&d, "8:0", 0) {
		t.Error("describeBlock found a device under a missing root")
	}
}

// lsblkDevice is one device as lsblk --json reports it.
type lsblkDevice struct {
	Name     string  `json:"name"`
	PKName   *string `json:"pkname"`
	MajMin   string  `json:"maj:min"`
	Rota     bool    `json:"rota"`
	LogSec   int     `json:"log-sec"`
	PhySec   int     `json:"phy-sec"`
	Model    *string `json:"model"`
	Vendor   *string `json:"vendor"`
	Type     string  `json:"type"`
	Children []lsblkDevice
}

// lsblkAll returns every block device lsblk knows, by major:minor.
func lsblkAll(t *testing.T) map[string]lsblkDevice {
	t.Helper()
	if _, err := exec.LookPath("lsblk"); err != nil {
		testenv.SkipOrFail(t, "lsblk (util-linux) not installed")
	}
	out, err := exec.Command("lsblk", "--json", "--all", "--bytes", "-o",
		"NAME,PKNAME,MAJ:MIN,ROTA,LOG-SEC,PHY-SEC,MODEL,VENDOR,TYPE").Output()
	if err != nil {
		testenv.SkipOrFail(t, "lsblk: %v", err)
	}
	var doc struct {
		BlockDevices []lsblkDevice `json:"blockdevices"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("lsblk --json: %v", err)
	}
	all := map[string]lsblkDevice{}
	var walk func([]lsblkDevice)
	walk = func(devs []lsblkDevice) {
		for _, d := range devs {
			all[d.MajMin] = d
			walk(d.Children)
		}
	}
	walk(doc.BlockDevices)
	return all
}

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

// TestDescribeAgreesWithLsblk describes every block-backed mount point of
// this machine and checks the block facts against lsblk, which reads them
// independently, and the filesystem against statfs.
func TestDescribeAgreesWithLsblk(t *testing.T) {
	all := lsblkAll(t)
	seen := 0
	for _, m := range blockMounts(t) {
		d := DescribePath(m.point)
		l, ok := all[d.MajorMinor]
		if !ok {
			continue // a mount of a device lsblk does not list (e.g. in a container)
		}
		seen++
		wantDisk, wantPart := l.Name, ""
		if l.Type == "part" {
			wantDisk, wantPart = orEmpty(l.PKName), l.Name
		}
		disk := all[d.MajorMinor]
		if wantPart != "" {
			for _, x := range all {
				if x.Name == wantDisk {
					disk = x
				}
			}
		}
		if d.Kind != kindScratch || d.Device != wantDisk || d.Partition != wantPart || d.Rotational == nil ||
			*d.Rotational != disk.Rota || d.LogicalBlockSize != disk.LogSec || d.PhysicalBlockSize != disk.PhySec ||
			d.Model != orEmpty(disk.Model) || d.Vendor != orEmpty(disk.Vendor) || d.Filesystem != m.fstype {
			t.Errorf("%s: got %s\nlsblk says %+v, mountinfo %+v", m.point, jsonOf(t, d), disk, m)
		}
	}
	if seen == 0 {
		testenv.SkipOrFail(t, "no mounted block device that lsblk lists")
	}
	t.Logf("%d mounts checked against lsblk", seen)
}

// blockMounts returns the mounts of this process whose device number has
// a nonzero major (filesystems on block devices), parsed independently of
// mountOf.
func blockMounts(t *testing.T) []mount {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		testenv.SkipOrFail(t, "no /proc/self/mountinfo: %v", err)
	}
	var mounts []mount
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || strings.HasPrefix(f[2], "0:") || strings.Contains(f[4], `\`) {
			continue
		}
		for i, x := range f {
			if x == "-" && i+2 < len(f) {
				mounts = append(mounts, mount{point: f[4], fstype: f[i+1], source: f[i+2]})
				break
			}
		}
		if len(mounts) == 20 {
			break
		}
	}
	return mounts
}

// TestDescribeThisMachine pins what the development VM has: a virtio disk
// vda (254:0) that says rotational=1 holding the ext4 root, a zram0 RAM
// disk, tmpfs on /dev/shm. Other machines are covered by
// TestDescribeAgreesWithLsblk.
func TestDescribeThisMachine(t *testing.T) {
	if target, _ := os.Readlink("/sys/block/vda/device/driver"); filepath.Base(target) != "virtio_blk" ||
		readSys("/sys/block/vda/dev") != "254:0" {
		t.Skip("not the development VM (no virtio disk vda at 254:0)")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	vda := Device{Device: "vda", MajorMinor: "254:0", Rotational: boolPtr(true), LogicalBlockSize: 512,
		PhysicalBlockSize: 4096, Vendor: "0x1af4", Driver: "virtio_blk", Transport: "virtio", Virtual: true,
		Class: ClassVirtual}
	tests := []struct {
		path, kind, fs string
		want           Device
		summary        string
	}{
		{dir, kindScratch, "ext4", vda,
			"vda (virtio_blk, virtual disk, reports rotational=1), ext4, 512 B logical / 4 KiB physical blocks"},
		{file, kindFile, "ext4", vda,
			"vda (virtio_blk, virtual disk, reports rotational=1), ext4, 512 B logical / 4 KiB physical blocks"},
		{"/dev/vda", kindDevice, "", vda,
			"vda (virtio_blk, virtual disk, reports rotational=1), 512 B logical / 4 KiB physical blocks"},
		{"/dev/zram0", kindDevice, "", Device{Device: "zram0", MajorMinor: "253:0", Rotational: boolPtr(false),
			LogicalBlockSize: 4096, PhysicalBlockSize: 4096, Driver: "zram", Virtual: true, Class: ClassRAMDisk},
			"zram0 (zram, RAM disk (zram/brd)), 4 KiB logical blocks"},
		{"/dev/shm", kindScratch, "tmpfs", Device{Class: ClassTmpfs}, "memory (tmpfs)"},
		{filepath.Join(dir, "missing"), "", "", Device{Class: ClassUnknown}, "unknown device"},
		{"/dev/null", "", "", Device{Class: ClassUnknown}, "unknown device"},
	}
	for _, tc := range tests {
		want := tc.want
		want.Path, want.Kind, want.Filesystem = tc.path, tc.kind, tc.fs
		got := DescribePath(tc.path)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.path, jsonOf(t, got), jsonOf(t, want))
		}
		if s := got.Summary(); s != tc.summary {
			t.Errorf("%s: Summary() = %q, want %q", tc.path, s, tc.summary)
		}
	}
}

// TestDescribeTmpfs: wherever a tmpfs is mounted, a directory on it is
// memory, with no block device.
func TestDescribeTmpfs(t *testing.T) {
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) != nil || uint32(st.Type) != uint32(unix.TMPFS_MAGIC) {
		testenv.SkipOrFail(t, "no tmpfs on /dev/shm")
	}
	dir, err := os.MkdirTemp("/dev/shm", "latscope-device-")
	if err != nil {
		testenv.SkipOrFail(t, "cannot write /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := DescribePath(dir)
	if d.Filesystem != "tmpfs" || d.Class != ClassTmpfs || d.Device != "" || d.Kind != kindScratch {
		t.Errorf("got %s", jsonOf(t, d))
	}
	w := Plausibility(d, Observed{Direct: true, P50US: 2})
	if len(w) != 1 || !strings.Contains(w[0], "this measures memory, not storage") {
		t.Errorf("Plausibility = %q", w)
	}
}

// TestDescribeLoopDevice attaches a real loop device to a file, with the
// loop driver's direct I/O off and on, and describes it with its backing
// storage.
func TestDescribeLoopDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "loop devices need root")
	}
	if _, err := exec.LookPath("losetup"); err != nil {
		testenv.SkipOrFail(t, "losetup (util-linux) not installed")
	}
	file := filepath.Join(t.TempDir(), "backing.img")
	if err := os.WriteFile(file, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	backing := DescribePath(file)
	for _, dio := range []bool{false, true} {
		args := []string{"-f", "--show", "--direct-io=" + map[bool]string{false: "off", true: "on"}[dio], file}
		out, err := exec.Command("losetup", args...).CombinedOutput()
		if err != nil {
			testenv.SkipOrFail(t, "losetup %s: %v: %s", strings.Join(args, " "), err, out)
		}
		dev := strings.TrimSpace(string(out))
		t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
		var st unix.Stat_t
		if err := unix.Stat(dev, &st); err != nil {
			t.Fatal(err)
		}
		d := DescribePath(dev)
		want := Device{Path: dev, Kind: kindDevice, Device: filepath.Base(dev), MajorMinor: devNumber(st.Rdev),
			Rotational: d.Rotational, LogicalBlockSize: 512, PhysicalBlockSize: d.PhysicalBlockSize,
			Driver: "loop", Virtual: true, LoopDirectIO: boolPtr(dio), Backing: &backing,
			Class: ClassLoopPrefix + file}
		if !reflect.DeepEqual(d, want) {
			t.Errorf("%s (dio %v): got\n%s\nwant\n%s", dev, dio, jsonOf(t, d), jsonOf(t, want))
		}
		// The loop driver takes the rotational flag from the backing
		// file's device.
		if d.Rotational == nil || backing.Rotational == nil || *d.Rotational != *backing.Rotational {
			t.Errorf("%s: rotational %v, backing %v", dev, d.Rotational, backing.Rotational)
		}
		wantSummary := filepath.Base(dev) + " (loop, direct I/O " + map[bool]string{false: "off", true: "on"}[dio] +
			", loop device over " + file + "), 512 B logical"
		if !strings.HasPrefix(d.Summary(), wantSummary) || !strings.HasSuffix(d.Summary(), "; the file is on "+backing.Summary()) {
			t.Errorf("Summary() = %q", d.Summary())
		}
		w := Plausibility(d, Observed{Direct: true, P50US: 60})
		cached := len(w) > 0 && strings.Contains(w[0], "loop/dio=0")
		if cached == dio {
			t.Errorf("dio %v: warnings %q", dio, w)
		}
		exec.Command("losetup", "-d", dev).Run()
	}
}

// TestParseMountinfo checks the mount table parser on lines of the format
// proc(5) documents, with an escaped blank in a mount point.
func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		line string
		want mount
		dev  string
		ok   bool
	}{
		{"36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
			mount{"/mnt2", "ext3", "/dev/root"}, "98:0", true},
		{"29 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard", mount{"/", "ext4", "/dev/vda"}, "254:0", true},
		{`40 29 0:45 / /mnt/my\040disk rw shared:5 - tmpfs tmp\134fs rw`,
			mount{"/mnt/my disk", "tmpfs", `tmp\fs`}, "0:45", true},
		{"41 29 0:46 / /x rw - btrfs", mount{}, "", false},
		{"1 2 3 4 5 - a b", mount{}, "", false},
		{"", mount{}, "", false},
		{`1 2 3:4 / /a\9 rw - x /y\04 z`, mount{`/a\9`, "x", `/y\04`}, "3:4", true},
	}
	for _, tc := range tests {
		m, dev, ok := parseMountinfo(tc.line)
		if m != tc.want || dev != tc.dev || ok != tc.ok {
			t.Errorf("%q: got %+v %q %v, want %+v %q %v", tc.line, m, dev, ok, tc.want, tc.dev, tc.ok)
		}
	}
}

// FuzzParseMountinfo: any line parses or is refused, never a panic, and
// what parses has the fields from around the separator.
func FuzzParseMountinfo(f *testing.F) {
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f.Add(line)
		}
	}
	f.Add(`40 29 0:45 / /mnt/my\040disk rw shared:5 - tmpfs tmp\134fs rw`)
	f.Add(`1 2 3:4 / /a\ rw - x \`)
	f.Fuzz(func(t *testing.T, line string) {
		m, _, ok := parseMountinfo(line)
		if !ok && m != (mount{}) {
			t.Errorf("refused line gave %+v", m)
		}
	})
}
