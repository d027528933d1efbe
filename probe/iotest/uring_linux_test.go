//go:build linux

package iotest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/stream"
)

// needUring skips a test where the kernel or a seccomp profile refuses
// io_uring: that is the machine's limit, not a failure (the tests then
// run nowhere, so the skip names why).
func needUring(t *testing.T) {
	t.Helper()
	if err := uringAvailable(); err != nil {
		t.Skipf("skipped: %v", err)
	}
}

// uringConfig is a short io_uring test in a fresh directory: no warm-up,
// so every I/O the workers complete is in the step.
func uringConfig(t *testing.T, readers int, depths ...int) Config {
	return Config{Path: t.TempDir(), Size: 16 << 20, Engine: EngineIOUring, Steps: []int{readers}, IODepths: depths,
		StepDuration: 400 * time.Millisecond, Interval: 100 * time.Millisecond}
}

// checkCounts asserts that the report counts exactly the I/Os the workers
// reaped from their completion rings, and that the heat map's intervals
// hold them too.
func checkCounts(t *testing.T, test *Test, ivs []stream.Interval, what string) {
	t.Helper()
	res := test.Result()
	if len(res.Steps) != 1 {
		t.Fatalf("%d steps, want 1", len(res.Steps))
	}
	s := res.Steps[0]
	rep := NewReport(res, Device{}, nil)
	ops := rep.Steps[0].Ops
	if ops == 0 || int64(ops) != s.Completed {
		t.Errorf("%s: report counts %d operations, the rings completed %d", what, ops, s.Completed)
	}
	inIntervals := intervalCount(ivs, time.Time{}, time.Now())
	if int64(inIntervals) != s.Completed {
		t.Errorf("%s: intervals hold %g operations, the rings completed %d", what, inIntervals, s.Completed)
	}
	t.Logf("%s: %d ops, %.0f IOPS, p50 %.1f µs, p99 %.1f µs, max in flight %d",
		what, ops, rep.Steps[0].IOPS, rep.Steps[0].P50US, rep.Steps[0].P99US, s.MaxInFlight)
}

func TestUringReadsAreAllCounted(t *testing.T) {
	needUring(t)
	cfg := uringConfig(t, 2, 4)
	test, ivs, diag := runTest(t, cfg, 20*time.Second)
	if n := diag.Count(test.Name()); n != 0 {
		t.Fatalf("%d I/O errors: %v", n, diag.Problems())
	}
	checkCounts(t, test, ivs, "reads")
	res := test.Result()
	if res.Engine != EngineIOUring || res.Steps[0].Concurrency != 8 || res.Steps[0].Readers != 2 || res.Steps[0].IODepth != 4 {
		t.Errorf("engine %q, step %+v: want io_uring, 2 readers × iodepth 4 = 8", res.Engine, res.Steps[0].Step)
	}
}

func TestUringDSyncWritesAreAllCounted(t *testing.T) {
	needUring(t)
	cfg := uringConfig(t, 1, 4)
	cfg.Write = true
	test, ivs, diag := runTest(t, cfg, 20*time.Second)
	if n := diag.Count(test.Name()); n != 0 {
		t.Fatalf("%d I/O errors: %v", n, diag.Problems())
	}
	checkCounts(t, test, ivs, "O_DSYNC writes")
	if ev := ivs[0].Series[0].Key.Event; ev != "8 KiB random write (O_DSYNC)" && ev != "8 KiB random write (O_DSYNC) (page cache)" {
		t.Errorf("event %q", ev)
	}
}

// The depth is what each ring keeps in flight: never more, and, on a run
// long enough to refill, exactly that; Little's law agrees.
func TestUringHonoursIODepth(t *testing.T) {
	needUring(t)
	cfg := uringConfig(t, 1, 1, 8)
	test, _, diag := runTest(t, cfg, 20*time.Second)
	if n := diag.Count(test.Name()); n != 0 {
		t.Fatalf("%d I/O errors: %v", n, diag.Problems())
	}
	res := test.Result()
	if len(res.Steps) != 2 {
		t.Fatalf("%d steps, want 2 (iodepth 1 and 8)", len(res.Steps))
	}
	rep := NewReport(res, Device{}, nil)
	for i, depth := range []int{1, 8} {
		s := res.Steps[i]
		if s.MaxInFlight != depth || s.Concurrency != depth {
			t.Errorf("iodepth %d: at most %d in flight, concurrency %d", depth, s.MaxInFlight, s.Concurrency)
		}
		// Little: IOPS × mean latency is the I/Os in flight, a little
		// less for the moments between a completion and its refill; a
		// loaded machine's late timer lets a 400 ms step run longer than
		// the elapsed time it reports, hence the upper slack.
		if l := rep.Steps[i].LittleConcurrency; l > float64(depth)*1.3 || l < float64(depth)*0.7 {
			t.Errorf("iodepth %d: Little's L = %.2f", depth, l)
		}
		if got := rep.Steps[i].Load(); got != "1 reader × iodepth "+[]string{"1", "8"}[i] {
			t.Errorf("load %q", got)
		}
	}
}

// A sequential pass through the ring returns the same bytes as pread.
func TestUringSequentialPassReadsTheSameBytes(t *testing.T) {
	needUring(t)
	const bs, size = 8 << 10, 4 << 20
	s := newTestScratch(t, t.TempDir(), size)
	want := sha256.New()
	rf := newRawFile(s.reader)
	buf := alignedBlock(bs)
	for off := int64(0); off < size; off += bs {
		if _, err := rf.ReadAt(buf, off); err != nil {
			t.Fatal(err)
		}
		want.Write(buf)
	}
	got := sha256.Sum256(readSequentially(t, s.reader, bs, size, 8))
	if !bytes.Equal(got[:], want.Sum(nil)) {
		t.Fatal("io_uring and pread read different bytes")
	}
	if got == sha256.Sum256(make([]byte, size)) {
		t.Fatal("both read zeros: the scratch file holds random bytes")
	}
}

// readSequentially reads the first size bytes of f in bs blocks, depth at
// a time, through a ring, placing each completion at its offset.
func readSequentially(t *testing.T, f *os.File, bs, size int64, depth int) []byte {
	r, err := newRing(uint32(depth), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	out := make([]byte, size)
	bufs := make([][]byte, depth)
	offs := make([]int64, depth)
	for i := range bufs {
		bufs[i] = alignedBlock(int(bs))
	}
	next, inFlight := int64(0), 0
	issue := func(slot int) {
		offs[slot] = next
		r.prepare(false, int(f.Fd()), bufs[slot], next, uint64(slot))
		next += bs
		inFlight++
	}
	for slot := 0; slot < depth && next < size; slot++ {
		issue(slot)
	}
	for inFlight > 0 {
		if _, err := r.submit(1); err != nil {
			t.Fatal(err)
		}
		head, tail := r.ready()
		for i := head; i != tail; i++ {
			c := r.cqe(i)
			slot := int(c.userData)
			if c.res != int32(bs) {
				t.Fatalf("read at %d: result %d", offs[slot], c.res)
			}
			copy(out[offs[slot]:], bufs[slot])
			inFlight--
			if next < size {
				issue(slot)
			}
		}
		r.consume(tail)
	}
	return out
}

// A failing I/O is reported with its offset and errno, and the worker goes
// on issuing until stopped.
func TestUringErrorsAreCountedAndIOGoesOn(t *testing.T) {
	needUring(t)
	ro, err := os.Open(writeFile(t, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	diag := input.NewDiagnostics(nil, 2)
	test := &Test{name: "iotest:test", diag: diag}
	// Writes to a read-only descriptor: every completion is EBADF.
	w := newWorker(&testFile{reader: ro, writer: ro, size: 1 << 20}, 8<<10, true, loadtest.NewRecorder())
	u := newUringWorker(w, 4)
	var stop atomic.Bool
	finished := make(chan struct{})
	go func() { u.runClosed(&stop, test.reportIOError); close(finished) }()
	// Several rounds of errors, each followed by errorBackoff; a loaded
	// machine may take longer than 5 rounds' worth of time.
	for deadline := time.Now().Add(10 * time.Second); w.counts.completed.Load() < 12 && time.Now().Before(deadline); {
		time.Sleep(errorBackoff)
	}
	stop.Store(true)
	<-finished
	if n := diag.Count(test.name); n < 8 {
		t.Fatalf("%d errors counted, want several rounds of 4", n)
	}
	first := diag.Problems()[0].First[0]
	if !strings.Contains(first.Reason, "write of 8192 bytes at offset") || !strings.Contains(first.Reason, "bad file descriptor") {
		t.Errorf("first problem %q, want the write, its offset and EBADF", first.Reason)
	}
	if w.counts.completed.Load() != int64(diag.Count(test.name)) {
		t.Errorf("%d completions, %d errors: every completion failed", w.counts.completed.Load(), diag.Count(test.name))
	}
}

func TestUringSetupErrors(t *testing.T) {
	needUring(t)
	_, err := newRing(0, false) // zero entries: EINVAL
	if err == nil || errors.Is(err, errUringUnavailable) || !strings.Contains(err.Error(), "io_uring_setup of 0 entries") {
		t.Errorf("newRing(0) = %v, want a setup error naming the entries", err)
	}
}

func TestEngineConfigChecks(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Engine: "libaio"}, `engine "libaio": want psync or io_uring`},
		{Config{IODepths: []int{8}}, "iodepth 8 needs engine io_uring"},
		{Config{Engine: EngineIOUring, IODepths: []int{0}}, "iodepth 0: want 1 to 1024"},
		{Config{Engine: EngineIOUring, IODepths: []int{2048}}, "iodepth 2048: want 1 to 1024"},
		{Config{Engine: EngineIOUring, Rates: []float64{100}}, "open loop"},
		{Config{Engine: EngineIOUring, Steps: []int{1, 2}, IODepths: []int{1, 2}}, "not both"},
	} {
		c.cfg.Path = t.TempDir()
		_, err := c.cfg.resolve()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	cfg, err := Config{Path: t.TempDir(), Engine: EngineIOUring, Steps: []int{2}, IODepths: []int{1, 4, 32}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.levels(); len(got) != 3 || got[2] != (level{readers: 2, depth: 32}) {
		t.Errorf("levels %+v", got)
	}
	if p := Plan(cfg); !strings.Contains(p, "(io_uring, iodepth 1,4,32 each)") {
		t.Errorf("plan %q", p)
	}
}

// A submission alone posts the completions finished since the last entry
// into the kernel: on a ring that defers task work (fio's set-up and
// ours), that is what lets the worker take them and refill the queue
// without waiting. Without GETEVENTS on the submission, the completed
// read below stays unseen until the worker waits.
func TestUringSubmissionPostsFinishedCompletions(t *testing.T) {
	needUring(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := newRing(4, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	// Blocking pipes: a read of an empty one stays in flight, and its
	// completion, when data comes, is task work the ring defers.
	first, second := blockingPipe(t), blockingPipe(t)
	firstBuf, secondBuf := make([]byte, 8), make([]byte, 8)
	r.prepare(false, first[0], firstBuf, -1, 1)
	if n, err := r.submitN(1, 0); n != 1 || err != nil {
		t.Fatalf("first read: submitted %d, %v", n, err)
	}
	if _, err := unix.Write(first[1], []byte("finished")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the read completes meanwhile
	r.prepare(false, second[0], secondBuf, -1, 2)
	if n, err := r.submitN(1, 0); n != 1 || err != nil {
		t.Fatalf("second read: submitted %d, %v", n, err)
	}
	head, tail := r.ready()
	if tail-head != 1 || r.cqe(head).userData != 1 || r.cqe(head).res != 8 {
		t.Fatalf("after the second submission %d completions ready, want the first read's (8 bytes)", tail-head)
	}
	r.consume(tail)
	// Let the second read finish before the ring and its buffer go.
	if _, err := unix.Write(second[1], []byte("finished")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.wait(); err != nil {
		t.Fatal(err)
	}
}

// blockingPipe returns a pipe's read and write descriptors, blocking (Go's
// os.Pipe sets O_NONBLOCK, which io_uring answers with EAGAIN).
func blockingPipe(t *testing.T) [2]int {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds
}
