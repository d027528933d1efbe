package iotest

import (
	"context"
	"crypto/sha256"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/stream"
)

// runTest runs cfg to the end (or until timeout) and returns the test, its
// intervals and its diagnostics. GOMAXPROCS is raised as the driver does.
func runTest(t *testing.T, cfg Config, timeout time.Duration) (*Test, []stream.Interval, *input.Diagnostics) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), ProcsNeeded(cfg))))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	diag := input.NewDiagnostics(nil, 5)
	test := New(cfg, diag)
	var ivs []stream.Interval
	if err := test.Run(ctx, func(iv stream.Interval) error { ivs = append(ivs, iv); return nil }); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return test, ivs, diag
}

// intervalCount sums the events of the intervals that lie within [from, to].
func intervalCount(ivs []stream.Interval, from, to time.Time) float64 {
	n := 0.0
	for _, iv := range ivs {
		if !iv.Start.Before(from) && !iv.End().After(to) {
			for _, s := range iv.Series {
				n += s.Hist.Count()
			}
		}
	}
	return n
}

func TestSweepMeasuresEveryStepAfterItsWarmup(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Path: dir, Size: 16 << 20, Steps: []int{1, 2}, StepDuration: 600 * time.Millisecond,
		Warmup: 200 * time.Millisecond, Interval: 250 * time.Millisecond}
	test, ivs, diag := runTest(t, cfg, 20*time.Second)
	res := test.Result()
	if len(res.Steps) != 2 {
		t.Fatalf("%d steps measured, want 2", len(res.Steps))
	}
	if res.Kind != kindScratch || res.BlockSize != 8192 || res.WorkingSet != 16<<20 || res.Files != 1 || res.OpenLoop {
		t.Errorf("result header %+v", res)
	}
	// Every interval joins the previous one, from the first step's start
	// to the last step's end.
	for i := 1; i < len(ivs); i++ {
		if !ivs[i].Start.Equal(ivs[i-1].End()) {
			t.Errorf("interval %d starts at %s, the previous ended at %s", i, ivs[i].Start, ivs[i-1].End())
		}
	}
	var total float64
	for i, s := range res.Steps {
		if s.Concurrency != cfg.Steps[i] || !s.Complete || s.Rate != 0 {
			t.Errorf("step %d: concurrency %d complete %v rate %g", i, s.Concurrency, s.Complete, s.Rate)
		}
		// The warm-up ends when its timer fires, a little late on a loaded
		// machine; the step still ends on schedule, so it is that much shorter.
		if d := s.Elapsed - cfg.StepDuration; d < -20*time.Millisecond || d > 50*time.Millisecond {
			t.Errorf("step %d measured %s, want %s", i, s.Elapsed, cfg.StepDuration)
		}
		ops := s.Latency.Count()
		if ops < 50 || s.Bytes != int64(ops)*8192 || s.Max <= 0 || s.CPU <= 0 || s.Errors != 0 {
			t.Errorf("step %d: %g ops, %d bytes, max %s, cpu %s, %d errors", i, ops, s.Bytes, s.Max, s.CPU, s.Errors)
		}
		// The exact max lies in the histogram's top bucket.
		if top := s.Latency.Quantile(1); math.Abs(top-loadtest.Micros(s.Max)) > 0.02*top {
			t.Errorf("step %d: max %s, histogram top %gµs", i, s.Max, top)
		}
		total += ops
	}
	// The steps hold exactly the events of the measured intervals: all
	// intervals minus the warm-ups.
	var all, warm float64
	for _, iv := range ivs {
		for _, s := range iv.Series {
			all += s.Hist.Count()
		}
	}
	warm = all - total
	if warm <= 0 || total <= 0 {
		t.Errorf("intervals hold %g events, steps %g: the warm-up must be in the stream but not in the steps", all, total)
	}
	if n := diag.Count(test.Name()); n != 0 {
		t.Errorf("%d I/O errors", n)
	}
	if left := scratchFiles(t, dir); len(left) > 0 {
		t.Errorf("scratch files left: %v", left)
	}
	t.Logf("steps: 1 reader %g reads, 2 readers %g reads", res.Steps[0].Latency.Count(), res.Steps[1].Latency.Count())
}

func TestOpenLoopKeepsItsRate(t *testing.T) {
	cfg := Config{Path: t.TempDir(), Size: 16 << 20, Rates: []float64{2000}, Workers: 8,
		StepDuration: time.Second, Interval: 500 * time.Millisecond}
	test, _, _ := runTest(t, cfg, 20*time.Second)
	res := test.Result()
	if len(res.Steps) != 1 || !res.OpenLoop || res.SpinMargin <= 0 {
		t.Fatalf("result %+v", res)
	}
	s := res.Steps[0]
	// 2000 Poisson arrivals in a second: the count's standard deviation is
	// 45, so ±10 % is over four sigmas.
	if n := s.Latency.Count(); n < 1800 || n > 2200 || s.NotIssued != 0 {
		t.Errorf("%g I/Os in %s at 2000/s, %d not issued", n, s.Elapsed, s.NotIssued)
	}
	if s.IssueDelay.Count() != s.Latency.Count() {
		t.Errorf("%g issue delays for %g I/Os", s.IssueDelay.Count(), s.Latency.Count())
	}
	t.Logf("open loop: %g I/Os, latency p50 %.1fµs, issue delay p50 %.1fµs p99 %.1fµs, spin margin %s",
		s.Latency.Count(), s.Latency.Quantile(0.5), s.IssueDelay.Quantile(0.5), s.IssueDelay.Quantile(0.99), res.SpinMargin)
}

// TestOpenLoopCountsQueueingFromIntendedStart overloads one worker: at
// three times what it can do, I/Os queue behind each other and latency
// measured from the intended start grows far beyond the service time,
// where a closed loop (or a tool that times from the actual start) would
// report the service time only.
func TestOpenLoopCountsQueueingFromIntendedStart(t *testing.T) {
	dir := t.TempDir()
	closed, _, _ := runTest(t, Config{Path: dir, Size: 16 << 20, Steps: []int{1}, StepDuration: 500 * time.Millisecond}, 20*time.Second)
	service := closed.Result().Steps[0]
	capacity := service.Latency.Count() / service.Elapsed.Seconds()
	cfg := Config{Path: dir, Size: 16 << 20, Rates: []float64{3 * capacity}, Workers: 1, StepDuration: 500 * time.Millisecond}
	open, _, _ := runTest(t, cfg, 20*time.Second)
	s := open.Result().Steps[0]
	p50Service, p50Open := service.Latency.Quantile(0.5), s.Latency.Quantile(0.5)
	t.Logf("capacity %.0f/s, service p50 %.1fµs; at %.0f/s: latency p50 %.1fµs, issue delay p50 %.1fµs, %d not issued",
		capacity, p50Service, 3*capacity, p50Open, s.IssueDelay.Quantile(0.5), s.NotIssued)
	if p50Open < 10*p50Service {
		t.Errorf("overloaded open loop p50 %.1fµs, want ≥ 10× the service time %.1fµs", p50Open, p50Service)
	}
	// What an uncorrected tool reports: latency minus the issue delay.
	if p50Service > 0 && s.IssueDelay.Quantile(0.5) < p50Open/2 {
		t.Errorf("issue delay p50 %.1fµs does not explain the latency p50 %.1fµs", s.IssueDelay.Quantile(0.5), p50Open)
	}
}

func TestWriteTestWritesOnlyItsScratchFile(t *testing.T) {
	cfg := Config{Path: t.TempDir(), Size: 4 << 20, Write: true, Steps: []int{1}, StepDuration: 300 * time.Millisecond, Interval: 100 * time.Millisecond}
	test, ivs, _ := runTest(t, cfg, 20*time.Second)
	if s := test.Result().Steps[0]; s.Latency.Count() == 0 || !test.Result().Write {
		t.Fatalf("no writes measured: %+v", s)
	}
	if ev := ivs[0].Series[0].Key.Event; !strings.HasPrefix(ev, "8 KiB random write (O_DSYNC)") {
		t.Errorf("event %q", ev)
	}
	existing := writeFile(t, 1<<20)
	err := New(Config{Path: existing, Write: true}, nil).Run(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "only read") {
		t.Errorf("--write on an existing file: %v, want a refusal", err)
	}
}

// writeFile creates a file of size random bytes in a temporary directory.
func writeFile(t *testing.T, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.dbf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, zeros{}, size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// zeros is an endless reader of ones (not zeros: a real block of data).
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 1
	}
	return len(p), nil
}

func digest(t *testing.T, path string) [32]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

func TestExistingFileIsReadNotChangedNorRemoved(t *testing.T) {
	path := writeFile(t, 4<<20)
	before := digest(t, path)
	cfg := Config{Path: path, Size: 2 << 20, Steps: []int{2}, StepDuration: 300 * time.Millisecond}
	test, _, _ := runTest(t, cfg, 20*time.Second)
	res := test.Result()
	if res.Kind != kindFile || res.WorkingSet != 2<<20 || res.Steps[0].Latency.Count() == 0 {
		t.Errorf("result %+v", res)
	}
	if digest(t, path) != before {
		t.Error("the test changed the file")
	}
}

func TestSparseFileIsWarnedAbout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sparse.dbf")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 64<<20); err != nil {
		t.Fatal(err)
	}
	_, _, diag := runTest(t, Config{Path: path, Steps: []int{1}, StepDuration: 100 * time.Millisecond}, 20*time.Second)
	if w := strings.Join(diag.Warnings(), "\n"); !strings.Contains(w, "sparse") {
		t.Errorf("warnings %q do not mention the holes", w)
	}
}

func TestFilePerReader(t *testing.T) {
	cfg := Config{Path: t.TempDir(), Size: 8 << 20, Steps: []int{1, 4}, FilePerReader: true, StepDuration: 200 * time.Millisecond}
	test, _, _ := runTest(t, cfg, 20*time.Second)
	if res := test.Result(); res.Files != 4 || res.WorkingSet != 8<<20 || len(res.Steps) != 2 {
		t.Errorf("%d files, working set %d, %d steps", res.Files, res.WorkingSet, len(res.Steps))
	}
}

func TestBadTargetsAreClearErrors(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "missing"): "no such file",
		small:                         "less than one 8 KiB block",
		"/dev/null":                   "neither a directory, a regular file nor a block device",
	} {
		err := New(Config{Path: path}, nil).Run(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming it and saying %q", path, err, want)
		}
	}
	err := New(Config{Path: dir, Size: 1 << 50}, nil).Run(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "free") {
		t.Errorf("a 1 PiB scratch file: %v, want a free-space error", err)
	}
	if left := scratchFiles(t, dir); len(left) > 0 {
		t.Errorf("files left: %v", left)
	}
}

// TestBlockDeviceOnLoopDevice reads a loop device, the block-device path
// users take for raw devices, and checks that nothing was written to it.
func TestBlockDeviceOnLoopDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "loop devices need root")
	}
	backing := writeFile(t, 16<<20)
	out, err := exec.Command("losetup", "--find", "--show", "--direct-io=on", backing).Output()
	if err != nil {
		testenv.SkipOrFail(t, "losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	before := digest(t, backing)
	test, _, _ := runTest(t, Config{Path: dev, Steps: []int{2}, StepDuration: 300 * time.Millisecond}, 20*time.Second)
	res := test.Result()
	if res.Kind != kindDevice || res.WorkingSet != 16<<20 || !res.Direct || res.Steps[0].Latency.Count() == 0 {
		t.Errorf("%s: %+v", dev, res)
	}
	err = New(Config{Path: dev, Write: true}, nil).Run(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "block device") {
		t.Errorf("--write on %s: %v", dev, err)
	}
	if digest(t, backing) != before {
		t.Errorf("the test changed %s", dev)
	}
	t.Logf("%s: %g reads, p50 %.1fµs", dev, res.Steps[0].Latency.Count(), res.Steps[0].Latency.Quantile(0.5))
}

var _ = hist.Microsecond
