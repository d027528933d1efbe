package events

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"golang.org/x/sys/unix"
)

const (
	sleeperEnv   = "LATSCOPE_EVENTS_SLEEPER"
	sleeps       = 30
	sleepRequest = 2 * time.Millisecond
)

// TestMain runs the traced workload of TestBpftraceEvents when the test
// binary is started as that child process: `sleeps` clock_nanosleep(2)
// calls of 2 ms (the Go runtime's own sleeps use nanosleep(2), which the
// script does not trace).
func TestMain(m *testing.M) {
	if os.Getenv(sleeperEnv) == "1" {
		ts := unix.NsecToTimespec(int64(sleepRequest))
		for range sleeps {
			for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil) == unix.EINTR {
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// bpftraceScript prints a HeatMap-style header and one "completion-time
// latency" line (both ns, monotonic) per clock_nanosleep of the traced child.
const bpftraceScript = `BEGIN { printf("TIMEns LATns\n"); }
tracepoint:syscalls:sys_enter_clock_nanosleep /pid == cpid/ { @start[tid] = nsecs; }
tracepoint:syscalls:sys_exit_clock_nanosleep /@start[tid]/ { printf("%llu %llu\n", nsecs, nsecs - @start[tid]); delete(@start[tid]); }
`

// TestBpftraceEvents generates a real per-event file: bpftrace traces the
// nanosleeps of a child process, and latscope must read back every one of
// them with the exact latencies bpftrace printed.
func TestBpftraceEvents(t *testing.T) {
	bpftrace, err := exec.LookPath("bpftrace")
	if err != nil {
		testenv.SkipOrFail(t, "bpftrace is not installed")
	}
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "bpftrace needs root")
	}
	if _, err := os.Stat("/sys/kernel/tracing/events/syscalls"); err != nil {
		testenv.SkipOrFail(t, "tracefs with syscall tracepoints is not mounted at /sys/kernel/tracing")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "sleeps.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	child := os.Args[0]
	cmd := exec.CommandContext(ctx, bpftrace, "-o", out, "-e", bpftraceScript, "-c", child)
	cmd.Env = append(os.Environ(), sleeperEnv+"=1")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bpftrace: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Independent reading: every line of two integers.
	var n int
	var sum float64
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		lat, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		if time.Duration(lat) < sleepRequest {
			t.Errorf("a %v nanosleep lasted %v", sleepRequest, time.Duration(lat))
		}
		n++
		sum += float64(lat)
	}
	if n != sleeps {
		t.Fatalf("bpftrace printed %d sleeps, want %d:\n%s", n, sleeps, data)
	}
	if got := Detect(data); got != input.Yes {
		t.Fatalf("Detect = %v", got)
	}
	res := runFile(t, Format(), out, source.Options{})
	if p := res.Malformed(); len(p) > 0 {
		t.Errorf("problems %q", p)
	}
	count, sumNs := res.total("")
	if count != sleeps || sumNs != sum {
		t.Errorf("latscope read %g sleeps summing %g ns; bpftrace printed %d summing %g", count, sumNs, n, sum)
	}
	for _, iv := range res.Intervals {
		if !iv.Relative {
			t.Errorf("interval at %s on the wall clock; bpftrace's nsecs are monotonic", iv.Start)
		}
		for _, s := range iv.Series {
			if s.Hist.Unit != hist.Nanosecond {
				t.Errorf("unit %s, want ns from the LATns header", s.Hist.Unit)
			}
		}
	}
}
