package host

// Fields of a /proc/diskstats line after major, minor and name
// (Documentation/admin-guide/iostats.rst). Kernels before 4.18 have the
// first 11, before 5.5 the first 15.
const (
	dkReadIOs = iota
	dkReadMerges
	dkReadSectors
	dkReadTicks
	dkWriteIOs
	dkWriteMerges
	dkWriteSectors
	dkWriteTicks
	dkInFlight
	dkIOTicks
	dkTimeInQueue
	dkDiscardIOs
	dkDiscardMerges
	dkDiscardSectors
	dkDiscardTicks
	dkFlushIOs
	dkFlushTicks
	dkFields
)

// diskCounters are one device's line of /proc/diskstats.
type diskCounters struct {
	name   string
	fields int // how many counters the kernel printed (11, 15 or 17)
	c      [dkFields]uint64
}

// used reports whether the device has done any I/O since boot: iostat
// leaves out devices that have not.
func (d *diskCounters) used() bool {
	return d.c[dkReadIOs] != 0 || d.c[dkWriteIOs] != 0 || d.c[dkDiscardIOs] != 0 || d.c[dkFlushIOs] != 0
}

// parseDiskstats reads /proc/diskstats into disks (reused; names kept
// where a line repeats its previous position's device).
func parseDiskstats(b []byte, disks []diskCounters) ([]diskCounters, []problem) {
	var probs []problem
	var buf [24][]byte
	f := buf[:0]
	n := 0
	lines(b, func(ln int, line []byte) {
		f = splitFields(f, line)
		if len(f) == 0 {
			return
		}
		if len(f) < 3+11 {
			probs = append(probs, problem{ln, "fewer than 14 fields"})
			return
		}
		var d diskCounters
		d.fields = min(len(f)-3, dkFields)
		if p, ok := parseCounters(d.c[:d.fields], f[3:], ln, "field"); !ok {
			probs = append(probs, p)
			return
		}
		var at *diskCounters
		at, disks = slot(disks, n)
		d.name = intern(at.name, f[2])
		*at = d
		n++
	})
	return disks[:n], probs
}
