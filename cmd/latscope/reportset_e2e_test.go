package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/recordingtest"
	"github.com/latscope/latscope/stream"
)

// hostRecording writes a recording of two 1-second windows of host series
// as the host: source emits them (docs/host.md): CPU in jiffies, one disk,
// one interface.
func hostRecording(t *testing.T) string {
	t.Helper()
	start := time.Date(2026, 11, 26, 4, 36, 22, 0, time.UTC)
	q := func(event, instance string, q stream.Quantity, sum, count float64) stream.SeriesMean {
		return stream.SeriesMean{Key: stream.Key{Event: event, Instance: instance}, Quantity: q, Unit: stream.QuantityUnit, Sum: sum, Count: count}
	}
	var ivs []stream.Interval
	for i, load := range []float64{1, 3} {
		ms := stream.SeriesMean{Key: stream.Key{Event: "disk.r_await", Instance: "loop0"}, Unit: 1e6, Sum: 20 * load, Count: 100 * load}
		ivs = append(ivs, stream.Interval{Source: "host:vm", Start: start.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Means: []stream.SeriesMean{
				q("cpu.%user", "all", stream.Percent, 100*40*load, 200), q("cpu.%nice", "all", stream.Percent, 0, 200),
				q("cpu.%system", "all", stream.Percent, 100*10, 200), q("cpu.%irq", "all", stream.Percent, 100*2, 200),
				q("cpu.%soft", "all", stream.Percent, 100*3, 200), q("cpu.%iowait", "all", stream.Percent, 100*5, 200),
				q("cpu.%steal", "all", stream.Percent, 0, 200), q("cpu.%idle", "all", stream.Percent, 100*(180-40*load), 200),
				q("disk.r/s", "loop0", stream.PerSecond, 100*load, 1), q("disk.rkB/s", "loop0", stream.KBPerSecond, 400*load, 1),
				ms, q("disk.%util", "loop0", stream.Percent, 100*50*load, 1000), q("disk.aqu-sz", "loop0", stream.Count, 20*load, 1000),
				q("net.rxpck/s", "lo", stream.PerSecond, 10*load, 1), q("net.rxkB/s", "lo", stream.KBPerSecond, 1.5*load, 1),
			}})
	}
	path := filepath.Join(t.TempDir(), "host.lsr")
	if err := os.WriteFile(path, recordingtest.Encode(ivs), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReportSetsOnARecording(t *testing.T) {
	rec := hostRecording(t)
	r := run(t, "", "report", rec, "--set", "sar-u")
	want := `04:36:22        CPU     %user     %nice   %system   %iowait    %steal     %idle
04:36:23        all     20.00      0.00      7.50      2.50      0.00     70.00
04:36:24        all     60.00      0.00      7.50      2.50      0.00     30.00
Average:        all     40.00      0.00      7.50      2.50      0.00     50.00
`
	if r.code != 0 || r.stdout != want {
		t.Errorf("report --set sar-u: exit %d, stderr %q\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}

	// --interval longer than the windows merges them, as sar -i does.
	r = run(t, "", "report", rec, "--set", "sar-u", "--interval", "2s")
	want = `04:36:22        CPU     %user     %nice   %system   %iowait    %steal     %idle
04:36:24        all     40.00      0.00      7.50      2.50      0.00     50.00
Average:        all     40.00      0.00      7.50      2.50      0.00     50.00
`
	if r.code != 0 || r.stdout != want {
		t.Errorf("report --set sar-u --interval 2s: exit %d, stderr %q\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}

	r = run(t, "", "report", rec, "--set", "iostat-x", "--format", "csv")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "kind,source,start,seconds,instance,r/s,rkB/s,rrqm/s,%rrqm,r_await,rareq-sz,") {
		t.Fatalf("report --set iostat-x --format csv: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	// r/s, rkB/s, no merges, await 0.2 ms, 4 kB a read; then the average.
	if !strings.HasPrefix(lines[2], "interval,host:vm,2026-11-26T04:36:23Z,1,loop0,300,1200,,,0.2,4,") ||
		!strings.HasPrefix(lines[3], "average,host:vm,,,loop0,200,800,,,0.2,4,") || !strings.HasSuffix(lines[3], ",0.04,10") {
		t.Errorf("iostat-x csv rows:\n%s", r.stdout)
	}

	out := filepath.Join(t.TempDir(), "net.json")
	if r := run(t, "", "report", rec, "--set", "sar-n-dev", "-o", out); r.code != 0 {
		t.Fatalf("report --set sar-n-dev -o: exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Set     string   `json:"set"`
		Columns []string `json:"columns"`
		Average []struct {
			Instance string              `json:"instance"`
			Values   map[string]*float64 `json:"values"`
		} `json:"average"`
	}
	readJSON(t, out, &doc)
	if doc.Set != "sar-n-dev" || len(doc.Columns) != 8 || doc.Average[0].Instance != "lo" ||
		*doc.Average[0].Values["rxpck/s"] != 20 || *doc.Average[0].Values["rxkB/s"] != 3 || doc.Average[0].Values["%ifutil"] != nil {
		t.Errorf("sar-n-dev JSON: %+v", doc)
	}

	if r := run(t, "", "report", rec, "--set", "mem"); r.code != 0 || !strings.Contains(r.stdout, "no mem series") {
		t.Errorf("a set without data: exit %d, %q", r.code, r.stdout)
	}
	if r := run(t, "", "report", rec, "--set", "vmstat"); r.code != 2 || !strings.Contains(r.stderr, "sar-n-dev") {
		t.Errorf("an unknown set: exit %d, %q", r.code, r.stderr)
	}
	if r := run(t, "", "report", rec, "--set", "cpu", "-o", filepath.Join(t.TempDir(), "x.svg")); r.code == 0 {
		t.Errorf("a set as an image: exit 0")
	}
}
