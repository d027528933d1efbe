package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/scripts/benchkit"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// The real fio 3.33 report (testdata/PROVENANCE.md): every figure is read
// from the group-reported job's read.lat_ns, ns turned into µs.
func TestParseFioReal(t *testing.T) {
	m, version, err := parseFio(readTestdata(t, "fio-3.33-randread-psync-numjobs4.json"))
	if err != nil {
		t.Fatal(err)
	}
	if version != "fio-3.33" {
		t.Errorf("version %q", version)
	}
	want := measurement{
		Ops: 73582, Seconds: 2.001, IOPS: 36772.613693, Latency: loadtest.Latency{MeanUS: 108.289021840,
			P50US: 98.816, P90US: 146.432, P99US: 280.576, P999US: 1269.760, MaxUS: 11197.196},
		// (usr_cpu 0.5125 % + sys_cpu 12.8 %) of job_runtime 8000 ms, per I/O.
		SelfCPUPerOpUS: (0.5125 + 12.8) / 100 * 8.0 * 1e6 / 73582,
	}
	checkMeasurement(t, m, want)
	// fio's IOPS is its I/Os over its own runtime: an independent check.
	if got := float64(m.Ops) / m.Seconds; math.Abs(got-m.IOPS) > 0.5 {
		t.Errorf("total_ios/runtime = %.3f, iops %.3f", got, m.IOPS)
	}
}

func checkMeasurement(t *testing.T, got, want measurement) {
	t.Helper()
	g, w := []float64{got.Seconds, got.IOPS, got.MeanUS, got.P50US, got.P90US, got.P99US, got.P999US, got.MaxUS, got.SelfCPUPerOpUS},
		[]float64{want.Seconds, want.IOPS, want.MeanUS, want.P50US, want.P90US, want.P99US, want.P999US, want.MaxUS, want.SelfCPUPerOpUS}
	names := []string{"seconds", "iops", "mean", "p50", "p90", "p99", "p99.9", "max", "self cpu"}
	if got.Ops != want.Ops {
		t.Errorf("ops %d, want %d", got.Ops, want.Ops)
	}
	for i := range g {
		if !near(g[i], w[i]) {
			t.Errorf("%s = %v, want %v", names[i], g[i], w[i])
		}
	}
}

// fio prints warnings ("fio: ...") on stdout before the JSON with some
// options; the report still parses.
func TestParseFioAfterWarnings(t *testing.T) {
	out := append([]byte("fio: this platform does not support process shared mutexes, forcing use of threads. Use the 'thread' option to get rid of this warning.\n"),
		readTestdata(t, "fio-3.33-randread-psync-numjobs4.json")...)
	m, _, err := parseFio(out)
	if err != nil || m.Ops != 73582 {
		t.Fatalf("ops %d, err %v", m.Ops, err)
	}
}

// Edits of the real report that the harness must refuse, not misread.
func TestParseFioRefuses(t *testing.T) {
	edit := func(f func(doc map[string]any)) []byte {
		var doc map[string]any
		if err := json.Unmarshal(readTestdata(t, "fio-3.33-randread-psync-numjobs4.json"), &doc); err != nil {
			t.Fatal(err)
		}
		f(doc)
		b, _ := json.Marshal(doc)
		return b
	}
	job := func(doc map[string]any) map[string]any { return doc["jobs"].([]any)[0].(map[string]any) }
	read := func(doc map[string]any) map[string]any { return job(doc)["read"].(map[string]any) }
	cases := map[string]struct {
		out  []byte
		want string
	}{
		"no lat percentiles (clat only)": {edit(func(d map[string]any) {
			delete(read(d)["lat_ns"].(map[string]any), "percentile")
		}), "lat_percentiles"},
		"no p99.9": {edit(func(d map[string]any) {
			delete(read(d)["lat_ns"].(map[string]any)["percentile"].(map[string]any), "99.900000")
		}), "no 99.9 percentile"},
		"two jobs (no group_reporting)": {edit(func(d map[string]any) {
			d["jobs"] = append(d["jobs"].([]any), job(d))
		}), "2 jobs"},
		"job error": {edit(func(d map[string]any) { job(d)["error"] = 5 }), "error 5"},
		"no reads":  {edit(func(d map[string]any) { read(d)["total_ios"] = 0 }), "no reads"},
		"not JSON":  {[]byte("fio: failed to open data\n"), "no JSON"},
		"empty":     {nil, "no JSON"},
	}
	for name, c := range cases {
		_, _, err := parseFio(c.out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to mention %q", name, err, c.want)
		}
	}
}

// The real latscope report (testdata/PROVENANCE.md).
func TestParseLatscopeReal(t *testing.T) {
	out := readTestdata(t, "latscope-iotest-c4.json")
	m, err := parseLatscope(out, 4, 8192)
	if err != nil {
		t.Fatal(err)
	}
	checkMeasurement(t, m, measurement{
		Ops: 70472, Seconds: 2, IOPS: 35236, Latency: loadtest.Latency{MeanUS: 113.15426288454984,
			P50US: 99.33781056692656, P90US: 174.81105303793416, P99US: 315.67820589447564,
			P999US: 847.4715238918607, MaxUS: 4623.386}, SelfCPUPerOpUS: 20.212836303780225,
	})
	if got := float64(m.Ops) / m.Seconds; !near(got, m.IOPS) {
		t.Errorf("ops/seconds = %v, iops %v", got, m.IOPS)
	}
	// Progress lines before the JSON are skipped.
	if _, err := parseLatscope(append([]byte("latscope iotest: plan\n"), out...), 4, 8192); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		conc, bs int
		out      []byte
		want     string
	}{
		{1, 8192, out, "concurrency 4, want 1"},
		{4, 4096, out, "bs 8192, want 4096"},
		{4, 8192, bytes.Replace(out, []byte(`"direct": true`), []byte(`"direct": false`), 1), "not O_DIRECT"},
		{4, 8192, bytes.Replace(out, []byte(`"errors": 0`), []byte(`"errors": 3`), 1), "3 failed reads"},
		{4, 8192, []byte(`{"bs": 8192, "steps": []}`), "0 steps"},
		{4, 8192, []byte("Error: open data: no such file or directory\n"), "no JSON"},
	} {
		if _, err := parseLatscope(c.out, c.conc, c.bs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v, want it to mention %q", err, c.want)
		}
	}
}

// Synthetic runs (figures chosen to sit on and just past each limit): the
// medians are taken per figure, the ratios are latscope / fio, and each
// requirement's edge passes.
func TestCompare(t *testing.T) {
	fio := func(p50, p99, iops, cpu float64) runResult {
		return runResult{Tool: toolFio, Concurrency: 4, CPUPerIOUS: cpu,
			measurement: measurement{IOPS: iops, Latency: loadtest.Latency{P50US: p50, P99US: p99, P999US: 2 * p99, MaxUS: 10 * p99, MeanUS: p50}}}
	}
	ls := func(p50, p99, iops, cpu float64) runResult {
		r := fio(p50, p99, iops, cpu)
		r.Tool = toolLatscope
		return r
	}
	other := fio(1, 1, 1, 1) // another concurrency: ignored
	other.Concurrency = 1
	runs := []runResult{
		fio(100, 200, 1000, 10), fio(90, 400, 1100, 12), fio(110, 300, 900, 11), other,
		// medians: p50 110, p99 330, IOPS 950, CPU 11 → ratios 1.10, 1.10, 0.95, 1.00
		ls(110, 330, 950, 11), ls(500, 100, 10, 1), ls(105, 900, 2000, 30),
	}
	c := compare(4, runs)
	if c.Fio.Runs != 3 || c.Latscope.Runs != 3 {
		t.Fatalf("runs %d/%d", c.Fio.Runs, c.Latscope.Runs)
	}
	if c.Fio.P50US != 100 || c.Fio.P99US != 300 || c.Fio.IOPS != 1000 || c.Fio.CPUPerIOUS != 11 {
		t.Errorf("fio medians %+v", c.Fio)
	}
	if c.Latscope.P50US != 110 || c.Latscope.P99US != 330 || c.Latscope.IOPS != 950 || c.Latscope.CPUPerIOUS != 11 {
		t.Errorf("latscope medians %+v", c.Latscope)
	}
	for _, ch := range c.Checks {
		if !ch.Pass {
			t.Errorf("%s ratio %v on the limit should pass", ch.Name, ch.Ratio)
		}
	}
	if !c.Pass || !benchkit.AllPass([]comparison{c}) {
		t.Error("comparison on the limits should pass")
	}
	if !near(c.Info["p99.9"], 1.1) || !near(c.Info["max"], 1.1) {
		t.Errorf("info ratios %v", c.Info)
	}

	// Just past each limit, one at a time.
	for name, r := range map[string]runResult{
		"p50":         ls(111, 300, 1000, 11),
		"p99":         ls(100, 269, 1000, 11),
		"IOPS":        ls(100, 300, 949, 11),
		"CPU per I/O": ls(100, 300, 1000, 11.01),
	} {
		c := compare(4, []runResult{fio(100, 300, 1000, 11), r})
		for _, ch := range c.Checks {
			if (ch.Name == name) == ch.Pass {
				t.Errorf("past the %s limit: %s pass=%v (ratio %v)", name, ch.Name, ch.Pass, ch.Ratio)
			}
		}
		if c.Pass {
			t.Errorf("past the %s limit: comparison passed", name)
		}
	}

	// No runs of one tool: a failed comparison, no NaN in the JSON.
	c = compare(4, []runResult{ls(100, 300, 1000, 11)})
	if c.Pass {
		t.Error("a comparison without fio runs passed")
	}
	if _, err := json.Marshal(c); err != nil {
		t.Errorf("JSON of an empty comparison: %v", err)
	}
}

func TestWriteTable(t *testing.T) {
	fio := runResult{Tool: toolFio, Concurrency: 1, CPUPerIOUS: 10, measurement: measurement{IOPS: 18000, Latency: loadtest.Latency{P50US: 50, P99US: 90}}}
	ls := runResult{Tool: toolLatscope, Concurrency: 1, CPUPerIOUS: 12, measurement: measurement{IOPS: 17500, Latency: loadtest.Latency{P50US: 51, P99US: 140}}}
	var b strings.Builder
	if err := writeTable(&b, []comparison{compare(1, []runResult{fio, ls})}, "concurrency"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"p99 µs", "1.556", "FAIL", "overall: FAIL — p99 at concurrency 1 (1.556, want 0.90–1.10); CPU per I/O at concurrency 1 (1.200, want ≤ 1.00)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// The commands are the brief's: same file, size, block size and duration
// for both, no warm-up, fio's total-latency percentiles.
func TestCommands(t *testing.T) {
	r := runner{fio: "fio", latscope: "latscope", file: "/d/data", size: 1 << 30, bs: 8192, duration: 10 * time.Second,
		pin: []string{"taskset", "-c", "0"}}
	f := strings.Join(r.fioArgs(4), " ")
	for _, want := range []string{"taskset -c 0 fio ", "--filename=/d/data", "--size=1073741824", "--bs=8192", "--rw=randread",
		"--ioengine=psync", "--direct=1", "--numjobs=4", "--thread", "--group_reporting", "--time_based", "--runtime=10000ms",
		"--ramp_time=0", "--lat_percentiles=1", "--percentile_list=50:90:99:99.9", "--output-format=json"} {
		if !strings.Contains(f, want) {
			t.Errorf("fio command lacks %q: %s", want, f)
		}
	}
	l := strings.Join(r.latscopeArgs(4), " ")
	if want := "taskset -c 0 latscope iotest /d/data --size 1073741824 --bs 8192 --concurrency 4 --duration 10s --warmup 0s --format json --plain"; l != want {
		t.Errorf("latscope command\n %s\nwant\n %s", l, want)
	}
	// An asynchronous engine: the key is the I/O depth of r.jobs readers.
	r.pin, r.engine, r.jobs = nil, "io_uring", 2
	f = strings.Join(r.fioArgs(32), " ")
	for _, want := range []string{"--ioengine=io_uring --iodepth=32 --numjobs=2", "--direct=1"} {
		if !strings.Contains(f, want) || strings.Contains(f, "psync") {
			t.Errorf("fio command lacks %q: %s", want, f)
		}
	}
	l = strings.Join(r.latscopeArgs(32), " ")
	if want := "latscope iotest /d/data --size 1073741824 --bs 8192 --engine io_uring --iodepth 32 --concurrency 2 --duration 10s --warmup 0s --format json --plain"; l != want {
		t.Errorf("latscope command\n %s\nwant\n %s", l, want)
	}
}

func TestParseFlags(t *testing.T) {
	var stderr strings.Builder
	c, err := parseFlags([]string{"-size", "64m", "-concurrency", "1, 2,8", "-cpus", "0"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if c.size != 64<<20 || c.bs != 8192 || !slices.Equal(c.concurrency, []int{1, 2, 8}) || c.runs != 3 || c.duration != 10*time.Second {
		t.Errorf("config %+v", c)
	}
	if c.engine != "psync" || c.queued() || !slices.Equal(c.loads(), c.concurrency) {
		t.Errorf("default engine %q sweeps %v", c.engine, c.loads())
	}
	if c, err = parseFlags([]string{"-engine", "libaio", "-concurrency", "1", "-iodepth", "1,8,32"}, &stderr); err != nil || !slices.Equal(c.loads(), []int{1, 8, 32}) || c.loadName() != "iodepth" {
		t.Errorf("libaio: %+v, %v", c, err)
	}
	for _, args := range [][]string{
		{"-bs", "1000"}, {"-size", "4k"}, {"-concurrency", "0"}, {"-concurrency", "1,x"}, {"-runs", "0"}, {"-duration", "10ms"}, {"extra"},
		{"-engine", "sync"}, {"-engine", "io_uring", "-concurrency", "1,4"}, {"-engine", "libaio", "-iodepth", "0"},
	} {
		if _, err := parseFlags(args, &stderr); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
