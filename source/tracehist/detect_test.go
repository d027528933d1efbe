package tracehist

import (
	"context"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// detectSamples are inputs each format must claim: the real example files
// and, for DTrace and SystemTap (whose only real samples here sit inside
// PyLatencyMap records), the synthetic fixtures.
func detectSamples(t *testing.T) map[string][]string {
	return map[string][]string{
		"bcc": {readTestdata(t, "bcc_biolatency_example.txt"), readTestdata(t, "bcc_ext4dist_example.txt"),
			readTestdata(t, "bcc_funclatency_example.txt"), readTestdata(t, "bcc_wait_hist_recorded.txt"),
			readTestdata(t, "bcc_oracle_wait_SYNTHETIC.txt")},
		"bpftrace": {readTestdata(t, "bpftrace_biolatency_example.txt"), readTestdata(t, "bpftrace_xfsdist_example.txt"),
			readTestdata(t, "bpftrace_runqlat_example.txt"), bpftraceCumulative},
		"iolatency": {readTestdata(t, "perftools_iolatency_example.txt")},
		"dtrace":    {dtraceKeyed, dtraceLinear},
		"systemtap": {stapLinear},
	}
}

// Each format says Yes on its own samples and No on every other format's,
// on PyLatencyMap records (which hold raw DTrace/SystemTap output), Oracle
// traces and DTrace stack dumps.
func TestDetect(t *testing.T) {
	samples := detectSamples(t)
	var foreign []string
	for _, rel := range []string{
		"pylatencymap/test_DTrace_data.txt", "pylatencymap/test_SystemTap_data.txt",
		"pylatencymap/example_latency_data.txt", "pylatencymap/calibration_data.txt",
		"trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc",
		"flamegraph/example-dtrace-stacks.txt",
		"flamegraph/FlameGraph-test/perf-dd-stacks-01.txt",
	} {
		foreign = append(foreign, readShared(t, rel))
	}
	foreign = append(foreign, `{"fio version": "fio-3.33", "jobs": []}`+strings.Repeat(" ", 9000))
	for _, f := range Formats() {
		for name, texts := range samples {
			for i, text := range texts {
				want := input.No
				if name == f.Name {
					want = input.Yes
				}
				prefix := []byte(text[:min(len(text), 64<<10)])
				if got := f.Detect(prefix); got != want {
					t.Errorf("%s on %s sample %d: %v, want %v", f.Name, name, i, got, want)
				}
			}
		}
		// A short foreign file may leave detection waiting for more (the
		// Opener then reports "not recognised" at its end), never Yes.
		for i, text := range foreign {
			got := f.Detect([]byte(text[:min(len(text), 64<<10)]))
			if got == input.Yes || (len(text) >= detectGiveUp && got != input.No) {
				t.Errorf("%s on foreign sample %d (%d bytes): %v, want No", f.Name, i, len(text), got)
			}
		}
	}
}

// Before a complete header line, detection waits; a bpftrace map header
// waits for its first row.
func TestDetectNeedMore(t *testing.T) {
	bt := readTestdata(t, "bpftrace_biolatency_example.txt")
	cut := strings.Index(bt, "@usecs:") + len("@usecs:\n")
	if got := BpftraceFormat().Detect([]byte(bt[:cut])); got != input.NeedMore {
		t.Errorf("bpftrace cut after the map header: %v", got)
	}
	if got := BpftraceFormat().Detect([]byte(bt[:cut+10])); got != input.NeedMore {
		t.Errorf("bpftrace cut inside the first row: %v", got)
	}
	bio := readTestdata(t, "bcc_biolatency_example.txt")
	header := strings.Index(bio, "     usecs")
	if got := BCCFormat().Detect([]byte(bio[:header+20])); got != input.NeedMore {
		t.Errorf("bcc cut inside the header: %v", got)
	}
	if got := BCCFormat().Detect([]byte("@x: 5\n")); got != input.NeedMore {
		t.Errorf("a bpftrace scalar map: %v", got)
	}
}

// The formats are found by detection through the core Opener, as the CLI
// does, whatever their order.
func TestOpenerDetects(t *testing.T) {
	formats := Formats()
	for i, j := 0, len(formats)-1; i < j; i, j = i+1, j-1 {
		formats[i], formats[j] = formats[j], formats[i]
	}
	diag := input.NewDiagnostics(nil, 5)
	o := &source.Opener{Formats: formats, Diag: diag}
	for _, tc := range []struct {
		file   string
		events float64
	}{
		{"testdata/bcc_ext4dist_example.txt", 8973},
		{"testdata/perftools_iolatency_example.txt", 67198},
		{"testdata/bpftrace_xfsdist_example.txt", 4096},
	} {
		src, err := o.Open(context.Background(), tc.file)
		if err != nil {
			t.Fatal(err)
		}
		n := 0.0
		err = source.RunAll(context.Background(), []source.Source{src}, false, diag, func(iv stream.Interval) error {
			n += eventCount(iv)
			return nil
		})
		if err != nil || n != tc.events {
			t.Errorf("%s: %g events, err %v; want %g", tc.file, n, err, tc.events)
		}
	}
	for _, f := range Formats() {
		if f.Description == "" || f.Detection == "" || f.Example == "" || strings.Contains(f.Description, "\n") ||
			!(strings.Contains(f.Description, "cumulative") || strings.Contains(f.Description, "per interval")) {
			t.Errorf("format %s: description %q detection %q example %q", f.Name, f.Description, f.Detection, f.Example)
		}
	}
}
