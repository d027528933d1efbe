package reportset

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// iostatHeader is the Device header line of sysstat 12.6's iostat -x,
// copied from its output.
const iostatHeader = "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util"

// sarUHeader and sarDevHeader are sar 12.6's headers without their time.
const (
	sarUHeader   = "        CPU     %user     %nice   %system   %iowait    %steal     %idle"
	sarDevHeader = "        IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil"
)

var t0 = time.Date(2026, 11, 26, 4, 36, 22, 0, time.UTC)

// series is a host series as the host: source emits it: awaits are
// latencies in ms, the rest quantities.
func series(event, instance string, sum, count float64) stream.SeriesMean {
	m := stream.SeriesMean{Key: stream.Key{Event: event, Instance: instance}, Sum: sum, Count: count, Unit: hist.Millisecond}
	if !strings.HasSuffix(event, "_await") {
		m.Unit, m.Quantity = stream.QuantityUnit, stream.Percent
	}
	return m
}

// cpuWindow is one second of CPU in jiffies (percent sums over jiffies).
func cpuWindow(i int, user, system, irq, idle float64) stream.Interval {
	total := user + system + irq + idle
	return stream.Interval{Source: "host:vm", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second, Means: []stream.SeriesMean{
		series("cpu.%user", "all", 100*user, total), series("cpu.%nice", "all", 0, total),
		series("cpu.%system", "all", 100*system, total), series("cpu.%irq", "all", 100*irq, total), series("cpu.%soft", "all", 0, total),
		series("cpu.%iowait", "all", 0, total), series("cpu.%steal", "all", 0, total), series("cpu.%idle", "all", 100*idle, total),
		series("cpu.%user", "cpu0", 100*user, total/2),
	}}
}

func TestSarUMatchesSarLayout(t *testing.T) {
	set, err := Lookup("sar-u")
	if err != nil {
		t.Fatal(err)
	}
	tab := Build([]stream.Interval{cpuWindow(0, 28, 20, 2, 150), cpuWindow(1, 0, 1, 0, 199)}, set, 0)
	var out bytes.Buffer
	if err := WriteTable(&out, tab); err != nil {
		t.Fatal(err)
	}
	want := "04:36:22" + sarUHeader + "\n" +
		"04:36:23        all     14.00      0.00     11.00      0.00      0.00     75.00\n" +
		"04:36:24        all      0.00      0.00      0.50      0.00      0.00     99.50\n" +
		"Average:        all      7.00      0.00      5.75      0.00      0.00     87.25\n"
	if out.String() != want {
		t.Errorf("sar -u layout:\n%s\nwant:\n%s", out.String(), want)
	}
}

// diskWindow is one second of a device: reads and writes, their kB, merged
// requests, milliseconds waited, busy and queue time.
func diskWindow(i int, dev string, reads, readKB, merged, readMs, writes, writeKB, writeMs, busyMs, queueMs float64) stream.Interval {
	s := 1.0
	return stream.Interval{Source: "host:vm", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second, Means: []stream.SeriesMean{
		series("disk.r/s", dev, reads, s), series("disk.rkB/s", dev, readKB, s), series("disk.rrqm/s", dev, merged, s),
		series("disk.r_await", dev, readMs, reads),
		series("disk.w/s", dev, writes, s), series("disk.wkB/s", dev, writeKB, s), series("disk.wrqm/s", dev, 0, s),
		series("disk.w_await", dev, writeMs, writes),
		series("disk.aqu-sz", dev, queueMs, 1000*s), series("disk.%util", dev, 100*busyMs, 1000*s),
	}}
}

func TestIostatColumnsLineUpWithIostat(t *testing.T) {
	set, _ := Lookup("iostat-x")
	tab := Build([]stream.Interval{diskWindow(0, "vda", 1220, 5208, 4, 134.2, 7, 20484, 46, 128, 140)}, set, 0)
	var out bytes.Buffer
	if err := WriteTable(&out, tab); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if lines[0] != "11/26/26 04:36:23" || lines[1] != iostatHeader {
		t.Fatalf("iostat -x block starts:\n%s\n%s\nwant:\n11/26/26 04:36:23\n%s", lines[0], lines[1], iostatHeader)
	}
	// Every figure ends under its header, as in iostat's output; the
	// discard and flush columns are missing from the data.
	want := "vda           1220.00   5208.00     4.00   0.33    0.11     4.27    7.00  20484.00     0.00   0.00    6.57  2926.29       -         -        -      -       -        -       -       -    0.14  12.80"
	if lines[2] != want {
		t.Errorf("iostat -x row:\n%s\nwant:\n%s", lines[2], want)
	}
}

func TestSarNetRepeatsHeaderPerWindowAndAverages(t *testing.T) {
	set, _ := Lookup("sar-n-dev")
	net := func(i int, rx float64) stream.Interval {
		iv := stream.Interval{Source: "host:vm", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second}
		for _, dev := range []string{"lo", "eth0"} {
			iv.Means = append(iv.Means, series("net.rxpck/s", dev, rx, 1), series("net.txpck/s", dev, rx, 1), series("net.rxkB/s", dev, rx/2, 1))
		}
		return iv
	}
	tab := Build([]stream.Interval{net(0, 10), net(1, 20), {Source: "host:vm", Start: t0.Add(2 * time.Second), Duration: time.Second, Gap: true}}, set, 0)
	var out bytes.Buffer
	if err := WriteTable(&out, tab); err != nil {
		t.Fatal(err)
	}
	want := "04:36:22" + sarDevHeader + "\n" +
		"04:36:23           lo     10.00     10.00      5.00         -         -         -         -         -\n" +
		"04:36:23         eth0     10.00     10.00      5.00         -         -         -         -         -\n" +
		"\n04:36:23" + sarDevHeader + "\n" +
		"04:36:24           lo     20.00     20.00     10.00         -         -         -         -         -\n" +
		"04:36:24         eth0     20.00     20.00     10.00         -         -         -         -         -\n" +
		"\nAverage:" + sarDevHeader + "\n" +
		"Average:           lo     15.00     15.00      7.50         -         -         -         -         -\n" +
		"Average:         eth0     15.00     15.00      7.50         -         -         -         -         -\n"
	if out.String() != want {
		t.Errorf("sar -n DEV layout:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestGenericSetShowsEveryGroupSeries(t *testing.T) {
	set, _ := Lookup("disk")
	tab := Build([]stream.Interval{diskWindow(0, "vda", 10, 40, 0, 5, 0, 0, 0, 100, 20)}, set, 0)
	var names []string
	for _, c := range tab.Columns {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "r/s rkB/s rrqm/s r_await w/s wkB/s wrqm/s w_await aqu-sz %util" {
		t.Errorf("disk columns: %s", got)
	}
	if r := tab.Average[0]; r.Values[3] != 0.5 || r.Values[9] != 10 {
		t.Errorf("disk r_await %v ms, %%util %v; want 0.5 ms and 10", r.Values[3], r.Values[9])
	}
}

func TestCSVAndJSONKeepFullPrecision(t *testing.T) {
	set, _ := Lookup("sar-u")
	tab := Build([]stream.Interval{cpuWindow(0, 1, 0, 0, 2)}, set, 0)
	var csvOut, jsonOut bytes.Buffer
	if err := Write(&csvOut, tab, FormatCSV); err != nil {
		t.Fatal(err)
	}
	wantCSV := "kind,source,start,seconds,instance,%user,%nice,%system,%iowait,%steal,%idle\n" +
		"interval,host:vm,2026-11-26T04:36:22Z,1,all,33.333333333333336,0,0,0,0,66.66666666666667\n" +
		"average,host:vm,,,all,33.333333333333336,0,0,0,0,66.66666666666667\n"
	if csvOut.String() != wantCSV {
		t.Errorf("csv:\n%s\nwant:\n%s", csvOut.String(), wantCSV)
	}
	if err := Write(&jsonOut, tab, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Intervals []struct {
			Rows []struct{ Values map[string]float64 }
		}
	}
	if err := json.Unmarshal(jsonOut.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if v := got.Intervals[0].Rows[0].Values["%idle"]; v != 200.0/3 {
		t.Errorf("json %%idle %v, want %v", v, 200.0/3)
	}
}

func TestUnknownSetAndEmptyData(t *testing.T) {
	if _, err := Lookup("vmstat"); err == nil || !strings.Contains(err.Error(), "sar-n-dev") {
		t.Errorf("unknown set error %v should list the sets", err)
	}
	set, _ := Lookup("mem")
	var out bytes.Buffer
	if err := WriteTable(&out, Build(nil, set, 0)); err != nil || !strings.Contains(out.String(), "no mem series") {
		t.Errorf("empty data: %q, %v", out.String(), err)
	}
}

// An hour of one host at 1 s: ten devices, every iostat -x series.
func BenchmarkIostatHour(b *testing.B) {
	var ivs []stream.Interval
	for i := range 3600 {
		iv := diskWindow(i, "vda", 100, 400, 1, 20, 50, 200, 30, 100, 20)
		for d := 1; d < 10; d++ {
			iv.Means = append(iv.Means, diskWindow(i, "loop"+strings.Repeat("x", d), 1, 4, 0, 1, 1, 4, 1, 1, 1).Means...)
		}
		ivs = append(ivs, iv)
	}
	set, _ := Lookup("iostat-x")
	b.ResetTimer()
	for range b.N {
		Build(ivs, set, 0)
	}
}

func TestEveryMergesWindowsAsSarI(t *testing.T) {
	set, _ := Lookup("sar-u")
	var ivs []stream.Interval
	for i := range 4 {
		ivs = append(ivs, cpuWindow(i, float64(10*i), 0, 0, 200-float64(10*i)))
	}
	tab := Build(ivs, set, 2*time.Second)
	if len(tab.Windows) != 2 || tab.Windows[0].Duration != 2*time.Second || !tab.Windows[1].Start.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("windows %+v, want two of 2 s", tab.Windows)
	}
	// Jiffies 0+10 of 400, then 20+30 of 400.
	if got := tab.Windows[0].Rows[0].Values[0]; got != 2.5 {
		t.Errorf("first 2 s %%user %v, want 2.5", got)
	}
	if got := tab.Windows[1].Rows[0].Values[0]; got != 12.5 {
		t.Errorf("second 2 s %%user %v, want 12.5", got)
	}
	if got, want := tab.Average[0].Values, Build(ivs, set, 0).Average[0].Values; !slices.Equal(got, want) {
		t.Errorf("Average %v, want %v as without merging", got, want)
	}
}
