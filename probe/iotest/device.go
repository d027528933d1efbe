package iotest

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Device describes the storage behind a path as the kernel reports it, so
// that a report can say what was measured and whether the latencies are
// plausible for it. Fields the system does not reveal stay empty.
type Device struct {
	// Path is the path the user gave.
	Path string `json:"path"`
	// Kind is "scratch file" (a directory, where the test creates its
	// scratch files), "file" or "block device"; "" when Path is none of
	// them.
	Kind string `json:"kind"`
	// Filesystem is the filesystem holding Path (ext4, xfs, tmpfs…); ""
	// for a block device.
	Filesystem string `json:"filesystem"`
	// Device is the kernel name of the whole disk (vda, nvme0n1, sda,
	// dm-0, md0, loop0).
	Device string `json:"device"`
	// Partition is the partition holding Path (sda2), "" when Path is on
	// a whole disk.
	Partition string `json:"partition,omitempty"`
	// MajorMinor is the number of the block device holding Path (the
	// partition's when there is one), e.g. "254:0".
	MajorMinor string `json:"major_minor"`
	// Layer says what a stacked device is: "LVM vg0-root", "dm-crypt
	// luks-…", "multipath mpatha", "raid1"…; Slaves are its members.
	Layer  string   `json:"layer,omitempty"`
	Slaves []Device `json:"slaves,omitempty"`
	// Backing describes a loop device's backing file and LoopDirectIO
	// whether the loop driver reads it with direct I/O (loop/dio).
	Backing      *Device `json:"backing,omitempty"`
	LoopDirectIO *bool   `json:"loop_direct_io,omitempty"`
	// Rotational is queue/rotational: nil when unknown. Virtual disks and
	// storage arrays often report 1 whatever their media.
	Rotational        *bool  `json:"rotational"`
	LogicalBlockSize  int    `json:"logical_block_size"`
	PhysicalBlockSize int    `json:"physical_block_size"`
	Model             string `json:"model"`
	Vendor            string `json:"vendor"`
	// Driver is the kernel driver (virtio_blk, nvme, sd, loop, zram…).
	Driver string `json:"driver"`
	// Transport is a guess at the link to the media (SATA, SAS, PCIe,
	// USB, virtio, Fibre Channel, iSCSI, NVMe/TCP…).
	Transport string `json:"transport"`
	// Virtual says the disk is emulated by a hypervisor, a cloud or the
	// kernel (loop, nbd, rbd, zram): its flags say nothing about the
	// physical media.
	Virtual bool `json:"virtual"`
	// Class is a short plain-language phrase, one of the Class constants
	// or "loop device over FILE", "network filesystem (nfs4)", "mixed:
	// A + B" for a stack over different media.
	Class string `json:"class"`
}

// Device classes.
const (
	ClassHDD          = "rotating disk (HDD)"
	ClassSSD          = "SSD"
	ClassNVMe         = "NVMe SSD"
	ClassFlashCard    = "flash card (eMMC/SD)"
	ClassVirtual      = "virtual disk"
	ClassArray        = "storage array or RAID volume"
	ClassTmpfs        = "memory (tmpfs)"
	ClassRAMDisk      = "RAM disk (zram/brd)"
	ClassPmem         = "persistent memory (pmem)"
	ClassNetworkBlock = "network block device"
	ClassUnknown      = "unknown"
	// ClassLoopPrefix is followed by the backing file's path;
	// ClassNetworkFSPrefix by the filesystem type in parentheses;
	// ClassMixedPrefix by the member classes joined with " + ".
	ClassLoopPrefix      = "loop device over "
	ClassNetworkFSPrefix = "network filesystem"
	ClassMixedPrefix     = "mixed: "
)

// maxStackDepth bounds how deep stacked devices (dm over md over
// partitions) and loop devices over files on loop devices are followed.
const maxStackDepth = 4

// media is what ultimately answers a read, as far as the class tells.
type media int

const (
	mediaUnknown media = iota
	mediaMemory
	mediaFlash
	mediaRotating
	mediaNetwork
)

// Latency bands, in µs, that the readings and checks share. They follow
// from what each medium can do for one small random read:
//   - memoryMaxUS: an O_DIRECT read that reaches a device costs a submit,
//     an interrupt and a completion, ≥ ~10 µs even on the fastest NVMe
//     (Optane); anything faster was served from memory above the device.
//   - ssdDRAMMaxUS: NAND flash needs ≥ ~50 µs per read (low-latency
//     XL-Flash/Z-NAND ~15 µs); an SSD answering faster hit its DRAM.
//   - cacheMaxUS: a rotating disk needs a seek and on average half a
//     rotation: 2 ms at 15k rpm, 4.2 ms at 7200 rpm; even a seek-free
//     short-stroked read waits for the platter, so < 1 ms is a cache.
//   - rotatingMaxUS: a full-stroke seek plus a whole rotation of a 7200
//     rpm disk is ~25 ms; slower reads queued or took a slow path.
const (
	memoryMaxUS   = 10
	ssdDRAMMaxUS  = 15
	cacheMaxUS    = 1000
	rotatingMaxUS = 25000
	// hddMaxIOPS is a generous ceiling on one rotating disk's random
	// reads per second, deep queues and reordering included (~200 at
	// 15k rpm without a queue, rarely 500 with NCQ).
	hddMaxIOPS = 500
)

// media returns what answers d's reads and whether the class is only a
// guess from flags that may not describe the physical media (virtual
// disks, arrays, stacks over mixed media, loop devices).
func (d Device) media() (m media, hedged bool) {
	switch {
	case d.Class == ClassTmpfs || d.Class == ClassRAMDisk || d.Class == ClassPmem ||
		strings.HasPrefix(d.Class, "memory ("):
		return mediaMemory, false
	case d.Class == ClassNetworkBlock || strings.HasPrefix(d.Class, ClassNetworkFSPrefix):
		return mediaNetwork, false
	case d.Class == ClassNVMe || d.Class == ClassSSD || d.Class == ClassFlashCard:
		return mediaFlash, false
	case d.Class == ClassHDD:
		return mediaRotating, false
	case strings.HasPrefix(d.Class, ClassLoopPrefix) && d.Backing != nil:
		// With direct I/O the loop driver passes reads to the backing
		// file's storage; without it the page cache answers repeats.
		m, hedged := d.Backing.media()
		return m, hedged || d.LoopDirectIO == nil || !*d.LoopDirectIO
	}
	return mediaUnknown, true
}

// underlying returns the device whose media answer d's reads: a loop
// device's backing storage, else d itself.
func (d Device) underlying() Device {
	for range maxStackDepth {
		if d.Backing == nil {
			break
		}
		d = *d.Backing
	}
	return d
}

// spindles returns how many rotating disks serve d's reads: 1 for a disk,
// the rotating members of a RAID or LVM stack; 0 when d is not known to be
// rotating disks only.
func (d Device) spindles() int {
	if d.Class != ClassHDD {
		return 0
	}
	if len(d.Slaves) == 0 {
		return 1
	}
	n := 0
	for _, s := range d.Slaves {
		n += s.spindles()
	}
	return n
}

// Summary returns one line for a report, e.g. "vda (virtio_blk, virtual
// disk, reports rotational=1), ext4, 512 B logical / 4 KiB physical blocks".
func (d Device) Summary() string {
	var parts []string
	if d.Device == "" {
		parts = append(parts, d.classOrUnknown())
		if d.Filesystem != "" && !strings.Contains(d.Class, d.Filesystem) {
			parts = append(parts, d.Filesystem)
		}
		return strings.Join(parts, ", ")
	}
	parts = append(parts, d.diskSummary())
	if d.Filesystem != "" {
		parts = append(parts, d.Filesystem)
	}
	if b := d.blockSizes(); b != "" {
		parts = append(parts, b)
	}
	s := strings.Join(parts, ", ")
	if d.Backing != nil {
		s += "; the file is on " + d.Backing.Summary()
	}
	return s
}

// classOrUnknown returns the class, "unknown device" when there is none.
func (d Device) classOrUnknown() string {
	if d.Class == "" || d.Class == ClassUnknown {
		return "unknown device"
	}
	return d.Class
}

// diskSummary returns the disk's name and, in parentheses, its driver,
// transport, stack, class, model and a doubtful rotational flag.
func (d Device) diskSummary() string {
	name := d.Device
	if d.Partition != "" {
		name = d.Partition + " on " + d.Device
	}
	var facts []string
	add := func(s string) {
		if s != "" && !slices.Contains(facts, s) {
			facts = append(facts, s)
		}
	}
	add(d.Driver)
	if !strings.Contains(strings.ToLower(d.Driver), strings.ToLower(d.Transport)) {
		add(d.Transport)
	}
	if d.Layer != "" {
		add(d.Layer + d.slaveList())
	}
	if d.LoopDirectIO != nil {
		add(map[bool]string{true: "direct I/O on", false: "direct I/O off"}[*d.LoopDirectIO])
	}
	add(d.classOrUnknown())
	add(d.Model)
	if _, hedged := d.media(); hedged && d.Rotational != nil && !strings.HasPrefix(d.Class, ClassLoopPrefix) {
		add(fmt.Sprintf("reports rotational=%d", map[bool]int{false: 0, true: 1}[*d.Rotational]))
	}
	return name + " (" + strings.Join(facts, ", ") + ")"
}

// slaveList returns " over sda1 + sdb1" for a stacked device.
func (d Device) slaveList() string {
	var names []string
	for _, s := range d.Slaves {
		if s.Partition != "" {
			names = append(names, s.Partition)
		} else if s.Device != "" {
			names = append(names, s.Device)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " over " + strings.Join(names, " + ")
}

// blockSizes returns "512 B logical blocks", or "512 B logical / 4 KiB
// physical blocks" when they differ.
func (d Device) blockSizes() string {
	if d.LogicalBlockSize <= 0 {
		return ""
	}
	s := formatSize(int64(d.LogicalBlockSize)) + " logical"
	if d.PhysicalBlockSize > 0 && d.PhysicalBlockSize != d.LogicalBlockSize {
		s += " / " + formatSize(int64(d.PhysicalBlockSize)) + " physical"
	}
	return s + " blocks"
}

// LatencyMode is one mode of a latency distribution as the device checks
// need it (loadtest.Mode carries the same fields and more).
type LatencyMode struct {
	// CenterUS is the mode's typical latency in µs.
	CenterUS float64
	// Fraction is the share of all reads in the mode, 0..1.
	Fraction float64
}

// Observed is what a storage test measured, as the plausibility checks
// need it.
type Observed struct {
	// Direct says the reads bypassed the page cache (O_DIRECT).
	Direct bool
	// P50US is the median latency in µs.
	P50US float64
	// IOPS is the reads per second; 0 skips the throughput check.
	IOPS float64
	// WorkingSet is the bytes the reads were spread over; 0 if unknown.
	WorkingSet int64
	// Modes are the latency modes, fastest first or in any order.
	Modes []LatencyMode
}

// Plausibility returns plain-language warnings when the results look too
// good to be true for d, or contradict its class: a measurement of memory
// instead of storage, a cache answering faster than the media can, a
// rotational flag that cannot be believed. Nil means nothing to say.
func Plausibility(d Device, o Observed) []string {
	var w []string
	if !o.Direct {
		w = append(w, "reads went through the page cache (no O_DIRECT): the latencies are those of memory, "+
			"not of the storage")
	}
	if m, _ := d.media(); m == mediaMemory {
		w = append(w, fmt.Sprintf("%s keeps data in memory (%s): this measures memory, not storage",
			d.pathOrDevice(), d.Class))
	}
	if len(w) > 0 {
		return w
	}
	if d.Filesystem == "zfs" {
		w = append(w, "ZFS may serve reads from its ARC in memory even with O_DIRECT (ignored before "+
			"OpenZFS 2.3): check the ARC hit rate, or use a working set larger than the ARC")
	}
	if d.LoopDirectIO != nil && !*d.LoopDirectIO {
		w = append(w, fmt.Sprintf("%s reads its backing file through the page cache (loop/dio=0), so "+
			"repeated reads come from memory: set it up with `losetup --direct-io=on`", d.Device))
	}
	memory := memoryWarning(o)
	if memory != "" {
		w = append(w, memory)
	}
	// The remaining checks judge the media, which for a loop device are
	// its backing file's.
	d = d.underlying()
	if s := rotatingWarning(d, o); s != "" {
		w = append(w, s)
	}
	if s := iopsWarning(d, o); s != "" {
		w = append(w, s)
	}
	if s := flagWarning(d, o); s != "" {
		w = append(w, s)
	}
	if s := ssdWarning(d, o); s != "" && memory == "" {
		w = append(w, s)
	}
	return w
}

// pathOrDevice names what was measured.
func (d Device) pathOrDevice() string {
	if d.Device != "" {
		return d.Device
	}
	return d.Path
}

// known reports whether a latency is a usable number.
func known(us float64) bool { return us > 0 && !math.IsInf(us, 0) && !math.IsNaN(us) }

// fastModes returns the share of reads and the typical latency of the
// modes in [loUS, hiUS); without modes, the median stands for half the
// reads.
func fastModes(o Observed, loUS, hiUS float64) (fraction, centerUS float64) {
	if len(o.Modes) == 0 {
		if known(o.P50US) && o.P50US >= loUS && o.P50US < hiUS {
			return 0.5, o.P50US
		}
		return 0, 0
	}
	weighted := 0.0
	for _, m := range o.Modes {
		if known(m.CenterUS) && m.CenterUS >= loUS && m.CenterUS < hiUS && m.Fraction > 0 && m.Fraction <= 1 {
			fraction += m.Fraction
			weighted += m.Fraction * m.CenterUS
		}
	}
	if fraction == 0 {
		return 0, 0
	}
	return fraction, weighted / fraction
}

// shareOf phrases a fraction of reads: "62 % of reads", "at least half of
// the reads" when it stands for the median.
func shareOf(o Observed, fraction float64) string {
	if len(o.Modes) == 0 {
		return "at least half of the reads"
	}
	return fmt.Sprintf("%.0f %% of reads", 100*fraction)
}

// growAdvice is the end of every cache warning: what to change, and the
// working set the test used when known.
func growAdvice(o Observed) string {
	s := "grow the working set (--size) beyond the cache"
	if o.WorkingSet > 0 {
		s += " (it was " + formatSize(o.WorkingSet) + ")"
	}
	return s
}

// memoryWarning: with O_DIRECT, a read answered in under ~10 µs never
// reached a device.
func memoryWarning(o Observed) string {
	fraction, center := fastModes(o, 0, memoryMaxUS)
	if fraction == 0 {
		return ""
	}
	return fmt.Sprintf("%s took ~%s, faster than any O_DIRECT round trip to a storage device (≥ ~10 µs even "+
		"on the fastest NVMe): memory served them (a filesystem that ignores O_DIRECT, a RAM disk, or a "+
		"cache in the I/O path); %s", shareOf(o, fraction), formatUS(center), growAdvice(o))
}

// rotatingWarning: a rotating disk cannot answer a random read in under
// a millisecond.
func rotatingWarning(d Device, o Observed) string {
	if m, hedged := d.media(); m != mediaRotating || hedged || d.Virtual || !known(o.P50US) || o.P50US >= cacheMaxUS {
		return ""
	}
	return fmt.Sprintf("median %s on %s: a rotating disk needs a seek and half a rotation per random read "+
		"(≥ ~2 ms even at 15k rpm), so a cache served most reads (drive or controller cache, or the working "+
		"set is small): %s", formatUS(o.P50US), d.describeName(), growAdvice(o))
}

// iopsWarning: a rotating disk serves a few hundred random reads per
// second; many more mean a cache ("23 SAS disks delivering 20K IOPS?").
func iopsWarning(d Device, o Observed) string {
	n := d.spindles()
	if n == 0 || d.Virtual || math.IsNaN(o.IOPS) || o.IOPS <= float64(n*hddMaxIOPS) {
		return ""
	}
	disks := "one rotating disk"
	if n > 1 {
		disks = fmt.Sprintf("%d rotating disks", n)
	}
	return fmt.Sprintf("%.0f IOPS from %s: a rotating disk serves at most a few hundred random reads per "+
		"second (~%d even with deep queues), so a cache answered most of them: %s",
		o.IOPS, disks, hddMaxIOPS, growAdvice(o))
}

// flagWarning: a virtual disk or an array volume that says rotational=1
// yet answers in under a millisecond is not telling about its media.
func flagWarning(d Device, o Observed) string {
	if d.Rotational == nil || !*d.Rotational || !(d.Virtual || d.Class == ClassArray) {
		return ""
	}
	fraction, center := fastModes(o, memoryMaxUS, cacheMaxUS)
	if fraction == 0 {
		return ""
	}
	what, where := "a virtual disk", "flash or a cache (possibly the host's page cache)"
	if d.Class == ClassArray {
		what, where = "a storage array or RAID volume", "flash or the array's cache"
	}
	return fmt.Sprintf("%s reports rotational=1, yet %s took ~%s, which no rotating disk can do: on %s the "+
		"flag says nothing about the physical media; these reads came from %s",
		d.pathOrDevice(), shareOf(o, fraction), formatUS(center), what, where)
}

// ssdWarning: an SSD answering in under ~15 µs served reads from DRAM.
func ssdWarning(d Device, o Observed) string {
	if m, hedged := d.media(); m != mediaFlash || hedged || !known(o.P50US) || o.P50US >= ssdDRAMMaxUS {
		return ""
	}
	return fmt.Sprintf("median %s on %s: faster than flash reads (≥ ~50 µs for NAND, ~15 µs for the "+
		"lowest-latency flash), so the drive's DRAM cache or a cache above it served most reads: %s",
		formatUS(o.P50US), d.describeName(), growAdvice(o))
}

// describeName returns "sda (rotating disk (HDD))" for the warnings.
func (d Device) describeName() string {
	name := d.Device
	if name == "" {
		name = d.Path
	}
	return name + " (" + d.classOrUnknown() + ")"
}

// formatUS prints a latency as "4 µs", "62 µs", "0.25 ms" or "6.1 ms".
func formatUS(us float64) string {
	switch {
	case us < 10:
		return trimZeros(fmt.Sprintf("%.1f", us)) + " µs"
	case us < 1000:
		return fmt.Sprintf("%.0f µs", us)
	case us < 10000:
		return trimZeros(fmt.Sprintf("%.2f", us/1000)) + " ms"
	}
	return trimZeros(fmt.Sprintf("%.1f", us/1000)) + " ms"
}

// trimZeros drops trailing zeros after a decimal point: "2.50" → "2.5".
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// Readings of latency modes.
const (
	ReadingMemory       = "memory or a storage cache"
	ReadingDRAM         = "the drive's DRAM cache"
	ReadingFlash        = "flash (SSD)"
	ReadingFlashOrCache = "flash (SSD) or an array cache"
	ReadingCache        = "a cache (drive, controller or array): faster than the platters"
	ReadingCacheTier    = "a cache (DRAM or flash) in front of rotating media"
	ReadingRotating     = "rotating media (seek + rotation)"
	ReadingSlow         = "queueing or a slow path (throttling, remote storage, retries)"
	ReadingRemoteFast   = "the remote storage's cache or flash, plus the network"
	ReadingRemoteMedia  = "the remote storage's media, plus the network"
	ReadingMemoryBusy   = "memory, slowed by CPU contention or queueing"
	// Readings on virtual disks, always prefixed with "likely".
	ReadingFlashOrHostCache    = "flash or the host's cache"
	ReadingRotatingOrThrottled = "rotating media, or a throttled or network-backed volume"
)

// LabelMode returns the plain-language reading of a latency mode centred
// at centerUS on d; fastest says it is the fastest mode of the run, which
// on flash tells the drive's DRAM from low-latency flash. When d's class
// rests on flags that may not describe the media (virtual disks, arrays,
// loop devices, mixed stacks), the reading says "likely".
func LabelMode(d Device, centerUS float64, fastest bool) string {
	if !known(centerUS) {
		return ""
	}
	m, hedged := d.media()
	if centerUS < memoryMaxUS {
		if m == mediaMemory {
			return "memory"
		}
		return ReadingMemory
	}
	var r string
	switch m {
	case mediaMemory:
		r = ReadingMemoryBusy
	case mediaFlash:
		r = flashReading(centerUS, fastest)
	case mediaRotating:
		r = tieredReading(centerUS, ReadingCache, ReadingRotating)
	case mediaNetwork:
		r = tieredReading(centerUS, ReadingRemoteFast, ReadingRemoteMedia)
	default:
		if d.underlying().Virtual {
			r = tieredReading(centerUS, ReadingFlashOrHostCache, ReadingRotatingOrThrottled)
		} else {
			r = tieredReading(centerUS, ReadingFlashOrCache, ReadingRotating)
		}
	}
	if hedged && r != ReadingSlow {
		return "likely " + r
	}
	return r
}

// LabelModes labels every mode, knowing the others: on an array, a stack
// or an unknown device, a sub-millisecond mode beside one of rotating-media
// latency is the cache in front of the disks rather than flash. (On a
// virtual disk the slow mode may be throttling, so it is not used.)
func LabelModes(d Device, centersUS []float64) []string {
	fastest := math.Inf(1)
	slowMedia := false
	for _, c := range centersUS {
		if known(c) {
			fastest = min(fastest, c)
			slowMedia = slowMedia || (c >= cacheMaxUS && c < rotatingMaxUS)
		}
	}
	m, hedged := d.media()
	labels := make([]string, len(centersUS))
	for i, c := range centersUS {
		labels[i] = LabelMode(d, c, c == fastest)
		if slowMedia && m == mediaUnknown && !d.underlying().Virtual && c >= memoryMaxUS && c < cacheMaxUS {
			labels[i] = ReadingCacheTier
			if hedged {
				labels[i] = "likely " + labels[i]
			}
		}
	}
	return labels
}

func flashReading(us float64, fastest bool) string {
	switch {
	case us < ssdDRAMMaxUS && fastest:
		return ReadingDRAM
	case us < cacheMaxUS:
		return ReadingFlash
	}
	return ReadingSlow
}

// tieredReading names a latency of a class with a fast tier (a cache) and
// a media tier by the thresholds every class but flash shares.
func tieredReading(us float64, fast, media string) string {
	switch {
	case us < cacheMaxUS:
		return fast
	case us < rotatingMaxUS:
		return media
	}
	return ReadingSlow
}
