package host

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
)

// captureDir is the real capture of this machine's /proc
// (testdata/host/vm-6.18/PROVENANCE.md): t0 and t1, 1.06 s apart.
func captureDir(t testing.TB) string {
	t.Helper()
	return filepath.Dir(testenv.DataFile(t, "host/vm-6.18/PROVENANCE.md"))
}

const captureElapsed = 1060 * time.Millisecond

var all = groups{cpu: true, disk: true, net: true, mem: true, psi: true, load: true}

// readCapture samples one capture with the sampler latscope runs.
func readCapture(t testing.TB, dir, at string) (*snapshot, *sampler) {
	t.Helper()
	s := newSampler(filepath.Join(dir, at, "proc"), filepath.Join(dir, "sys"), all, func(file string, line int, reason string) {
		t.Errorf("%s:%d: %s", file, line, reason)
	})
	t.Cleanup(s.close)
	var snap snapshot
	s.sample(&snap)
	return &snap, s
}

// captureMeans are the series of the captured window.
func captureMeans(t *testing.T) []stream.SeriesMean {
	dir := captureDir(t)
	t0, s := readCapture(t, dir, "t0")
	t1, _ := readCapture(t, dir, "t1")
	return means(t0, t1, captureElapsed, all, s, nil)
}

// valueOf finds a series' mean: its Sum/Count (a latency in ns).
func valueOf(t *testing.T, ms []stream.SeriesMean, event, instance string) (float64, stream.SeriesMean) {
	t.Helper()
	for _, m := range ms {
		if m.Key.Event == event && m.Key.Instance == instance {
			if err := m.Validate(); err != nil {
				t.Errorf("%s %s: %v", event, instance, err)
			}
			return m.Mean(), m
		}
	}
	t.Fatalf("no series %s @%s", event, instance)
	return 0, stream.SeriesMean{}
}

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// TestCaptureFigures checks every group's figures on the real capture
// against arithmetic done by hand from the two files' numbers (quoted in
// the comments), with Δt = 1.06 s.
func TestCaptureFigures(t *testing.T) {
	ms := captureMeans(t)
	const s = 1.06
	cases := []struct {
		event, instance string
		want            float64
		q               stream.Quantity
	}{
		// /proc/stat cpu: Δ user 120, nice 0, system 21, idle 67, iowait 0,
		// irq 0, softirq 1, steal 0: total 209 jiffies.
		{"cpu.%user", "all", 120.0 * 100 / 209, stream.Percent},
		{"cpu.%system", "all", 21.0 * 100 / 209, stream.Percent},
		{"cpu.%soft", "all", 1.0 * 100 / 209, stream.Percent},
		{"cpu.%idle", "all", 67.0 * 100 / 209, stream.Percent},
		{"cpu.%iowait", "all", 0, stream.Percent},
		// ctxt 580763340 → 580770303, processes 1092771 → 1092804.
		{"cpu.cswch/s", "", 6963 / s, stream.PerSecond},
		{"cpu.proc/s", "", 33 / s, stream.PerSecond},
		// cpu1: Δ user 90, system 8, idle 8: total 106.
		{"cpu.%user", "cpu1", 90.0 * 100 / 106, stream.Percent},
		{"cpu.%idle", "cpu1", 8.0 * 100 / 106, stream.Percent},
		// loop0: Δ reads 318, read sectors 2544, read ms 16, writes 212,
		// write sectors 1696, write ms 11, io_ticks 12, time_in_queue 27.
		{"disk.r/s", "loop0", 318 / s, stream.PerSecond},
		{"disk.rkB/s", "loop0", 2544.0 / 2 / s, stream.KBPerSecond},
		{"disk.rareq-sz", "loop0", 2544.0 / 2 / 318, stream.KB},
		{"disk.w/s", "loop0", 212 / s, stream.PerSecond},
		{"disk.wkB/s", "loop0", 1696.0 / 2 / s, stream.KBPerSecond},
		{"disk.aqu-sz", "loop0", 27.0 / 1060, stream.Count},
		{"disk.%util", "loop0", 12.0 * 100 / 1060, stream.Percent},
		{"disk.%rrqm", "loop0", 0, stream.Percent},
		// vda: Δ reads 5, read sectors 104, writes 1, discards 3 (24
		// sectors, 1 ms), io_ticks 4, time_in_queue 2.
		{"disk.r/s", "vda", 5 / s, stream.PerSecond},
		{"disk.rkB/s", "vda", 52 / s, stream.KBPerSecond},
		{"disk.d/s", "vda", 3 / s, stream.PerSecond},
		{"disk.dkB/s", "vda", 12 / s, stream.KBPerSecond},
		{"disk.%util", "vda", 4.0 * 100 / 1060, stream.Percent},
		{"disk.aqu-sz", "vda", 2.0 / 1060, stream.Count},
		{"disk.f/s", "vda", 0, stream.PerSecond},
		// Idle interfaces and no retransmits in the window.
		{"net.rxpck/s", "eth0", 0, stream.PerSecond},
		{"net.txkB/s", "lo", 0, stream.KBPerSecond},
		{"tcp.retrans/s", "", 0, stream.PerSecond},
		// pressure/io: Δ some 14350 µs, full 957 µs.
		{"psi.io.some", "", 14350.0 * 100 / 1.06e6, stream.Percent},
		{"psi.io.full", "", 957.0 * 100 / 1.06e6, stream.Percent},
		// meminfo at t1: MemTotal 24683656, MemFree 16330736, Buffers
		// 157848, Cached 7142212, SReclaimable 632920, Committed_AS
		// 1106900, SwapTotal 0.
		{"mem.kbmemused", "", 24683656 - 16330736 - 157848 - 7142212 - 632920, stream.KB},
		{"mem.%memused", "", (24683656.0 - 16330736 - 157848 - 7142212 - 632920) * 100 / 24683656, stream.Percent},
		{"mem.kbavail", "", 23850996, stream.KB},
		{"mem.%commit", "", 1106900.0 * 100 / 24683656, stream.Percent},
		// AnonPages 199804, Slab 697604, PageTables 4940; no swap.
		{"mem.kbanonpg", "", 199804, stream.KB},
		{"mem.kbslab", "", 697604, stream.KB},
		{"mem.kbpgtbl", "", 4940, stream.KB},
		{"mem.kbswpused", "", 0, stream.KB},
		// vmstat: Δ pgpgin 1324, pgpgout 864, pgfault 22109, pgmajfault 5.
		{"mem.pgpgin/s", "", 1324 / s, stream.PerSecond},
		{"mem.pgpgout/s", "", 864 / s, stream.PerSecond},
		{"mem.fault/s", "", 22109 / s, stream.PerSecond},
		{"mem.majflt/s", "", 5 / s, stream.PerSecond},
		// pgfree Δ 20458; no scan, no steal.
		{"mem.pgfree/s", "", 20458 / s, stream.PerSecond},
		{"mem.pgsteal/s", "", 0, stream.PerSecond},
		// loadavg at t1: "2.20 2.05 2.58 3/126": the run queue leaves out
		// the reader.
		{"load.1", "", 2.20, stream.Count},
		{"load.15", "", 2.58, stream.Count},
		{"load.runq", "", 2, stream.Count},
		{"load.plist", "", 126, stream.Count},
		{"load.blocked", "", 0, stream.Count},
	}
	for _, c := range cases {
		got, m := valueOf(t, ms, c.event, c.instance)
		if !near(got, c.want) || m.Quantity != c.q {
			t.Errorf("%s @%s = %v %s, want %v %s", c.event, c.instance, got, m.Quantity, c.want, c.q)
		}
	}
	// Latencies: Δ ms over Δ I/Os, in ms.
	for _, c := range []struct {
		event, instance string
		ms              float64
	}{{"disk.r_await", "loop0", 16.0 / 318}, {"disk.w_await", "loop0", 11.0 / 212}, {"disk.d_await", "vda", 1.0 / 3}, {"disk.r_await", "vda", 0}} {
		got, m := valueOf(t, ms, c.event, c.instance)
		if !m.Quantity.IsLatency() || m.Unit != hist.Millisecond || !near(got, c.ms*1e6) {
			t.Errorf("%s @%s = %v ns (%s), want %v ms", c.event, c.instance, got, m.Unit, c.ms)
		}
	}
	// Without swap, no share of it.
	for _, m := range ms {
		if m.Key.Event == "mem.%swpused" || m.Key.Event == "mem.%swpcad" {
			t.Errorf("%s without swap", m.Key)
		}
	}
	// iostat leaves out devices that never did I/O (loop2, zram0); every
	// series is valid and none is negative.
	for _, m := range ms {
		if m.Key.Instance == "loop2" || m.Key.Instance == "zram0" {
			t.Errorf("unused device listed: %s", m.Key)
		}
		if m.Sum < 0 || m.Count < 0 {
			t.Errorf("%s: negative %v/%v", m.Key, m.Sum, m.Count)
		}
	}
}

// TestCPUsLeaveGuestOut checks sar's reading of guest time: the kernel
// counts it in user (guest_nice in nice) too. SYNTHETIC lines.
func TestCPUsLeaveGuestOut(t *testing.T) {
	var p, c snapshot
	p.haveStat, c.haveStat = true, true
	parseStat([]byte("cpu 100 10 50 800 0 0 0 0 20 5\n"), &p.stat)
	parseStat([]byte("cpu 160 20 70 830 0 0 0 10 50 10\n"), &c.stat)
	ms := means(&p, &c, time.Second, groups{cpu: true}, nil, nil)
	// Δ user 60 (guest 30), nice 10 (guest_nice 5), system 20, idle 30,
	// steal 10: total 130.
	for event, want := range map[string]float64{"cpu.%user": 30, "cpu.%nice": 5, "cpu.%guest": 30, "cpu.%gnice": 5, "cpu.%system": 20, "cpu.%steal": 10, "cpu.%idle": 30} {
		if got, _ := valueOf(t, ms, event, "all"); !near(got, want*100/130) {
			t.Errorf("%s = %v, want %v", event, got, want*100/130)
		}
	}
}

// TestCountersWrapAndReset: a 32-bit diskstats field that wraps counts on;
// a counter that goes back (a device replaced) leaves the window without
// that series, never a negative. SYNTHETIC lines.
func TestCountersWrapAndReset(t *testing.T) {
	line := func(reads, sectors uint64) string {
		return "   8       0 sda " + u(reads) + " 0 " + u(sectors) + " 10 0 0 0 0 0 100 10\n"
	}
	var p, c snapshot
	p.haveDisks, c.haveDisks = true, true
	p.disks, _ = parseDiskstats([]byte(line(1<<32-10, 4000)), nil)
	c.disks, _ = parseDiskstats([]byte(line(5, 4100)), nil)
	ms := means(&p, &c, time.Second, groups{disk: true}, nil, nil)
	if got, _ := valueOf(t, ms, "disk.r/s", "sda"); got != 15 {
		t.Errorf("wrapped r/s = %v, want 15", got)
	}
	p.disks, _ = parseDiskstats([]byte(line(1000, 4000)), nil)
	c.disks, _ = parseDiskstats([]byte(line(10, 4100)), nil)
	for _, m := range means(&p, &c, time.Second, groups{disk: true}, nil, nil) {
		if m.Key.Event == "disk.r/s" || m.Key.Event == "disk.r_await" {
			t.Errorf("reset counter gave %s = %v/%v", m.Key, m.Sum, m.Count)
		}
		if m.Key.Event == "disk.%util" && m.Mean() != 0 {
			t.Errorf("%%util = %v, want 0 (io_ticks did not move)", m.Mean())
		}
	}
}

// TestDevicesComeAndGo: a device or interface present in one sample only
// has no series; the others keep theirs. Real capture, lines removed.
func TestDevicesComeAndGo(t *testing.T) {
	dir := captureDir(t)
	t0, s := readCapture(t, dir, "t0")
	t1, _ := readCapture(t, dir, "t1")
	t0.disks = dropNamed(t0.disks, "vda", func(d diskCounters) string { return d.name })
	t1.nets = dropNamed(t1.nets, "eth0", func(i ifCounters) string { return i.name })
	ms := means(t0, t1, captureElapsed, all, s, nil)
	var loop0 bool
	for _, m := range ms {
		if m.Key.Instance == "vda" || m.Key.Instance == "eth0" {
			t.Errorf("%s has a value without two samples", m.Key)
		}
		loop0 = loop0 || m.Key.Instance == "loop0"
	}
	if !loop0 {
		t.Error("loop0 lost its series")
	}
}

func dropNamed[T any](xs []T, name string, nameOf func(T) string) []T {
	var out []T
	for _, x := range xs {
		if nameOf(x) != name {
			out = append(out, x)
		}
	}
	return out
}

// TestBadLinesKeepTheRest: a malformed line is reported with its number
// and the other lines are read. Real capture with a line spoiled.
func TestBadLinesKeepTheRest(t *testing.T) {
	dir := captureDir(t)
	for _, c := range []struct {
		file  string
		spoil func(string) string
		count func([]byte) int
	}{
		{"diskstats", func(s string) string { return strings.Replace(s, "vda 6", "vda x", 1) }, func(b []byte) int { d, _ := parseDiskstats(b, nil); return len(d) }},
		{"net/dev", func(s string) string { return strings.Replace(s, "eth0: 5", "eth0: x", 1) }, func(b []byte) int { d, _ := parseNetDev(b, nil); return len(d) }},
		{"stat", func(s string) string { return strings.Replace(s, "cpu1 1", "cpu1 x", 1) }, func(b []byte) int { var s statSnap; parseStat(b, &s); return len(s.cpus) }},
	} {
		orig, err := os.ReadFile(filepath.Join(dir, "t0", "proc", c.file))
		if err != nil {
			t.Fatal(err)
		}
		bad := []byte(c.spoil(string(orig)))
		if string(bad) == string(orig) {
			t.Fatalf("%s: nothing spoiled", c.file)
		}
		var probs []problem
		switch c.file {
		case "diskstats":
			_, probs = parseDiskstats(bad, nil)
		case "net/dev":
			_, probs = parseNetDev(bad, nil)
		case "stat":
			var s statSnap
			probs = parseStat(bad, &s)
		}
		if len(probs) != 1 || probs[0].line < 1 {
			t.Errorf("%s: problems %v, want one with its line", c.file, probs)
		}
		if got, want := c.count(bad), c.count(orig)-1; got != want {
			t.Errorf("%s: %d entries read, want %d", c.file, got, want)
		}
	}
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

func TestUntilNext(t *testing.T) {
	at := func(ms int) time.Time { return time.Date(2026, 1, 1, 0, 0, 10, ms*1e6, time.UTC) }
	for _, c := range []struct {
		now, leastMs, wantMs int
	}{{830, 500, 1170}, {300, 500, 700}, {950, 100, 1050}, {850, 100, 150}, {0, 100, 1000}} {
		if got := untilNext(at(c.now), time.Second, time.Duration(c.leastMs)*time.Millisecond); got != time.Duration(c.wantMs)*time.Millisecond {
			t.Errorf("at .%03d, least %d ms: %v, want %d ms", c.now, c.leastMs, got, c.wantMs)
		}
	}
}

// links is a fake /sys/class/net: interface → Mb/s and full duplex.
type links map[string][2]float64

func (links) listDisk(string) bool { return true }
func (l links) linkSpeed(name string) (float64, bool, bool) {
	v, ok := l[name]
	return v[0], v[1] == 1, ok
}

// TestIfutil checks sar -n DEV's %ifutil: the busier direction over the
// link in full duplex, both in half duplex, no value without a speed.
// SYNTHETIC /proc/net/dev lines, 2 s apart.
func TestIfutil(t *testing.T) {
	dev := func(rx, tx uint64) []byte {
		head := "Inter-|   Receive\n face |bytes\n"
		line := func(name string) string {
			return name + ": " + u(rx) + " 0 0 0 0 0 0 0 " + u(tx) + " 0 0 0 0 0 0 0\n"
		}
		return []byte(head + line("eth0") + line("eth1") + line("lo"))
	}
	var p, c snapshot
	p.haveNets, c.haveNets = true, true
	p.nets, _ = parseNetDev(dev(0, 0), nil)
	c.nets, _ = parseNetDev(dev(50e6, 10e6), nil) // 25 MB/s in, 5 MB/s out
	ms := means(&p, &c, 2*time.Second, groups{net: true}, links{"eth0": {1000, 1}, "eth1": {1000, 0}}, nil)
	if got, _ := valueOf(t, ms, "net.%ifutil", "eth0"); !near(got, 25e6*8*100/1e9) {
		t.Errorf("full duplex %%ifutil = %v, want 20", got)
	}
	if got, _ := valueOf(t, ms, "net.%ifutil", "eth1"); !near(got, 30e6*8*100/1e9) {
		t.Errorf("half duplex %%ifutil = %v, want 24", got)
	}
	for _, m := range ms {
		if m.Key.Event == "net.%ifutil" && m.Key.Instance == "lo" {
			t.Errorf("lo has no speed, yet %%ifutil %v", m.Mean())
		}
	}
}
