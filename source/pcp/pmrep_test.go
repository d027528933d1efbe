package pcp

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/pcptest"
	"github.com/latscope/latscope/stream"
)

// pmrepColumn is one host: series and the PCP derived metric that
// computes it with PCP's own arithmetic, for pmrep to print.
type pmrepColumn struct {
	event string
	// name is the derived metric; pmrep prints NAME or NAME-INSTANCE.
	name, expr string
	// all says the series' instance is "all" where pmrep prints none.
	all bool
}

// pmrepColumns writes sysstat's formulas (docs/host.md) as PCP derived
// metrics, independently of the reader's tables.
func pmrepColumns() []pmrepColumn {
	var cols []pmrepColumn
	for _, cpu := range []struct {
		prefix, tag string
		all         bool
	}{{"kernel.all.cpu.", "all", true}, {"kernel.percpu.cpu.", "per", false}} {
		d := func(m string) string { return "delta(" + cpu.prefix + m + ")" }
		total := "(" + strings.Join([]string{d("user"), d("nice"), d("sys"), d("idle"), d("wait.total"), d("irq.hard"), d("irq.soft"), d("steal")}, " + ") + ")"
		for _, s := range []struct{ column, expr string }{
			{"%user", d("user") + " - " + d("guest")},
			{"%nice", d("nice") + " - " + d("guest_nice")},
			{"%system", d("sys")}, {"%iowait", d("wait.total")}, {"%irq", d("irq.hard")},
			{"%soft", d("irq.soft")}, {"%steal", d("steal")}, {"%idle", d("idle")},
			{"%guest", d("guest")}, {"%gnice", d("guest_nice")},
		} {
			name := "ls.cpu_" + cpu.tag + "." + strings.TrimPrefix(s.column, "%")
			cols = append(cols, pmrepColumn{"cpu." + s.column, name, "100 * (" + s.expr + ") / " + total, cpu.all})
		}
	}
	rate := func(event, metric, form string) {
		name := "ls." + strings.NewReplacer(".", "_", "/", "_per_", "%", "pct_", "-", "_").Replace(event)
		if form == "" {
			form = "%s"
		}
		cols = append(cols, pmrepColumn{event, name, fmt.Sprintf(form, "rate("+metric+")"), false})
	}
	for _, r := range [][3]string{
		{"disk.r/s", "disk.dev.read", ""}, {"disk.w/s", "disk.dev.write", ""},
		{"disk.d/s", "disk.dev.discard", ""}, {"disk.f/s", "disk.dev.flush", ""},
		{"disk.rrqm/s", "disk.dev.read_merge", ""}, {"disk.wrqm/s", "disk.dev.write_merge", ""},
		{"disk.drqm/s", "disk.dev.discard_merge", ""},
		{"disk.rkB/s", "disk.dev.read_bytes", ""}, {"disk.wkB/s", "disk.dev.write_bytes", ""},
		{"disk.dkB/s", "disk.dev.discard_bytes", ""},
		{"disk.aqu-sz", "disk.dev.aveq", ""}, {"disk.%util", "disk.dev.avactive", "100 * %s"},
		{"net.rxpck/s", "network.interface.in.packets", ""}, {"net.txpck/s", "network.interface.out.packets", ""},
		{"net.rxkB/s", "network.interface.in.bytes", "%s / 1024"}, {"net.txkB/s", "network.interface.out.bytes", "%s / 1024"},
		{"net.rxcmp/s", "network.interface.in.compressed", ""}, {"net.txcmp/s", "network.interface.out.compressed", ""},
		{"net.rxmcst/s", "network.interface.in.mcasts", ""},
		{"net.rxerr/s", "network.interface.in.errors", ""}, {"net.txerr/s", "network.interface.out.errors", ""},
		{"net.rxdrop/s", "network.interface.in.drops", ""}, {"net.txdrop/s", "network.interface.out.drops", ""},
		{"tcp.retrans/s", "network.tcp.retranssegs", ""},
		{"cpu.proc/s", "kernel.all.sysfork", ""}, {"cpu.cswch/s", "kernel.all.pswitch", ""},
		{"psi.cpu.some", "kernel.all.pressure.cpu.some.total", "100 * %s"},
		{"psi.io.some", "kernel.all.pressure.io.some.total", "100 * %s"},
		{"psi.io.full", "kernel.all.pressure.io.full.total", "100 * %s"},
		{"psi.memory.some", "kernel.all.pressure.memory.some.total", "100 * %s"},
		{"psi.memory.full", "kernel.all.pressure.memory.full.total", "100 * %s"},
		{"mem.pgpgin/s", "mem.vmstat.pgpgin", ""}, {"mem.pgpgout/s", "mem.vmstat.pgpgout", ""},
		{"mem.fault/s", "mem.vmstat.pgfault", ""}, {"mem.majflt/s", "mem.vmstat.pgmajfault", ""},
		{"mem.pswpin/s", "mem.vmstat.pswpin", ""}, {"mem.pswpout/s", "mem.vmstat.pswpout", ""},
	} {
		rate(r[0], r[1], r[2])
	}
	for _, r := range [][4]string{{"r", "read", "read_merge", "read_bytes"}, {"w", "write", "write_merge", "write_bytes"}, {"d", "discard", "discard_merge", "discard_bytes"}} {
		n, m, kb := "delta(disk.dev."+r[1]+")", "delta(disk.dev."+r[2]+")", "delta(disk.dev."+r[3]+")"
		cols = append(cols,
			pmrepColumn{"disk.%" + r[0] + "rqm", "ls.disk_pct_" + r[0] + "rqm", "100 * " + m + " / (" + m + " + " + n + ")", false},
			pmrepColumn{"disk." + r[0] + "areq-sz", "ls.disk_" + r[0] + "areq_sz", kb + " / " + n, false})
	}
	for _, a := range [][3]string{
		{"disk.r_await", "disk.dev.read_rawactive", "disk.dev.read"}, {"disk.w_await", "disk.dev.write_rawactive", "disk.dev.write"},
		{"disk.d_await", "disk.dev.discard_rawactive", "disk.dev.discard"}, {"disk.f_await", "disk.dev.flush_rawactive", "disk.dev.flush"},
	} {
		// As PCP's own disk.dev.r_await, without its 0 for no requests:
		// pmrep prints nothing for a division by zero.
		cols = append(cols, pmrepColumn{a[0], "ls." + strings.ReplaceAll(a[0], ".", "_"), "delta(" + a[1] + ") / delta(" + a[2] + ")", false})
	}
	used := "(mem.physmem - mem.util.free - mem.util.bufmem - mem.util.cached - mem.util.slabReclaimable)"
	for _, g := range [][2]string{
		{"mem.kbmemfree", "mem.util.free"}, {"mem.kbavail", "mem.util.available"},
		{"mem.kbbuffers", "mem.util.bufmem"}, {"mem.kbcached", "mem.util.cached"},
		{"mem.kbcommit", "mem.util.committed_AS"}, {"mem.kbactive", "mem.util.active"},
		{"mem.kbinact", "mem.util.inactive"}, {"mem.kbdirty", "mem.util.dirty"},
		{"mem.kbmemused", used},
		{"mem.%memused", "100 * " + used + " / mem.physmem"},
		{"mem.%commit", "100 * mem.util.committed_AS / (mem.physmem + mem.util.swapTotal)"},
		{"load.runq", "kernel.all.runnable - 1"}, {"load.plist", "kernel.all.nprocs"},
		{"load.blocked", "kernel.all.blocked"},
	} {
		name := "ls." + strings.NewReplacer(".", "_", "%", "pct_").Replace(g[0])
		cols = append(cols, pmrepColumn{g[0], name, g[1], false})
	}
	return cols
}

// pmrepFigures runs pmrep without interpolation (-u: one row per archive
// record, rates against the previous record) over the archive and returns
// its figures: series key → the time that ends the window (to the
// microsecond pmrep prints) → value, and how many decimals it printed.
func pmrepFigures(t *testing.T, base string) (map[stream.Key]map[string]float64, int) {
	t.Helper()
	cols := pmrepColumns()
	var defs strings.Builder
	byName := map[string]pmrepColumn{}
	args := []string{"-a", base, "-u", "-o", "csv", "-P", "6", "-f", "%Y-%m-%dT%H:%M:%S.%f"}
	for _, c := range cols {
		fmt.Fprintf(&defs, "%s = %s\n", c.name, c.expr)
		byName[c.name] = c
	}
	conf := filepath.Join(t.TempDir(), "latscope.derived")
	if err := os.WriteFile(conf, []byte(defs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(args, "-e", conf)
	for _, c := range cols {
		args = append(args, c.name)
	}
	// The load averages as they are: instances "1 minute", "5 minute"...
	args = append(args, "kernel.all.load")
	out := pcptest.Pmrep(t, args...)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("pmrep printed no CSV rows (%v):\n%s", err, out)
	}
	header := make([]stream.Key, len(rows[0]))
	for i, h := range rows[0][1:] {
		name, inst, _ := strings.Cut(h, "-")
		if name == "kernel.all.load" {
			header[i+1] = stream.Key{Event: "load." + strings.TrimSuffix(inst, " minute")}
			continue
		}
		c, ok := byName[name]
		if !ok {
			t.Fatalf("pmrep column %q is none of ours", h)
		}
		if c.all {
			inst = "all"
		}
		header[i+1] = stream.Key{Event: c.event, Instance: inst}
	}
	figures := map[stream.Key]map[string]float64{}
	for _, row := range rows[1:] {
		for i, cell := range row[1:] {
			if cell == "" {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				t.Fatalf("pmrep cell %q: %v", cell, err)
			}
			k := header[i+1]
			if figures[k] == nil {
				figures[k] = map[string]float64{}
			}
			figures[k][row[0]] = v
		}
	}
	return figures, 6
}

// comparePmrep checks that every figure latscope read from an archive
// equals pmrep's for the same window, within one unit of pmrep's last
// printed digit, and that pmrep printed every window latscope has.
func comparePmrep(t *testing.T, base string, ivs []stream.Interval) {
	t.Helper()
	want, decimals := pmrepFigures(t, base)
	unit := math.Pow(10, -float64(decimals))
	compared := map[string]int{}
	for _, iv := range ivs {
		end := iv.End().UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000")
		for _, m := range iv.Means {
			got := m.Sum / m.Count
			if m.Quantity.IsLatency() {
				got = m.Unit.Nanos(m.Sum) / m.Count / 1e6
			}
			w, ok := want[m.Key][end]
			if !ok {
				t.Errorf("%s at %s: latscope %.6f, pmrep printed nothing", m.Key, end, got)
				continue
			}
			if math.Abs(got-w) > unit*1.0001+1e-12*math.Abs(w) {
				t.Errorf("%s at %s: latscope %.9f, pmrep %.6f", m.Key, end, got, w)
			}
			compared[m.Key.Event]++
			delete(want[m.Key], end)
		}
	}
	for k, rest := range want {
		for at, v := range rest {
			if v == 0 && perRequest(k.Event) {
				continue // no requests: PCP's 0/0 is 0, latscope has no value
			}
			if first := ivs[0].Start.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000"); at == first {
				continue // pmrep's first row: gauges, no window before it
			}
			t.Errorf("%s at %s: pmrep %.6f, latscope has no value", k, at, v)
		}
	}
	if len(compared) < 60 {
		t.Errorf("compared only %d series with pmrep: %v", len(compared), compared)
	}
	t.Logf("%s: %d windows, %d series compared with pmrep", filepath.Base(base), len(ivs), len(compared))
}

// perRequest says a series is a figure per request (iostat's r_await,
// %rrqm, rareq-sz), which has no value in a window without requests.
func perRequest(event string) bool {
	return strings.HasSuffix(event, "_await") || strings.HasSuffix(event, "rqm") || strings.HasSuffix(event, "areq-sz")
}

// TestCommittedArchivesMatchPmrep compares every figure of the committed
// real archives, v2 and v3, with what pmrep prints for them.
func TestCommittedArchivesMatchPmrep(t *testing.T) {
	for _, name := range []string{"host-v2", "host-v3"} {
		t.Run(name, func(t *testing.T) {
			base := archiveBase(t, name)
			ivs := readAll(t, base, readOptions{})
			comparePmrep(t, base, ivs)
		})
	}
}
