package host

import (
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// snapshot is one reading of every file the enabled groups need.
type snapshot struct {
	stat    statSnap
	disks   []diskCounters
	nets    []ifCounters
	retrans uint64
	mem     memSnap
	vm      vmSnap
	psi     [len(psiResources)]psiTotals
	load    loadSnap
	// have says which files were read whole (a file that could not be
	// read gives no series this window).
	haveStat, haveDisks, haveNets, haveRetrans, haveMem, haveVM, haveLoad bool
	havePSI                                                               [len(psiResources)]bool
}

// psiResources are the /proc/pressure files, in series order.
var psiResources = [...]string{"cpu", "io", "memory"}

// delta returns cur - prev for a counter. A counter that went down was
// reset (ok false: no value this window), unless it was below 2³² and
// moved back by less than 2³¹, which is a 32-bit field wrapping
// (/proc/diskstats on some kernels).
func delta(prev, cur uint64) (d uint64, ok bool) {
	if cur >= prev {
		return cur - prev, true
	}
	if prev < 1<<32 {
		if d := cur + 1<<32 - prev; d < 1<<31 {
			return d, true
		}
	}
	return 0, false
}

// builder appends one window's series.
type builder struct {
	out     []stream.SeriesMean
	seconds float64
	ms      float64
}

// add appends a series of quantity q.
func (b *builder) add(event, instance string, q stream.Quantity, sum, count float64) {
	b.out = append(b.out, stream.SeriesMean{Key: stream.Key{Event: event, Instance: instance}, Count: count, Sum: sum,
		Unit: stream.QuantityUnit, Quantity: q})
}

// rate appends a per-second series: Δcounter over the window's seconds.
func (b *builder) rate(event, instance string, q stream.Quantity, prev, cur uint64, scale float64) {
	if d, ok := delta(prev, cur); ok {
		b.add(event, instance, q, float64(d)*scale, b.seconds)
	}
}

// gauge appends a value read at the end of the window, weighted by its
// seconds.
func (b *builder) gauge(event string, q stream.Quantity, v float64) {
	b.add(event, "", q, v*b.seconds, b.seconds)
}

// groups selects the parts of the host a source samples.
type groups struct {
	cpu, disk, net, mem, psi, load bool
}

// sysInfo is what /sys tells the figures: which devices iostat lists
// (whole disks: a /sys/block entry) and an interface's link speed in Mb/s
// and duplex (ok false: unknown, as for lo and most virtual interfaces).
type sysInfo interface {
	listDisk(name string) bool
	linkSpeed(name string) (mbps float64, fullDuplex, ok bool)
}

// means returns the series of the window between two snapshots elapsed
// apart, appended to out. sys nil: every device listed, no link speeds.
func means(prev, cur *snapshot, elapsed time.Duration, g groups, sys sysInfo, out []stream.SeriesMean) []stream.SeriesMean {
	b := builder{out: out, seconds: elapsed.Seconds(), ms: float64(elapsed) / float64(time.Millisecond)}
	if b.seconds <= 0 {
		return out
	}
	if g.cpu && prev.haveStat && cur.haveStat {
		b.cpu(&prev.stat, &cur.stat)
		b.tasks(&prev.stat, &cur.stat)
	}
	if g.disk && prev.haveDisks && cur.haveDisks {
		b.disks(prev.disks, cur.disks, sys)
	}
	if g.net {
		if prev.haveNets && cur.haveNets {
			b.nets(prev.nets, cur.nets, sys)
		}
		if prev.haveRetrans && cur.haveRetrans {
			b.rate("tcp.retrans/s", "", stream.PerSecond, prev.retrans, cur.retrans, 1)
		}
	}
	if g.psi {
		b.psi(prev, cur, elapsed)
	}
	if g.mem {
		if cur.haveMem {
			b.memory(&cur.mem)
		}
		if prev.haveVM && cur.haveVM {
			b.paging(&prev.vm, &cur.vm)
		}
	}
	if g.load {
		if cur.haveLoad {
			b.loadavg(&cur.load)
		}
		if cur.haveStat && cur.stat.have[stProcsBlocked] {
			b.gauge("load.blocked", stream.Count, float64(cur.stat.named[stProcsBlocked]))
		}
	}
	return b.out
}

// cpuEvents are the CPU series in sar -u ALL's order.
var cpuEvents = [...]struct {
	event string
	state int
}{{"cpu.%user", cpuUser}, {"cpu.%nice", cpuNice}, {"cpu.%system", cpuSystem}, {"cpu.%iowait", cpuIowait},
	{"cpu.%steal", cpuSteal}, {"cpu.%irq", cpuIrq}, {"cpu.%soft", cpuSoftirq}, {"cpu.%guest", cpuGuest},
	{"cpu.%gnice", cpuGuestNice}, {"cpu.%idle", cpuIdle}}

// cpu appends each CPU's share of time per state, as sar -u ALL -P ALL:
// guest time leaves user (and guest_nice nice), where the kernel counts it
// too, and the total leaves both out.
func (b *builder) cpu(prev, cur *statSnap) {
	for i := range cur.cpus {
		c := &cur.cpus[i]
		p := findCPU(prev, c.name, i)
		if p == nil {
			continue // a CPU brought online: from its second sample
		}
		var d [cpuStates]float64
		ok := true
		for s := range cpuStates {
			v, good := delta(p.ticks[s], c.ticks[s])
			d[s], ok = float64(v), ok && good
		}
		if !ok {
			continue // counters went back (CPU hotplug): no value this window
		}
		d[cpuUser] = max(d[cpuUser]-d[cpuGuest], 0)
		d[cpuNice] = max(d[cpuNice]-d[cpuGuestNice], 0)
		total := 0.0
		for _, s := range []int{cpuUser, cpuNice, cpuSystem, cpuIdle, cpuIowait, cpuIrq, cpuSoftirq, cpuSteal, cpuGuest, cpuGuestNice} {
			total += d[s]
		}
		if total <= 0 {
			continue // no tick elapsed: sar prints the CPU as 0, there is nothing to divide
		}
		for _, e := range cpuEvents {
			b.add(e.event, c.name, stream.Percent, d[e.state]*100, total)
		}
	}
}

// tasks appends sar -w's tasks created and context switches per second.
func (b *builder) tasks(prev, cur *statSnap) {
	for _, e := range [...]struct {
		event string
		field int
	}{{"cpu.proc/s", stProcesses}, {"cpu.cswch/s", stCtxt}} {
		if prev.have[e.field] && cur.have[e.field] {
			b.rate(e.event, "", stream.PerSecond, prev.named[e.field], cur.named[e.field], 1)
		}
	}
}

// findCPU returns prev's line of the named CPU, looking first where it was
// (the lines keep their order between samples).
func findCPU(prev *statSnap, name string, at int) *cpuTimes {
	if at < len(prev.cpus) && prev.cpus[at].name == name {
		return &prev.cpus[at]
	}
	for i := range prev.cpus {
		if prev.cpus[i].name == name {
			return &prev.cpus[i]
		}
	}
	return nil
}

// disks appends iostat -x's figures for each device it lists.
func (b *builder) disks(prev, cur []diskCounters, sys sysInfo) {
	for i := range cur {
		c := &cur[i]
		if !c.used() || (sys != nil && !sys.listDisk(c.name)) {
			continue
		}
		p := findDisk(prev, c.name, i)
		if p == nil || p.fields != c.fields {
			continue // a device that appeared: from its second sample
		}
		b.disk(p, c)
	}
}

func findDisk(prev []diskCounters, name string, at int) *diskCounters {
	if at < len(prev) && prev[at].name == name {
		return &prev[at]
	}
	for i := range prev {
		if prev[i].name == name {
			return &prev[i]
		}
	}
	return nil
}

// disk appends one device's figures with iostat -x's formulas: rates over
// the window's seconds, kB = sectors / 2, awaits Δticks / Δios, aqu-sz
// Δtime_in_queue / elapsed ms, %util Δio_ticks / elapsed ms × 100.
func (b *builder) disk(p, c *diskCounters) {
	var d [dkFields]float64
	var ok [dkFields]bool
	for i := range c.fields {
		v, good := delta(p.c[i], c.c[i])
		d[i], ok[i] = float64(v), good
	}
	dev := c.name
	type op struct {
		ios, merges, sectors, ticks      int
		perS, kBs, rqmS, rrqm, await, sz string
	}
	ops := []op{
		{dkReadIOs, dkReadMerges, dkReadSectors, dkReadTicks, "disk.r/s", "disk.rkB/s", "disk.rrqm/s", "disk.%rrqm", "disk.r_await", "disk.rareq-sz"},
		{dkWriteIOs, dkWriteMerges, dkWriteSectors, dkWriteTicks, "disk.w/s", "disk.wkB/s", "disk.wrqm/s", "disk.%wrqm", "disk.w_await", "disk.wareq-sz"},
		{dkDiscardIOs, dkDiscardMerges, dkDiscardSectors, dkDiscardTicks, "disk.d/s", "disk.dkB/s", "disk.drqm/s", "disk.%drqm", "disk.d_await", "disk.dareq-sz"},
	}
	if c.fields <= dkDiscardIOs {
		ops = ops[:2] // before 4.18: no discards
	}
	for _, o := range ops {
		if !ok[o.ios] || !ok[o.merges] || !ok[o.sectors] || !ok[o.ticks] {
			continue
		}
		ios, merges, kB := d[o.ios], d[o.merges], d[o.sectors]/2
		b.add(o.perS, dev, stream.PerSecond, ios, b.seconds)
		b.add(o.kBs, dev, stream.KBPerSecond, kB, b.seconds)
		b.add(o.rqmS, dev, stream.PerSecond, merges, b.seconds)
		b.add(o.rrqm, dev, stream.Percent, merges*100, merges+ios)
		b.out = append(b.out, stream.SeriesMean{Key: stream.Key{Event: o.await, Instance: dev}, Count: ios, Sum: d[o.ticks], Unit: hist.Millisecond})
		b.add(o.sz, dev, stream.KB, kB, ios)
	}
	if c.fields > dkFlushTicks && ok[dkFlushIOs] && ok[dkFlushTicks] {
		b.add("disk.f/s", dev, stream.PerSecond, d[dkFlushIOs], b.seconds)
		b.out = append(b.out, stream.SeriesMean{Key: stream.Key{Event: "disk.f_await", Instance: dev}, Count: d[dkFlushIOs], Sum: d[dkFlushTicks], Unit: hist.Millisecond})
	}
	if ok[dkTimeInQueue] {
		b.add("disk.aqu-sz", dev, stream.Count, d[dkTimeInQueue], b.ms)
	}
	if ok[dkIOTicks] {
		b.add("disk.%util", dev, stream.Percent, d[dkIOTicks]*100, b.ms)
	}
}

// netEvents are sar -n DEV's and -n EDEV's per-interface rates.
var netEvents = [...]struct {
	event string
	field int
	q     stream.Quantity
	scale float64
}{
	{"net.rxpck/s", ndRxPackets, stream.PerSecond, 1}, {"net.txpck/s", ndTxPackets, stream.PerSecond, 1},
	{"net.rxkB/s", ndRxBytes, stream.KBPerSecond, 1.0 / 1024}, {"net.txkB/s", ndTxBytes, stream.KBPerSecond, 1.0 / 1024},
	{"net.rxcmp/s", ndRxCompressed, stream.PerSecond, 1}, {"net.txcmp/s", ndTxCompressed, stream.PerSecond, 1},
	{"net.rxmcst/s", ndRxMulticast, stream.PerSecond, 1},
	{"net.rxerr/s", ndRxErrs, stream.PerSecond, 1}, {"net.txerr/s", ndTxErrs, stream.PerSecond, 1},
	{"net.rxdrop/s", ndRxDrop, stream.PerSecond, 1}, {"net.txdrop/s", ndTxDrop, stream.PerSecond, 1},
	{"net.coll/s", ndTxColls, stream.PerSecond, 1}, {"net.txcarr/s", ndTxCarrier, stream.PerSecond, 1},
	{"net.rxfram/s", ndRxFrame, stream.PerSecond, 1}, {"net.rxfifo/s", ndRxFifo, stream.PerSecond, 1},
	{"net.txfifo/s", ndTxFifo, stream.PerSecond, 1},
}

// nets appends each interface's rates (one that appeared: from its second
// sample) and, where its link speed is known, sar's %ifutil.
func (b *builder) nets(prev, cur []ifCounters, sys sysInfo) {
	for i := range cur {
		c := &cur[i]
		var p *ifCounters
		if i < len(prev) && prev[i].name == c.name {
			p = &prev[i]
		} else {
			for j := range prev {
				if prev[j].name == c.name {
					p = &prev[j]
				}
			}
		}
		if p == nil {
			continue
		}
		for _, e := range netEvents {
			b.rate(e.event, c.name, e.q, p.c[e.field], c.c[e.field], e.scale)
		}
		if sys != nil {
			b.ifutil(p, c, sys)
		}
	}
}

// ifutil appends sar -n DEV's %ifutil: the busier direction's bits over
// the link's (full duplex), both directions' (half duplex). sar prints
// 0.00 where the speed is unknown; latscope gives no value.
func (b *builder) ifutil(p, c *ifCounters, sys sysInfo) {
	mbps, full, ok := sys.linkSpeed(c.name)
	rx, okRx := delta(p.c[ndRxBytes], c.c[ndRxBytes])
	tx, okTx := delta(p.c[ndTxBytes], c.c[ndTxBytes])
	if !ok || mbps <= 0 || !okRx || !okTx {
		return
	}
	bytes := float64(rx + tx)
	if full {
		bytes = float64(max(rx, tx))
	}
	b.add("net.%ifutil", c.name, stream.Percent, bytes*8*100/(mbps*1e6), b.seconds)
}

// psiEvents name the pressure series: [resource][some, full].
var psiEvents = [len(psiResources)][2]string{
	{"psi.cpu.some", "psi.cpu.full"}, {"psi.io.some", "psi.io.full"}, {"psi.memory.some", "psi.memory.full"}}

// psi appends the share of the window some (all) tasks stalled on each
// resource: Δtotal µs × 100 over the elapsed µs.
func (b *builder) psi(prev, cur *snapshot, elapsed time.Duration) {
	us := float64(elapsed) / float64(time.Microsecond)
	for r := range psiResources {
		if !prev.havePSI[r] || !cur.havePSI[r] {
			continue
		}
		p, c := &prev.psi[r], &cur.psi[r]
		if p.haveSome && c.haveSome {
			if d, ok := delta(p.some, c.some); ok {
				b.add(psiEvents[r][0], "", stream.Percent, float64(d)*100, us)
			}
		}
		if p.haveFull && c.haveFull {
			if d, ok := delta(p.full, c.full); ok {
				b.add(psiEvents[r][1], "", stream.Percent, float64(d)*100, us)
			}
		}
	}
}

// memory appends sar -r ALL's figures, read at the end of the window.
func (b *builder) memory(m *memSnap) {
	if !m.have[miMemTotal] || !m.have[miMemFree] || m.kb[miMemTotal] == 0 {
		return
	}
	total, free := float64(m.kb[miMemTotal]), float64(m.kb[miMemFree])
	// sysstat: what is not used is free, buffers, page cache and
	// reclaimable slab, unless that exceeds the total.
	notUsed := free + float64(m.kb[miBuffers]) + float64(m.kb[miCached]) + float64(m.kb[miSReclaimable])
	if notUsed > total {
		notUsed = free
	}
	used := total - notUsed
	b.gauge("mem.kbmemfree", stream.KB, free)
	if m.have[miMemAvailable] {
		b.gauge("mem.kbavail", stream.KB, float64(m.kb[miMemAvailable]))
	}
	b.gauge("mem.kbmemused", stream.KB, used)
	b.gauge("mem.%memused", stream.Percent, used*100/total)
	b.gauge("mem.kbbuffers", stream.KB, float64(m.kb[miBuffers]))
	b.gauge("mem.kbcached", stream.KB, float64(m.kb[miCached]))
	if m.have[miCommitted] {
		b.gauge("mem.kbcommit", stream.KB, float64(m.kb[miCommitted]))
		b.gauge("mem.%commit", stream.Percent, float64(m.kb[miCommitted])*100/(total+float64(m.kb[miSwapTotal])))
	}
	for _, g := range memGauges {
		if m.have[g.field] {
			b.gauge(g.event, stream.KB, float64(m.kb[g.field]))
		}
	}
	b.swap(m)
}

// memGauges are sar -r ALL's figures read as they are.
var memGauges = [...]struct {
	event string
	field int
}{{"mem.kbactive", miActive}, {"mem.kbinact", miInactive}, {"mem.kbdirty", miDirty}, {"mem.kbanonpg", miAnonPages},
	{"mem.kbslab", miSlab}, {"mem.kbkstack", miKernelStack}, {"mem.kbpgtbl", miPageTables}, {"mem.kbvmused", miVmallocUsed}}

// swap appends sar -S's figures; the shares only with swap (used) to
// divide by.
func (b *builder) swap(m *memSnap) {
	if !m.have[miSwapTotal] || !m.have[miSwapFree] {
		return
	}
	total, free, cached := float64(m.kb[miSwapTotal]), float64(m.kb[miSwapFree]), float64(m.kb[miSwapCached])
	used := total - free
	b.gauge("mem.kbswpfree", stream.KB, free)
	b.gauge("mem.kbswpused", stream.KB, used)
	b.gauge("mem.kbswpcad", stream.KB, cached)
	if total > 0 {
		b.gauge("mem.%swpused", stream.Percent, used*100/total)
	}
	if used > 0 {
		b.gauge("mem.%swpcad", stream.Percent, cached*100/used)
	}
}

// pagingEvents are sar -B's and -W's rates.
var pagingEvents = [...]struct {
	event string
	field int
}{{"mem.pgpgin/s", vmPgpgin}, {"mem.pgpgout/s", vmPgpgout}, {"mem.fault/s", vmPgfault}, {"mem.majflt/s", vmPgmajfault},
	{"mem.pgfree/s", vmPgfree}, {"mem.pgscank/s", vmPgscanKswapd}, {"mem.pgscand/s", vmPgscanDirect},
	{"mem.pswpin/s", vmPswpin}, {"mem.pswpout/s", vmPswpout}}

func (b *builder) paging(p, c *vmSnap) {
	for _, e := range pagingEvents {
		if p.have[e.field] && c.have[e.field] {
			b.rate(e.event, "", stream.PerSecond, p.c[e.field], c.c[e.field], 1)
		}
	}
	// sar -B: pages stolen by kswapd and direct reclaim, and their share
	// of the pages scanned (%vmeff, no value without a scan).
	steal := [...]int{vmPgstealKswapd, vmPgstealDirect, vmPgscanKswapd, vmPgscanDirect}
	var d [len(steal)]float64
	for i, f := range steal {
		v, ok := delta(p.c[f], c.c[f])
		if !p.have[f] || !c.have[f] || !ok {
			return
		}
		d[i] = float64(v)
	}
	b.add("mem.pgsteal/s", "", stream.PerSecond, d[0]+d[1], b.seconds)
	b.add("mem.%vmeff", "", stream.Percent, (d[0]+d[1])*100, d[2]+d[3])
}

// loadavg appends sar -q's figures: the run queue leaves out the reader
// itself, as sar does.
func (b *builder) loadavg(l *loadSnap) {
	b.gauge("load.runq", stream.Count, float64(max(l.running, 1)-1))
	b.gauge("load.plist", stream.Count, float64(l.tasks))
	b.gauge("load.1", stream.Count, l.avg[0])
	b.gauge("load.5", stream.Count, l.avg[1])
	b.gauge("load.15", stream.Count, l.avg[2])
}
