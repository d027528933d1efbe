package iotest

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// Devices as DescribePath reports them (the sysfs trees under
// testdata/sysfs and this machine's disks give the same values).
func boolPtr(b bool) *bool { return &b }

var (
	devVda = Device{Path: "/tmp", Kind: "scratch file", Filesystem: "ext4", Device: "vda", MajorMinor: "254:0",
		Rotational: boolPtr(true), LogicalBlockSize: 512, PhysicalBlockSize: 4096, Vendor: "0x1af4",
		Driver: "virtio_blk", Transport: "virtio", Virtual: true, Class: ClassVirtual}
	devEBS = Device{Device: "nvme0n1", Rotational: boolPtr(false), Model: "Amazon Elastic Block Store",
		Driver: "nvme", Transport: "PCIe", Virtual: true, Class: ClassVirtual}
	devHDD = Device{Device: "sdb", Rotational: boolPtr(true), Model: "ST600MM0088", Vendor: "SEAGATE",
		Driver: "sd", Transport: "SAS", Class: ClassHDD}
	devMD = Device{Device: "md0", Layer: "raid1", Rotational: boolPtr(true), Driver: "md", Class: ClassHDD,
		Slaves: []Device{devHDD, devHDD}}
	devPERC = Device{Device: "sda", Rotational: boolPtr(true), Model: "PERC H730P Mini", Vendor: "DELL",
		Driver: "sd", Class: ClassArray}
	devNVMe = Device{Device: "nvme0n1", Rotational: boolPtr(false), Model: "Samsung SSD 970 EVO Plus 1TB",
		Driver: "nvme", Transport: "PCIe", Class: ClassNVMe}
	devSSD   = Device{Device: "sda", Rotational: boolPtr(false), Driver: "sd", Transport: "SATA", Class: ClassSSD}
	devTmpfs = Device{Path: "/dev/shm", Kind: "scratch file", Filesystem: "tmpfs", Class: ClassTmpfs}
	devZram  = Device{Device: "zram0", Rotational: boolPtr(false), Driver: "zram", Virtual: true, Class: ClassRAMDisk}
	devZFS   = Device{Path: "/tank", Kind: "scratch file", Filesystem: "zfs", Class: ClassUnknown}
	devMixed = Device{Device: "dm-2", Layer: "LVM data-oradata", Rotational: boolPtr(true), Driver: "device-mapper",
		Class: "mixed: rotating disk (HDD) + SSD", Slaves: []Device{devMD, devSSD}}
	devLoopOff = Device{Device: "loop0", Rotational: boolPtr(true), Driver: "loop", Virtual: true,
		LoopDirectIO: boolPtr(false), Backing: &devVda, Class: ClassLoopPrefix + "/tmp/f"}
	devLoopOn = Device{Device: "loop0", Rotational: boolPtr(true), Driver: "loop", Virtual: true,
		LoopDirectIO: boolPtr(true), Backing: &devHDD, Class: ClassLoopPrefix + "/data/f"}
	devNBD     = Device{Device: "nbd0", Driver: "nbd", Virtual: true, Class: ClassNetworkBlock}
	devUnknown = Device{Path: "/x", Class: ClassUnknown}
)

// Substrings that identify each plausibility rule's warning.
const (
	rulePageCache = "went through the page cache"
	ruleMemoryDev = "this measures memory, not storage"
	ruleZFS       = "ARC"
	ruleLoop      = "loop/dio=0"
	ruleMemory    = "faster than any O_DIRECT round trip"
	ruleRotating  = "a rotating disk needs a seek"
	ruleIOPS      = "IOPS from"
	ruleFlag      = "reports rotational=1, yet"
	ruleSSD       = "faster than flash reads"
)

func TestPlausibilityRules(t *testing.T) {
	modes := func(m ...float64) []LatencyMode {
		var out []LatencyMode
		for i := 0; i+1 < len(m); i += 2 {
			out = append(out, LatencyMode{CenterUS: m[i], Fraction: m[i+1]})
		}
		return out
	}
	tests := []struct {
		name string
		d    Device
		o    Observed
		want []string
	}{
		{"page cache on a virtual disk", devVda, Observed{P50US: 2}, []string{rulePageCache}},
		{"page cache on tmpfs", devTmpfs, Observed{P50US: 2}, []string{rulePageCache, ruleMemoryDev}},
		{"O_DIRECT on tmpfs", devTmpfs, Observed{Direct: true, P50US: 3}, []string{ruleMemoryDev}},
		{"zram", devZram, Observed{Direct: true, P50US: 6}, []string{ruleMemoryDev}},
		// The development VM: vda says rotational=1 and serves ~60 µs.
		{"virtual rotational=1 at 60 µs", devVda, Observed{Direct: true, P50US: 62, Modes: modes(62, 1)},
			[]string{ruleFlag}},
		{"virtual rotational=1 at 6 ms", devVda, Observed{Direct: true, P50US: 6000, Modes: modes(6000, 1)}, nil},
		{"virtual rotational=1 in memory", devVda, Observed{Direct: true, P50US: 4, Modes: modes(4, 0.9, 60, 0.1)},
			[]string{ruleMemory, ruleFlag}},
		{"virtual rotational=0", devEBS, Observed{Direct: true, P50US: 600}, nil},
		// "23 SAS disks delivering 20K IOPS?": cache hits on rotating disks.
		{"HDD served by a cache", devHDD, Observed{Direct: true, P50US: 300, IOPS: 20000,
			Modes: modes(300, 0.62, 6000, 0.38)}, []string{ruleRotating, ruleIOPS}},
		{"HDD seeking", devHDD, Observed{Direct: true, P50US: 6100, IOPS: 160, Modes: modes(6100, 1)}, nil},
		{"HDD deep queue, too many IOPS", devHDD, Observed{Direct: true, P50US: 3000, IOPS: 4000}, []string{ruleIOPS}},
		{"HDD latency unknown", devHDD, Observed{Direct: true, P50US: math.NaN(), IOPS: math.NaN()}, nil},
		{"RAID1 of two HDDs, 900 IOPS", devMD, Observed{Direct: true, P50US: 5000, IOPS: 900}, nil},
		{"RAID1 of two HDDs, 1500 IOPS", devMD, Observed{Direct: true, P50US: 5000, IOPS: 1500}, []string{ruleIOPS}},
		{"RAID controller volume", devPERC, Observed{Direct: true, P50US: 200, IOPS: 20000}, []string{ruleFlag}},
		{"NVMe flash", devNVMe, Observed{Direct: true, P50US: 80, IOPS: 12000}, nil},
		{"NVMe DRAM", devNVMe, Observed{Direct: true, P50US: 12}, []string{ruleSSD}},
		{"SATA SSD in memory", devSSD, Observed{Direct: true, P50US: 4, Modes: modes(4, 0.8)}, []string{ruleMemory}},
		{"ZFS", devZFS, Observed{Direct: true, P50US: 50}, []string{ruleZFS}},
		{"loop without direct I/O", devLoopOff, Observed{Direct: true, P50US: 3},
			[]string{ruleLoop, ruleMemory}},
		{"loop with direct I/O over an HDD", devLoopOn, Observed{Direct: true, P50US: 400}, []string{ruleRotating}},
		{"mixed stack (LVM cache)", devMixed, Observed{Direct: true, P50US: 200, IOPS: 20000,
			Modes: modes(200, 0.6, 6000, 0.4)}, nil},
		{"network block device in memory", devNBD, Observed{Direct: true, P50US: 5}, []string{ruleMemory}},
		{"unknown device", devUnknown, Observed{Direct: true, P50US: 100}, nil},
		{"nothing measured", devHDD, Observed{Direct: true}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Plausibility(tc.d, tc.o)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d warnings, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, rule := range tc.want {
				if !strings.Contains(got[i], rule) {
					t.Errorf("warning %d = %q, want the %q rule", i, got[i], rule)
				}
			}
		})
	}
}

// TestPlausibilityText pins the full wording of the main warnings.
func TestPlausibilityText(t *testing.T) {
	tests := []struct {
		d    Device
		o    Observed
		want []string
	}{
		{devVda, Observed{Direct: true, P50US: 62, Modes: []LatencyMode{{62, 1}}}, []string{
			"vda reports rotational=1, yet 100 % of reads took ~62 µs, which no rotating disk can do: on a " +
				"virtual disk the flag says nothing about the physical media; these reads came from flash or a " +
				"cache (possibly the host's page cache)"}},
		{devHDD, Observed{Direct: true, P50US: 250, IOPS: 21000, WorkingSet: 256 << 20,
			Modes: []LatencyMode{{250, 0.62}, {6100, 0.38}}}, []string{
			"median 250 µs on sdb (rotating disk (HDD)): a rotating disk needs a seek and half a rotation per " +
				"random read (≥ ~2 ms even at 15k rpm), so a cache served most reads (drive or controller cache, " +
				"or the working set is small): grow the working set (--size) beyond the cache (it was 256 MiB)",
			"21000 IOPS from one rotating disk: a rotating disk serves at most a few hundred random reads per " +
				"second (~500 even with deep queues), so a cache answered most of them: grow the working set " +
				"(--size) beyond the cache (it was 256 MiB)"}},
		{devSSD, Observed{Direct: true, P50US: 3.5, WorkingSet: 1 << 30}, []string{
			"at least half of the reads took ~3.5 µs, faster than any O_DIRECT round trip to a storage device " +
				"(≥ ~10 µs even on the fastest NVMe): memory served them (a filesystem that ignores O_DIRECT, a " +
				"RAM disk, or a cache in the I/O path); grow the working set (--size) beyond the cache (it was 1 GiB)"}},
		{devNVMe, Observed{Direct: true, P50US: 12.4}, []string{
			"median 12 µs on nvme0n1 (NVMe SSD): faster than flash reads (≥ ~50 µs for NAND, ~15 µs for the " +
				"lowest-latency flash), so the drive's DRAM cache or a cache above it served most reads: grow the " +
				"working set (--size) beyond the cache"}},
		{devTmpfs, Observed{Direct: false}, []string{
			"reads went through the page cache (no O_DIRECT): the latencies are those of memory, not of the storage",
			"/dev/shm keeps data in memory (memory (tmpfs)): this measures memory, not storage"}},
	}
	for _, tc := range tests {
		if got := Plausibility(tc.d, tc.o); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.d.Summary(), got, tc.want)
		}
	}
}

func TestLabelMode(t *testing.T) {
	tests := []struct {
		d       Device
		us      float64
		fastest bool
		want    string
	}{
		{devNVMe, 3, true, ReadingMemory},
		{devNVMe, 12, true, ReadingDRAM},
		{devNVMe, 12, false, ReadingFlash},
		{devNVMe, 80, true, ReadingFlash},
		{devNVMe, 2500, false, ReadingSlow},
		{devSSD, 150, true, ReadingFlash},
		{devHDD, 200, true, ReadingCache},
		{devHDD, 6000, false, ReadingRotating},
		{devHDD, 60000, false, ReadingSlow},
		{devMD, 8000, true, ReadingRotating},
		{devVda, 62, true, "likely " + ReadingFlashOrHostCache},
		{devVda, 6000, false, "likely " + ReadingRotatingOrThrottled},
		{devVda, 50000, false, ReadingSlow},
		{devEBS, 600, true, "likely " + ReadingFlashOrHostCache},
		{devPERC, 200, true, "likely " + ReadingFlashOrCache},
		{devPERC, 7000, false, "likely " + ReadingRotating},
		{devUnknown, 200, true, "likely " + ReadingFlashOrCache},
		{devUnknown, 6000, false, "likely " + ReadingRotating},
		{devTmpfs, 2, true, "memory"},
		{devTmpfs, 40, false, ReadingMemoryBusy},
		{devZram, 8, true, "memory"},
		{devNBD, 300, true, ReadingRemoteFast},
		{devNBD, 4000, false, ReadingRemoteMedia},
		{devLoopOn, 7000, true, ReadingRotating},
		{devLoopOff, 7000, true, "likely " + ReadingRotatingOrThrottled},
		{devHDD, 0, true, ""},
		{devHDD, math.NaN(), true, ""},
		{devHDD, math.Inf(1), true, ""},
	}
	for _, tc := range tests {
		if got := LabelMode(tc.d, tc.us, tc.fastest); got != tc.want {
			t.Errorf("LabelMode(%s, %g, %v) = %q, want %q", tc.d.Device+tc.d.Path, tc.us, tc.fastest, got, tc.want)
		}
	}
}

// TestLabelModesInContext: the issue's example, "62 % of reads at ~0.2 ms
// — cache; 38 % at ~6 ms — media", on devices of each kind.
func TestLabelModesInContext(t *testing.T) {
	tests := []struct {
		d       Device
		centers []float64
		want    []string
	}{
		{devMixed, []float64{200, 6000}, []string{"likely " + ReadingCacheTier, "likely " + ReadingRotating}},
		{devPERC, []float64{200, 6000}, []string{"likely " + ReadingCacheTier, "likely " + ReadingRotating}},
		{devUnknown, []float64{200}, []string{"likely " + ReadingFlashOrCache}},
		{devHDD, []float64{200, 6000}, []string{ReadingCache, ReadingRotating}},
		{devNVMe, []float64{12, 90}, []string{ReadingDRAM, ReadingFlash}},
		{devNVMe, []float64{90, 12}, []string{ReadingFlash, ReadingDRAM}},
		{devVda, []float64{3, 60, 4000}, []string{ReadingMemory, "likely " + ReadingFlashOrHostCache,
			"likely " + ReadingRotatingOrThrottled}},
		{devHDD, nil, []string{}},
	}
	for _, tc := range tests {
		if got := LabelModes(tc.d, tc.centers); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("LabelModes(%s, %v) = %q, want %q", tc.d.Summary(), tc.centers, got, tc.want)
		}
	}
}

func TestSummaryWithoutSysfs(t *testing.T) {
	tests := []struct {
		d    Device
		want string
	}{
		{devTmpfs, "memory (tmpfs)"},
		{devZFS, "unknown device, zfs"},
		{Device{Filesystem: "nfs4", Class: ClassNetworkFSPrefix + " (nfs4)"}, "network filesystem (nfs4)"},
		{Device{}, "unknown device"},
		{devVda, "vda (virtio_blk, virtual disk, reports rotational=1), ext4, 512 B logical / 4 KiB physical blocks"},
		{devMD, "md0 (md, raid1 over sdb + sdb, rotating disk (HDD))"},
	}
	for _, tc := range tests {
		if got := tc.d.Summary(); got != tc.want {
			t.Errorf("Summary() = %q, want %q", got, tc.want)
		}
	}
}

func TestFormatUS(t *testing.T) {
	tests := map[float64]string{0.5: "0.5 µs", 3: "3 µs", 9.96: "10 µs", 62.4: "62 µs", 999.4: "999 µs",
		1000: "1 ms", 2500: "2.5 ms", 6100: "6.1 ms", 12340: "12.3 ms", 250000: "250 ms"}
	for us, want := range tests {
		if got := formatUS(us); got != want {
			t.Errorf("formatUS(%g) = %q, want %q", us, got, want)
		}
	}
}

// FuzzPlausibility: any numbers, on any kind of device, give warnings and
// labels without a panic, and never a label for an unusable latency.
func FuzzPlausibility(f *testing.F) {
	f.Add(true, 62.0, 16000.0, 62.0, 1.0, int64(256<<20), uint8(0))
	f.Add(true, 250.0, 21000.0, 6100.0, 0.38, int64(0), uint8(2))
	f.Add(false, math.NaN(), math.Inf(1), -1.0, 2.0, int64(-1), uint8(200))
	devices := []Device{devVda, devEBS, devHDD, devMD, devPERC, devNVMe, devSSD, devTmpfs, devZram, devZFS,
		devMixed, devLoopOff, devLoopOn, devNBD, devUnknown, {}}
	f.Fuzz(func(t *testing.T, direct bool, p50, iops, center, fraction float64, ws int64, which uint8) {
		d := devices[int(which)%len(devices)]
		o := Observed{Direct: direct, P50US: p50, IOPS: iops, WorkingSet: ws,
			Modes: []LatencyMode{{CenterUS: center, Fraction: fraction}}}
		for _, w := range Plausibility(d, o) {
			if w == "" {
				t.Error("empty warning")
			}
		}
		if l := LabelMode(d, center, true); (l == "") == known(center) {
			t.Errorf("LabelMode(%g) = %q", center, l)
		}
		_ = LabelModes(d, []float64{p50, center})
		_ = d.Summary()
	})
}
