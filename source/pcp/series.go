package pcp

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// The PCP metrics behind the host: series (docs/host.md), with the
// formulas sysstat uses, so that a series means the same from an archive
// as from latscope's own host: source.

// counterKind says how a counter's delta becomes a series.
type counterKind int

const (
	perSecond   counterKind = iota // Δ / seconds
	kbPerSecond                    // Δ in kB / seconds
	percentBusy                    // Δ time × 100 / elapsed time (%util, PSI)
	averageBusy                    // Δ time / elapsed time (aqu-sz)
)

// counterSeries maps one counter metric onto one series per instance.
type counterSeries struct {
	event, metric string
	kind          counterKind
}

var counterSeriesList = []counterSeries{
	{"disk.r/s", "disk.dev.read", perSecond},
	{"disk.w/s", "disk.dev.write", perSecond},
	{"disk.d/s", "disk.dev.discard", perSecond},
	{"disk.f/s", "disk.dev.flush", perSecond},
	{"disk.rrqm/s", "disk.dev.read_merge", perSecond},
	{"disk.wrqm/s", "disk.dev.write_merge", perSecond},
	{"disk.drqm/s", "disk.dev.discard_merge", perSecond},
	{"disk.rkB/s", "disk.dev.read_bytes", kbPerSecond},
	{"disk.wkB/s", "disk.dev.write_bytes", kbPerSecond},
	{"disk.dkB/s", "disk.dev.discard_bytes", kbPerSecond},
	{"disk.aqu-sz", "disk.dev.aveq", averageBusy},
	{"disk.%util", "disk.dev.avactive", percentBusy},
	{"net.rxpck/s", "network.interface.in.packets", perSecond},
	{"net.txpck/s", "network.interface.out.packets", perSecond},
	{"net.rxkB/s", "network.interface.in.bytes", kbPerSecond},
	{"net.txkB/s", "network.interface.out.bytes", kbPerSecond},
	{"net.rxcmp/s", "network.interface.in.compressed", perSecond},
	{"net.txcmp/s", "network.interface.out.compressed", perSecond},
	{"net.rxmcst/s", "network.interface.in.mcasts", perSecond},
	{"net.rxerr/s", "network.interface.in.errors", perSecond},
	{"net.txerr/s", "network.interface.out.errors", perSecond},
	{"net.rxdrop/s", "network.interface.in.drops", perSecond},
	{"net.txdrop/s", "network.interface.out.drops", perSecond},
	{"tcp.retrans/s", "network.tcp.retranssegs", perSecond},
	{"cpu.proc/s", "kernel.all.sysfork", perSecond},
	{"cpu.cswch/s", "kernel.all.pswitch", perSecond},
	{"psi.cpu.some", "kernel.all.pressure.cpu.some.total", percentBusy},
	{"psi.cpu.full", "kernel.all.pressure.cpu.full.total", percentBusy},
	{"psi.io.some", "kernel.all.pressure.io.some.total", percentBusy},
	{"psi.io.full", "kernel.all.pressure.io.full.total", percentBusy},
	{"psi.memory.some", "kernel.all.pressure.memory.some.total", percentBusy},
	{"psi.memory.full", "kernel.all.pressure.memory.full.total", percentBusy},
	{"mem.pgpgin/s", "mem.vmstat.pgpgin", perSecond},
	{"mem.pgpgout/s", "mem.vmstat.pgpgout", perSecond},
	{"mem.fault/s", "mem.vmstat.pgfault", perSecond},
	{"mem.majflt/s", "mem.vmstat.pgmajfault", perSecond},
	{"mem.pswpin/s", "mem.vmstat.pswpin", perSecond},
	{"mem.pswpout/s", "mem.vmstat.pswpout", perSecond},
}

// awaitSeries is a latency: the time a device spent on requests over
// their number (iostat's r_await: no requests, no value).
var awaitSeries = []struct{ event, time, count string }{
	{"disk.r_await", "disk.dev.read_rawactive", "disk.dev.read"},
	{"disk.w_await", "disk.dev.write_rawactive", "disk.dev.write"},
	{"disk.d_await", "disk.dev.discard_rawactive", "disk.dev.discard"},
	{"disk.f_await", "disk.dev.flush_rawactive", "disk.dev.flush"},
}

// requestSeries are iostat's per-request figures, per device: the merged
// share of requests (%rrqm: merges × 100 over merges + requests) and the
// average request size (rareq-sz: kB over requests).
var requestSeries = []struct{ kind, requests, merges, kb string }{
	{"r", "disk.dev.read", "disk.dev.read_merge", "disk.dev.read_bytes"},
	{"w", "disk.dev.write", "disk.dev.write_merge", "disk.dev.write_bytes"},
	{"d", "disk.dev.discard", "disk.dev.discard_merge", "disk.dev.discard_bytes"},
}

// gaugeSeries maps a singular instant metric onto a series: the value at
// the end of the window, weighted by its seconds.
var gaugeSeries = []struct {
	event, metric string
	quantity      stream.Quantity
}{
	{"mem.kbmemfree", "mem.util.free", stream.KB},
	{"mem.kbavail", "mem.util.available", stream.KB},
	{"mem.kbbuffers", "mem.util.bufmem", stream.KB},
	{"mem.kbcached", "mem.util.cached", stream.KB},
	{"mem.kbcommit", "mem.util.committed_AS", stream.KB},
	{"mem.kbactive", "mem.util.active", stream.KB},
	{"mem.kbinact", "mem.util.inactive", stream.KB},
	{"mem.kbdirty", "mem.util.dirty", stream.KB},
	{"load.plist", "kernel.all.nprocs", stream.Count},
	{"load.blocked", "kernel.all.blocked", stream.Count},
}

// loadSeries are kernel.all.load's instances (numbered 1, 5 and 15).
var loadSeries = map[int32]string{1: "load.1", 5: "load.5", 15: "load.15"}

// cpuStates are the columns of sar -u ALL; total is the sum of those
// marked, as sysstat sums /proc/stat (guest time is inside user and
// guest_nice inside nice, so %user and %nice subtract them).
var cpuStates = []struct {
	column, metric, minus string
	inTotal               bool
}{
	{"%user", "user", "guest", true},
	{"%nice", "nice", "guest_nice", true},
	{"%system", "sys", "", true},
	{"%iowait", "wait.total", "", true},
	{"%irq", "irq.hard", "", true},
	{"%soft", "irq.soft", "", true},
	{"%steal", "steal", "", true},
	{"%idle", "idle", "", true},
	{"%guest", "guest", "", false},
	{"%gnice", "guest_nice", "", false},
}

// usedMetrics lists every metric name the series read, so that records
// without any of them (pmlogger's pmcd prologue) are not windows.
func usedMetrics() []string {
	var names []string
	for _, c := range counterSeriesList {
		names = append(names, c.metric)
	}
	for _, a := range awaitSeries {
		names = append(names, a.time, a.count)
	}
	for _, g := range gaugeSeries {
		names = append(names, g.metric)
	}
	for _, r := range requestSeries {
		names = append(names, r.requests, r.merges, r.kb)
	}
	for _, s := range cpuStates {
		names = append(names, "kernel.all.cpu."+s.metric, "kernel.percpu.cpu."+s.metric)
	}
	return append(names, "kernel.all.load", "kernel.all.runnable",
		"mem.physmem", "mem.util.slabReclaimable", "mem.util.swapTotal")
}

// stamped is a value and when it was read.
type stamped struct {
	v  Value
	at time.Time
}

// tracker turns the records of an archive into windows: it keeps the last
// value of every metric instance, so that a counter's delta spans from its
// own previous reading (metrics logged at different rates stay right).
type tracker struct {
	meta *Meta
	used map[uint32]bool
	last map[uint32]map[int32]stamped
}

func newTracker(meta *Meta) *tracker {
	t := &tracker{meta: meta, used: map[uint32]bool{}, last: map[uint32]map[int32]stamped{}}
	for _, name := range usedMetrics() {
		if d, ok := meta.Lookup(name); ok {
			t.used[d.PMID] = true
		}
	}
	return t
}

// relevant reports whether a record holds any metric the series use.
func (t *tracker) relevant(r Result) bool {
	for _, s := range r.Sets {
		if t.used[s.PMID] {
			return true
		}
	}
	return false
}

// forget drops every last value: after a mark nothing spans the break.
func (t *tracker) forget() { t.last = map[uint32]map[int32]stamped{} }

// window is one record's view: its values, the last ones before it, and
// the window's length.
type window struct {
	t    *tracker
	at   time.Time
	secs float64
	cur  map[uint32]map[int32]Value
	// names caches instances' names by metric for this window.
	names map[uint32]map[int32]string
	out   []stream.SeriesMean
}

// advance computes the series of the window that record r closes
// (secs long) and remembers r's values.
func (t *tracker) advance(r Result, secs float64) []stream.SeriesMean {
	w := &window{t: t, at: r.At, secs: secs, cur: map[uint32]map[int32]Value{}, names: map[uint32]map[int32]string{}}
	for _, s := range r.Sets {
		if !t.used[s.PMID] {
			continue
		}
		vals := map[int32]Value{}
		for _, v := range s.Values {
			vals[v.Inst] = v
		}
		w.cur[s.PMID] = vals
	}
	if secs > 0 {
		w.counters()
		w.awaits()
		w.requests()
		w.gauges()
		w.cpu()
	}
	for pmid, vals := range w.cur {
		last := t.last[pmid]
		if last == nil {
			last = map[int32]stamped{}
			t.last[pmid] = last
		}
		for inst, v := range vals {
			last[inst] = stamped{v: v, at: r.At}
		}
	}
	slices.SortFunc(w.out, func(a, b stream.SeriesMean) int {
		return cmp.Or(strings.Compare(a.Key.Event, b.Key.Event), strings.Compare(a.Key.Instance, b.Key.Instance))
	})
	return w.out
}

// delta is a counter's increase since its last reading and the seconds
// between; ok is false without a previous reading or when the counter
// went down by more than a wrap explains (a reset: no value).
func (w *window) delta(d *Desc, inst int32) (delta, secs float64, ok bool) {
	cur, ok := w.cur[d.PMID][inst]
	if !ok || d.Sem != semCounter {
		return 0, 0, false
	}
	prev, ok := w.t.last[d.PMID][inst]
	if !ok {
		return 0, 0, false
	}
	secs = w.at.Sub(prev.at).Seconds()
	delta, ok = counterDelta(d.Type, prev.v, cur)
	return delta, secs, ok && secs > 0
}

// counterDelta is cur − prev for a counter of type typ. An integer
// counter that went down wrapped when the wrapped increase is under half
// its range (32-bit counters such as disk.dev.avactive wrap every 49 days
// of busy milliseconds); otherwise it was reset.
func counterDelta(typ int32, prev, cur Value) (float64, bool) {
	switch typ {
	case type32, typeU32:
		d := uint32(cur.Raw) - uint32(prev.Raw)
		return float64(d), d < 1<<31
	case type64, typeU64:
		d := cur.Raw - prev.Raw
		return float64(d), d < 1<<63
	}
	d := cur.Float - prev.Float
	return d, d >= 0 && !math.IsNaN(d)
}

// instances returns a metric's instances in this record with their names
// ("" for a singular metric), looked up once per window and metric.
func (w *window) instances(d *Desc) map[int32]string {
	if names, ok := w.names[d.PMID]; ok {
		return names
	}
	names := make(map[int32]string, len(w.cur[d.PMID]))
	w.names[d.PMID] = names
	for inst := range w.cur[d.PMID] {
		if d.Indom == 0xffffffff {
			names[inst] = ""
			continue
		}
		names[inst] = w.t.meta.InstName(d.Indom, inst, w.at)
	}
	return names
}

func (w *window) add(event, instance string, q stream.Quantity, count, sum float64) {
	w.out = append(w.out, stream.SeriesMean{
		Key:   stream.Key{Event: event, Instance: instance},
		Count: count, Sum: sum, Unit: stream.QuantityUnit, Quantity: q,
	})
}

func (w *window) counters() {
	for _, c := range counterSeriesList {
		d, ok := w.t.meta.Lookup(c.metric)
		if !ok {
			continue
		}
		for inst, name := range w.instances(d) {
			delta, secs, ok := w.delta(d, inst)
			if !ok {
				continue
			}
			switch c.kind {
			case perSecond:
				w.add(c.event, name, stream.PerSecond, secs, delta)
			case kbPerSecond:
				if kb := d.Units.KB(); kb > 0 {
					w.add(c.event, name, stream.KBPerSecond, secs, delta*kb)
				}
			case percentBusy, averageBusy:
				unit := d.Units.Seconds()
				if unit <= 0 {
					continue
				}
				// The elapsed time in the metric's own unit, as iostat
				// divides busy ms by elapsed ms.
				elapsed := secs / unit
				if c.kind == percentBusy {
					w.add(c.event, name, stream.Percent, elapsed, delta*100)
				} else {
					w.add(c.event, name, stream.Count, elapsed, delta)
				}
			}
		}
	}
}

func (w *window) awaits() {
	for _, a := range awaitSeries {
		dt, ok1 := w.t.meta.Lookup(a.time)
		dn, ok2 := w.t.meta.Lookup(a.count)
		if !ok1 || !ok2 || dt.Units.Seconds() <= 0 {
			continue
		}
		for inst, name := range w.instances(dt) {
			busy, _, ok1 := w.delta(dt, inst)
			n, _, ok2 := w.delta(dn, inst)
			if !ok1 || !ok2 || n == 0 {
				continue
			}
			ms := busy * dt.Units.Seconds() * 1000
			w.out = append(w.out, stream.SeriesMean{Key: stream.Key{Event: a.event, Instance: name}, Count: n, Sum: ms, Unit: hist.Millisecond})
		}
	}
}

func (w *window) requests() {
	for _, r := range requestSeries {
		dn, ok := w.t.meta.Lookup(r.requests)
		if !ok {
			continue
		}
		dm, hasMerges := w.t.meta.Lookup(r.merges)
		dk, hasKB := w.t.meta.Lookup(r.kb)
		for inst, name := range w.instances(dn) {
			n, _, ok := w.delta(dn, inst)
			if !ok {
				continue
			}
			if hasMerges {
				if m, _, ok := w.delta(dm, inst); ok && n+m > 0 {
					w.add("disk.%"+r.kind+"rqm", name, stream.Percent, n+m, m*100)
				}
			}
			if hasKB && dk.Units.KB() > 0 {
				if kb, _, ok := w.delta(dk, inst); ok && n > 0 {
					w.add("disk."+r.kind+"areq-sz", name, stream.KB, n, kb*dk.Units.KB())
				}
			}
		}
	}
}

// gauge returns a singular instant metric's value in this record, scaled
// to kB for sizes.
func (w *window) gauge(name string) (float64, bool) {
	d, ok := w.t.meta.Lookup(name)
	if !ok {
		return 0, false
	}
	v, ok := w.cur[d.PMID][nullInst]
	if !ok {
		return 0, false
	}
	if kb := d.Units.KB(); kb > 0 {
		return v.Float * kb, true
	}
	return v.Float, true
}

func (w *window) addGauge(event string, q stream.Quantity, value float64) {
	w.add(event, "", q, w.secs, value*w.secs)
}

func (w *window) gauges() {
	for _, g := range gaugeSeries {
		if v, ok := w.gauge(g.metric); ok {
			w.addGauge(g.event, g.quantity, v)
		}
	}
	if d, ok := w.t.meta.Lookup("kernel.all.load"); ok {
		for inst, v := range w.cur[d.PMID] {
			if event, ok := loadSeries[inst]; ok {
				w.addGauge(event, stream.Count, v.Float)
			}
		}
	}
	// sar -q's runq-sz does not count the reader; pmdalinux was running
	// when it read /proc/loadavg too.
	if v, ok := w.gauge("kernel.all.runnable"); ok {
		w.addGauge("load.runq", stream.Count, math.Max(v-1, 0))
	}
	w.memory()
}

// memory derives sar -r's kbmemused, %memused and %commit.
func (w *window) memory() {
	total, ok := w.gauge("mem.physmem")
	if !ok || total <= 0 {
		return
	}
	free, ok1 := w.gauge("mem.util.free")
	buffers, ok2 := w.gauge("mem.util.bufmem")
	cached, ok3 := w.gauge("mem.util.cached")
	slab, ok4 := w.gauge("mem.util.slabReclaimable")
	if ok1 && ok2 && ok3 && ok4 {
		used := total - free - buffers - cached - slab
		if used < 0 {
			used = total - free
		}
		w.addGauge("mem.kbmemused", stream.KB, used)
		w.addGauge("mem.%memused", stream.Percent, used*100/total)
	}
	commit, ok1 := w.gauge("mem.util.committed_AS")
	swap, ok2 := w.gauge("mem.util.swapTotal")
	if ok1 && ok2 {
		w.addGauge("mem.%commit", stream.Percent, commit*100/(total+swap))
	}
}

// cpu derives sar -u ALL -P ALL: every state's share of the total.
func (w *window) cpu() {
	w.cpuOf("kernel.all.cpu.", false)
	w.cpuOf("kernel.percpu.cpu.", true)
}

func (w *window) cpuOf(prefix string, perCPU bool) {
	deltas := map[string]map[int32]float64{}
	var names map[int32]string
	for _, s := range cpuStates {
		d, ok := w.t.meta.Lookup(prefix + s.metric)
		if !ok {
			continue
		}
		if names == nil {
			names = w.instances(d)
		}
		deltas[s.metric] = map[int32]float64{}
		for inst := range names {
			if v, _, ok := w.delta(d, inst); ok {
				deltas[s.metric][inst] = v
			}
		}
	}
	for inst, name := range names {
		if !perCPU {
			name = "all"
		}
		var total float64
		complete := true
		for _, s := range cpuStates {
			v, ok := deltas[s.metric][inst]
			if s.inTotal {
				total += v
				complete = complete && ok
			}
		}
		if !complete || total <= 0 {
			continue
		}
		for _, s := range cpuStates {
			v, ok := deltas[s.metric][inst]
			if !ok {
				continue
			}
			if s.minus != "" {
				v = math.Max(v-deltas[s.minus][inst], 0)
			}
			w.add("cpu."+s.column, name, stream.Percent, total, v*100)
		}
	}
}
