package main

// End-to-end tests of `latscope collapse` and `latscope flame`: the
// FlameGraph test inputs and goldens, real perf recordings of this machine's
// processes (perf record as root with the cpu-clock event), and bad input.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

func TestCollapseReproducesStackcollapsePerf(t *testing.T) {
	in := testenv.DataFile(t, "flamegraph/FlameGraph-test/perf-iperf-stacks-pidtid-01.txt")
	want, err := os.ReadFile(testenv.DataFile(t, "flamegraph/FlameGraph-test/results/perf-iperf-stacks-pidtid-01-collapsed-tid.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The format word, detection, and stdin all give the golden under
	// --compat perl. By default (inferno's reading) the input's last
	// sample, which has no blank line after it, counts too.
	for _, args := range [][]string{{"collapse", "perf", in, "--tid", "--compat", "perl"}, {"collapse", in, "--tid", "--compat", "perl"}, {"collapse", "-", "--tid", "--compat", "perl"}, {"collapse", "--tid", "--compat", "perl"}} {
		stdin := ""
		if args[1] == "-" || args[1] == "--tid" {
			b, _ := os.ReadFile(in)
			stdin = string(b)
		}
		r := run(t, stdin, args...)
		if r.code != 0 || r.stdout != string(want) {
			t.Errorf("latscope %v: exit %d, %d bytes (want %d)\n%s", args, r.code, len(r.stdout), len(want), r.stderr)
		}
	}
	last := "iperf-27409/28744;[unknown];[unknown];[iperf] 1"
	r := run(t, "", "collapse", in, "--tid")
	got, wantDefault := strings.Split(r.stdout, "\n"), append(strings.Split(string(want), "\n"), last)
	slices.Sort(got)
	slices.Sort(wantDefault)
	if r.code != 0 || !slices.Equal(got, wantDefault) {
		t.Errorf("default reading: exit %d, %d bytes (want %d + %q)\n%s", r.code, len(r.stdout), len(want), last, r.stderr)
	}
	if r := run(t, "", "collapse", in, "--compat", "pearl"); r.code == 0 || !strings.Contains(r.stderr, "--compat") {
		t.Errorf("--compat pearl: exit %d\n%s", r.code, r.stderr)
	}
	// gzip is unwrapped as for latency inputs.
	raw, _ := os.ReadFile(in)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	gz := filepath.Join(t.TempDir(), "iperf.txt.gz")
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", "collapse", gz, "--tid", "--compat", "perl"); r.code != 0 || r.stdout != string(want) {
		t.Errorf("collapse of the gzipped input: exit %d\n%s", r.code, r.stderr)
	}
}

func TestFlameFromFoldedAndDiff(t *testing.T) {
	dir := t.TempDir()
	base := testenv.DataFile(t, "flamegraph/FlameGraph-test/results/perf-vertx-stacks-01-collapsed-all.txt")
	next := testenv.DataFile(t, "flamegraph/FlameGraph-test/results/perf-vertx-stacks-01-collapsed-kernel.txt")
	svgOut, htmlOut := filepath.Join(dir, "v.svg"), filepath.Join(dir, "d.html")
	if r := run(t, "", "flame", base, "-o", svgOut, "--title", "vertx"); r.code != 0 || !strings.Contains(r.stderr, "wrote "+svgOut) {
		t.Fatalf("flame -o svg: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(svgOut); !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "vertx") {
		t.Errorf("SVG lacks the title")
	}
	if r := run(t, "", "flame", "--diff", base, next, "-o", htmlOut); r.code != 0 {
		t.Fatalf("flame --diff: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(htmlOut); !strings.Contains(string(b), "Differential") {
		t.Errorf("diff page has no differential title")
	}
	// JSON: functions by self and total; filters in the tool.
	r := run(t, "", "flame", base, "--format", "json", "--include", "^java$")
	var out struct {
		Samples   int64 `json:"samples"`
		Functions []struct {
			Name  string `json:"name"`
			Total int64  `json:"total"`
		} `json:"functions"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.Samples == 0 || out.Functions[0].Name != "java" || out.Functions[0].Total != out.Samples {
		t.Errorf("--format json --include: exit %d\n%s\n%.300s", r.code, r.stderr, r.stdout)
	}
}

func TestFlameBadInput(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.bin")
	if err := os.WriteFile(garbage, []byte("\x00\x01\x02\xff binary \x7f\x00 not stacks"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.txt")
	_ = os.WriteFile(empty, nil, 0o644)
	// A perf sample cut short: perl drops it, so nothing is read, and no
	// filter is to blame.
	cut := filepath.Join(dir, "cut.perf")
	_ = os.WriteFile(cut, []byte("prog 1 1.0: 1 cycles:\n\t4005d0 main+0x1 (/bin/prog)\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"flame", garbage, "-o", filepath.Join(dir, "g.svg")}, "garbage.bin: not a stack format"},
		{[]string{"flame", empty, "-o", filepath.Join(dir, "e.svg")}, "empty input"},
		{[]string{"flame", "/nonexistent/perf.data", "-o", filepath.Join(dir, "n.svg")}, "no such file"},
		{[]string{"flame", empty, "-o", filepath.Join(dir, "x.pdf")}, "write .svg, .html"},
		{[]string{"flame", empty, "--view", "plan", "-o", filepath.Join(dir, "v.svg")}, "--view needs --db"},
		{[]string{"collapse", cut, "--compat", "perl"}, "nothing in the input was read as a stack"},
	} {
		r := run(t, "", c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("latscope %v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// busy starts a CPU-bound child process for profiling.
func busy(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func TestFlameFromRealPerfRecording(t *testing.T) {
	perf := testenv.RecordingPerf(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "perf.data")
	rec := exec.Command(perf, "record", "-q", "-F", "499", "-g", "-e", "cpu-clock", "-o", data, "--", "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if out, err := rec.CombinedOutput(); err != nil {
		t.Fatalf("perf record: %v\n%s", err, out)
	}
	// perf.data directly, and perf script text on stdin, give the same stacks.
	r1 := run(t, "", "collapse", data)
	script, err := exec.Command(perf, "script", "-i", data).Output()
	if err != nil {
		t.Fatal(err)
	}
	r2 := run(t, string(script), "collapse", "-")
	if r1.code != 0 || r1.stdout == "" || r1.stdout != r2.stdout {
		t.Fatalf("collapse perf.data (exit %d) and perf script | collapse differ\n%s", r1.code, r1.stderr)
	}
	if !strings.Contains(r1.stdout, "sh;") {
		t.Errorf("no stacks of the profiled shell:\n%.500s", r1.stdout)
	}
	out := filepath.Join(dir, "sh.html")
	if r := run(t, "", "flame", data, "-o", out); r.code != 0 {
		t.Errorf("flame perf.data: exit %d\n%s", r.code, r.stderr)
	}
}

func TestFlameLiveProfilesAProcess(t *testing.T) {
	testenv.RecordingPerf(t)
	p := busy(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "live.svg")
	start := time.Now()
	r := run(t, "", "flame", "--pid", strconv.Itoa(p.Process.Pid), "--duration", "1s", "-o", out)
	if r.code != 0 {
		t.Fatalf("flame --pid: exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), "sh") {
		t.Errorf("live SVG lacks the profiled shell: %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("1 s of profiling took %s", time.Since(start))
	}
	// The temporary perf.data is gone.
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "latscope-flame-*")); len(left) > 0 {
		t.Errorf("temporary recordings left behind: %v", left)
	}
}

// TestFlameDecodesOracleFromFolded: folded input has no module names, so
// --db oracle decodes by name; kernel frames (_[k]) stay untouched.
// Synthetic stacks built from the frame names in the seed's figures.
func TestFlameDecodesOracleFromFolded(t *testing.T) {
	in := filepath.Join(t.TempDir(), "oracle.folded")
	stacks := "oracle;opiodr;opifch2;qerhnFetch;qertbFetch;kdsttgr;kcbgtcr 10\n" +
		"oracle;opiodr;opifch2;qerhnFetch;kghalf 3\noracle;ksys_read_[k] 2\n"
	if err := os.WriteFile(in, []byte(stacks), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "flame", in, "--db", "oracle", "--view", "plan", "--format", "folded")
	want := "FETCH (opifch2);HASH JOIN (qerhnFetch) 3\nFETCH (opifch2);HASH JOIN (qerhnFetch);TABLE ACCESS (qertbFetch) 10\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("--view plan: exit %d\n%s\ngot:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
	r = run(t, "", "flame", in, "--db", "oracle", "--format", "folded")
	if r.code != 0 || !strings.Contains(r.stdout, "oracle;ksys_read_[k] 2") {
		t.Errorf("kernel frame decoded or dropped: exit %d\n%s", r.code, r.stdout)
	}
	out := filepath.Join(t.TempDir(), "o.svg")
	r = run(t, "", "flame", in, "--db", "oracle", "-o", out)
	b, _ := os.ReadFile(out)
	if r.code != 0 || !strings.Contains(string(b), "consistent-read") {
		t.Errorf("SVG tooltips do not describe kcbgtcr: exit %d\n%s", r.code, r.stderr)
	}
}
