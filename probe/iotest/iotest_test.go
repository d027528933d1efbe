package iotest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/stream"
)

// smallConfig is a quick test in dir: an 8 MiB file, 0.5 s windows.
func smallConfig(dir string) Config {
	return Config{Path: dir, Size: 8 << 20, Interval: 500 * time.Millisecond}
}

// run is what one probe run emitted and when it was stopped.
type run struct {
	intervals   []stream.Interval
	cancelledAt time.Time
	returnedAt  time.Time
}

// runFor runs src until stopAfter intervals have come, then lets it run for
// tail more before cancelling it.
func runFor(t *testing.T, src *Test, stopAfter int, tail time.Duration) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var (
		r  run
		mu sync.Mutex // cancelledAt is set by the timer's goroutine
	)
	err := src.Run(ctx, func(iv stream.Interval) error {
		r.intervals = append(r.intervals, iv)
		if len(r.intervals) == stopAfter {
			time.AfterFunc(tail, func() {
				mu.Lock()
				r.cancelledAt = time.Now()
				mu.Unlock()
				cancel()
			})
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	r.returnedAt = time.Now()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatal("the probe did not stop when cancelled")
	}
	return r
}

// scratchFiles lists the probe's files left in dir.
func scratchFiles(t *testing.T, dir string) []string {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(dir, "latscope-iotest-*"))
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// checkIntervals asserts what every run must show: consecutive windows of
// about the configured length (the median, with exactTiming) with positive
// latencies, and the last, partial window shorter.
func checkIntervals(t *testing.T, r run, cfg Config, wantEvent string, exactTiming bool) *hist.Histogram {
	t.Helper()
	ivs := r.intervals
	if len(ivs) < 4 {
		t.Fatalf("got %d intervals, want at least 4", len(ivs))
	}
	total := loadtest.NewLatencyHist()
	abs, _ := filepath.Abs(cfg.Path)
	var full []time.Duration
	empty := 0
	for i, iv := range ivs {
		if err := iv.Validate(); err != nil {
			t.Errorf("interval %d: %v", i, err)
		}
		if iv.Relative || iv.Gap || !strings.HasPrefix(iv.Source, "iotest:") {
			t.Errorf("interval %d: relative %v, gap %v, source %q", i, iv.Relative, iv.Gap, iv.Source)
		}
		if since := time.Since(iv.Start); since < 0 || since > time.Minute {
			t.Errorf("interval %d starts at %s, not wall-clock now", i, iv.Start)
		}
		if i > 0 && !iv.Start.Equal(ivs[i-1].End()) {
			t.Errorf("interval %d starts at %s, the previous one ended at %s", i, iv.Start, ivs[i-1].End())
		}
		last := i == len(ivs)-1
		if !last {
			full = append(full, iv.Duration)
			// A loaded machine can wake the probe late, never early.
			if iv.Duration < cfg.Interval/2 || iv.Duration > cfg.Interval*4 {
				t.Errorf("interval %d lasted %s, want about %s", i, iv.Duration, cfg.Interval)
			}
		}
		// The last window is cut short by the cancel: it ends when the
		// probe stopped, not on the interval schedule.
		const slack = 5 * time.Millisecond // wall against monotonic clock
		if end := iv.End(); last && (end.Before(r.cancelledAt.Add(-slack)) || end.After(r.returnedAt.Add(slack))) {
			t.Errorf("last interval ends at %s, want between the cancel at %s and the return at %s",
				end.Format(time.StampMicro), r.cancelledAt.Format(time.StampMicro), r.returnedAt.Format(time.StampMicro))
		}
		if len(iv.Series) == 0 {
			empty++ // possible for a window in which the machine stalled the probe
			continue
		}
		if len(iv.Series) != 1 {
			t.Errorf("interval %d has %d series, want 1", i, len(iv.Series))
		}
		s := iv.Series[0]
		if s.Key.Event != wantEvent || s.Key.Instance != abs {
			t.Errorf("interval %d series %v, want event %q on %s", i, s.Key, wantEvent, abs)
		}
		h := s.Hist
		if h.Count() == 0 || h.ZeroCount != 0 || !h.SumExact || h.Sum <= 0 || h.Unit != hist.Microsecond {
			t.Errorf("interval %d: %g reads, %g under 1 ns, sum %g µs (exact %v), unit %s",
				i, h.Count(), h.ZeroCount, h.Sum, h.SumExact, h.Unit)
		}
		total.Merge(h)
	}
	allowed := 1 // the last, cut-short window, or one stalled by a loaded machine
	if !exactTiming {
		allowed = len(ivs) / 2
	}
	if empty > allowed {
		t.Errorf("%d of %d intervals had no reads, want at most %d", empty, len(ivs), allowed)
	}
	slices.Sort(full)
	if median := full[len(full)/2]; exactTiming && (median < cfg.Interval*8/10 || median > cfg.Interval*15/10) {
		t.Errorf("median window %s (of %v), want about %s", median, full, cfg.Interval)
	}
	return total
}

func logLatencies(t *testing.T, what string, h *hist.Histogram, ivs []stream.Interval) {
	var d time.Duration
	for _, iv := range ivs {
		d += iv.Duration
	}
	t.Logf("%s: %g reads in %s (%.0f/s): p50 %s, p90 %s, p99 %s, max bucket %s, mean %s", what, h.Count(),
		d.Round(time.Millisecond), h.Count()/d.Seconds(),
		hist.FormatDuration(h.Quantile(0.5)*1e3), hist.FormatDuration(h.Quantile(0.9)*1e3),
		hist.FormatDuration(h.Quantile(0.99)*1e3), hist.FormatDuration(h.Quantile(1)*1e3),
		hist.FormatDuration(h.Mean()*1e3))
}

func TestRunMeasuresConsecutiveIntervals(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig(dir)
	var progress bytes.Buffer
	diag := input.NewDiagnostics(nil, 5)
	cfg.Progress = &progress
	src := New(cfg, diag)
	r := runFor(t, src, 4, 250*time.Millisecond)

	event := "8 KiB random read"
	t.Logf("warnings: %q", diag.Warnings())
	if strings.Contains(strings.Join(diag.Warnings(), "\n"), "page cache") {
		event += " (page cache)" // TMPDIR on tmpfs, or no O_DIRECT
	}
	total := checkIntervals(t, r, cfg, event, true)
	logLatencies(t, event+" in "+dir, total, r.intervals)
	if n := diag.Count(src.Name()); n != 0 {
		t.Errorf("%d read errors: %v", n, diag.Problems())
	}
	if left := scratchFiles(t, dir); len(left) > 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
	wantProgress := "creating 8 MiB scratch file in " + dir + ": 0%\n"
	if p := progress.String(); !strings.HasPrefix(p, wantProgress) || !strings.HasSuffix(p, ": 100%\n") {
		t.Errorf("progress = %q, want lines from %q to 100%%", p, wantProgress)
	}
}

func TestCancelDuringCreationRemovesFile(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first progress line comes once the file exists and before it is
	// written: cancel there.
	progress := writerFunc(func(p []byte) (int, error) { cancel(); return len(p), nil })
	src := New(Config{Path: dir, Size: 256 << 20, Progress: progress}, nil)
	begin := time.Now()
	var got []stream.Interval
	err := src.Run(ctx, func(iv stream.Interval) error { got = append(got, iv); return nil })
	if err != nil {
		t.Errorf("Run after cancel = %v, want nil (a normal stop)", err)
	}
	if took := time.Since(begin); took > 3*time.Second {
		t.Errorf("Run took %s to stop after cancel during creation", took)
	}
	if len(got) != 0 {
		t.Errorf("emitted %d intervals before measuring started", len(got))
	}
	if left := scratchFiles(t, dir); len(left) > 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestPageCacheFallbackOnTmpfs(t *testing.T) {
	shm, err := os.Open("/dev/shm")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	fs, memory := memoryFS(shm)
	shm.Close()
	if !memory {
		t.Skip("/dev/shm is not tmpfs here")
	}
	dir, err := os.MkdirTemp("/dev/shm", "latscope-iotest-test-")
	if err != nil {
		t.Skipf("cannot write to /dev/shm: %v", err)
	}
	defer os.RemoveAll(dir)

	// One reader leaves a processor for the rest of the test.
	cfg := Config{Path: dir, Size: 4 << 20, Steps: []int{1}, Interval: 300 * time.Millisecond}
	diag := input.NewDiagnostics(nil, 5)
	r := runFor(t, New(cfg, diag), 4, 100*time.Millisecond)

	warnings := strings.Join(diag.Warnings(), "\n")
	if !strings.Contains(warnings, "page cache") || !strings.Contains(warnings, fs) || !strings.Contains(warnings, dir) {
		t.Errorf("warnings %q do not say that %s is %s and the page cache is in play", warnings, dir, fs)
	}
	// Page-cache reads keep the CPUs busy, so the probe's own wake-ups can
	// be late on a loaded machine: only the data and warning are checked.
	total := checkIntervals(t, r, cfg, "8 KiB random read (page cache)", false)
	logLatencies(t, "page cache on "+fs, total, r.intervals)
	if left := scratchFiles(t, dir); len(left) > 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
}

func TestWarnsWhenReadersOutnumberProcessors(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, readers := range []int{procs, procs + 1} {
		cfg := Config{Path: t.TempDir(), Size: 1 << 20, Steps: []int{readers}, Interval: 50 * time.Millisecond}
		diag := input.NewDiagnostics(nil, 5)
		runFor(t, New(cfg, diag), 1, 0)
		warned := strings.Contains(strings.Join(diag.Warnings(), "\n"), "GOMAXPROCS")
		if warned != (readers > procs) {
			t.Errorf("%d readers, GOMAXPROCS=%d: warned %v, warnings %q", readers, procs, warned, diag.Warnings())
		}
	}
}

func TestNextBoundarySkipsSlivers(t *testing.T) {
	t0 := time.Now()
	const iv = time.Second
	for _, c := range []struct {
		late time.Duration // how late the window before ended
		want time.Duration // the next boundary, from t0
	}{
		{0, 2 * iv}, {100 * time.Millisecond, 2 * iv}, {499 * time.Millisecond, 2 * iv},
		{600 * time.Millisecond, 3 * iv}, {1100 * time.Millisecond, 3 * iv}, {1600 * time.Millisecond, 4 * iv},
	} {
		end := t0.Add(iv + c.late)
		if got := nextBoundary(t0.Add(iv), end, iv); !got.Equal(t0.Add(c.want)) {
			t.Errorf("window ended %s late: next boundary at +%s, want +%s", c.late, got.Sub(t0), c.want)
		}
	}
}

func TestMissingDirIsAClearError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	_, err := OpenProbe(Config{Path: missing}, nil)
	if err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(%s) error = %v, want one naming the directory and saying it does not exist", missing, err)
	}
	t.Log(err)

	src := New(Config{Path: missing}, nil)
	err = src.Run(context.Background(), nil)
	// Starting with the source's name, RunAll does not name it twice.
	if err == nil || !strings.HasPrefix(err.Error(), src.Name()+": ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Run in %s error = %v, want one starting with %q", missing, err, src.Name())
	}
	t.Log(err)

	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenProbe(Config{Path: file}, nil); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Open(%s) error = %v, want \"not a directory\"", file, err)
	}
}

func TestUnwritableDirIsAClearError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write to any directory")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	err := New(smallConfig(dir), nil).Run(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), dir) || !errors.Is(err, os.ErrPermission) {
		t.Errorf("Run in read-only %s error = %v, want permission denied naming the directory", dir, err)
	}
}

func TestConfigDefaultsAndChecks(t *testing.T) {
	src, err := OpenProbe(Config{Interval: 2 * time.Second}, nil)
	if err != nil {
		t.Fatalf("Open(\"\"): %v", err)
	}
	cwd, _ := os.Getwd()
	got := src.Config()
	want := Config{Path: cwd, BlockSize: 8 << 10, Steps: []int{4}, Engine: EnginePsync, IODepths: []int{1}, Workers: 64, Interval: 2 * time.Second}
	if !reflect.DeepEqual(got, want) || src.Name() != "iotest:"+cwd {
		t.Errorf("defaults = %+v named %q, want %+v", got, src.Name(), want)
	}
	if cfg, _ := (Config{}).resolve(); cfg.Interval != time.Second {
		t.Errorf("default interval without --interval = %s, want 1s", cfg.Interval)
	}
	for _, bad := range []Config{
		{BlockSize: 1000}, {BlockSize: -512}, {BlockSize: 128 << 20}, {Size: 4096}, {Size: -1},
		{Steps: []int{-1}}, {Steps: []int{4, 0}}, {Steps: []int{5000}}, {Workers: -3}, {Workers: 100000},
		{Rates: []float64{-1}}, {Rates: []float64{math.NaN()}}, {Rates: []float64{1e12}},
		{Interval: -time.Second}, {StepDuration: -time.Second}, {Warmup: -time.Second},
	} {
		bad.Path = t.TempDir()
		if err := New(bad, nil).Run(context.Background(), nil); err == nil {
			t.Errorf("config %+v accepted", bad)
		}
	}
}

func TestReadErrorsAreCountedAndReadingGoesOn(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "closed")
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // every read now fails
	diag := input.NewDiagnostics(nil, 2)
	test := &Test{name: "iotest:test", diag: diag}
	w := newWorker(&testFile{reader: f, size: 1 << 20}, 8<<10, false, loadtest.NewRecorder())
	var stop atomic.Bool
	finished := make(chan struct{})
	go func() { w.runClosed(&stop, test.reportIOError); close(finished) }()
	time.Sleep(5 * errorBackoff)
	stop.Store(true)
	<-finished
	if n := diag.Count(test.name); n < 2 {
		t.Fatalf("%d read errors counted, want several (the reader must keep going)", n)
	}
	first := diag.Problems()[0].First[0]
	if first.At.IsZero() || !strings.Contains(first.Reason, "offset") || !(strings.Contains(first.Reason, "closed") || strings.Contains(first.Reason, "bad file descriptor")) {
		t.Errorf("first problem %+v, want a timed report naming the offset and the error", first)
	}
}

func TestReadLoopDoesNotAllocate(t *testing.T) {
	s := newTestScratch(t, t.TempDir(), 1<<20)
	w := newWorker(s, 8<<10, false, loadtest.NewRecorder())
	timedRead := func() {
		t0 := time.Now()
		if err := w.once(); err != nil {
			t.Fatal(err)
		}
		w.shard.Record(time.Since(t0))
	}
	for range 1000 { // let the histogram grow to the latencies' range
		timedRead()
	}
	if allocs := testing.AllocsPerRun(1000, timedRead); allocs != 0 {
		t.Errorf("a read allocates %g times", allocs)
	}
}

func TestAlignedBlock(t *testing.T) {
	for _, size := range []int{512, 4096, 8192, 12288, 1 << 20} {
		for range 20 {
			b := alignedBlock(size)
			if len(b) != size || cap(b) != size || addr(b)%alignment != 0 {
				t.Fatalf("alignedBlock(%d): len %d cap %d at %#x", size, len(b), cap(b), addr(b))
			}
		}
	}
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{
		512: "512 B", 8 << 10: "8 KiB", 256 << 20: "256 MiB", 3 << 29: "1.5 GiB", 0: "0 B",
	} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// newTestScratch creates a scratch file of size bytes in dir, closed at
// the end of the test.
func newTestScratch(tb testing.TB, dir string, size int64) *testFile {
	tb.Helper()
	cfg, err := Config{Path: dir, Size: size}.resolve()
	if err != nil {
		tb.Fatal(err)
	}
	s, err := createScratch(context.Background(), cfg, size, newProgressReporter(nil, size, dir, 1))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.close)
	return s
}

func FuzzOpen(f *testing.F) {
	for _, seed := range []string{"", ".", "/dev/shm", "/nonexistent", "../x", "a\x00b", "/etc/passwd", strings.Repeat("x/", 300)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		src, err := OpenProbe(Config{Path: arg}, nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "iotest: ") {
				t.Errorf("Open(%q) error %q does not say it comes from iotest", arg, err)
			}
			return
		}
		if !strings.HasPrefix(src.Name(), "iotest:/") {
			t.Errorf("Open(%q) named %q, want iotest:/absolute/dir", arg, src.Name())
		}
	})
}
