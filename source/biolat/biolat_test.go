package biolat

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

func TestPrivilegesMissingAreSaidPlainly(t *testing.T) {
	_, err := open("", source.Options{}, input.NewDiagnostics(io.Discard, 5), Env{Euid: func() int { return 1000 }})
	if err == nil || !strings.Contains(err.Error(), "needs root") {
		t.Errorf("not root: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = open("", source.Options{}, input.NewDiagnostics(io.Discard, 5), Env{Euid: func() int { return 0 }})
	if err == nil || !strings.Contains(err.Error(), "bpftrace not found") {
		t.Errorf("no bpftrace: %v", err)
	}
}

func TestBpftraceErrorsReachTheUser(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "bpftrace")
	script := "#!/bin/sh\necho 'ERROR: Could not resolve tracepoint block:block_rq_issue' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := open("", source.Options{}, input.NewDiagnostics(io.Discard, 5), Env{Bpftrace: fake, Euid: func() int { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	err = src.Run(context.Background(), func(stream.Interval) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "Could not resolve tracepoint") {
		t.Errorf("bpftrace's error: %v", err)
	}
}

func TestDeviceNamesFromDiskstats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "diskstats")
	text := " 254       0 vda 1 2 3 4\n   7       3 loop3 5 6 7 8\n 259  1048576 nvme9n1 0 0\n bad line\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	names := deviceNames(path)
	for num, want := range map[string]string{"266338304": "vda", "7340035": "loop3"} {
		if names[num] != want {
			t.Errorf("device %s is %q, want %s", num, names[num], want)
		}
	}
}

// A real run: O_DIRECT reads of a loop device of the test's own, counted
// by bpftrace per device and by the kernel's /proc/diskstats.
func TestBlockLatencyLive(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "the block tracepoints need root")
	}
	if _, err := exec.LookPath("bpftrace"); err != nil {
		testenv.SkipOrFail(t, "bpftrace not installed (Debian package bpftrace)")
	}
	if _, err := os.Stat("/sys/kernel/tracing/events/block"); err != nil {
		testenv.SkipOrFail(t, "no block tracepoints under /sys/kernel/tracing (mount tracefs): %v", err)
	}
	dev := loopDevice(t)
	name := filepath.Base(dev)
	src, err := Probe().Open(name, source.Options{Interval: 500 * time.Millisecond}, input.NewDiagnostics(io.Discard, 5))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		mu      sync.Mutex
		counted float64
		printed = make(chan struct{}, 1)
	)
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, func(iv stream.Interval) error {
			mu.Lock()
			defer mu.Unlock()
			for _, s := range iv.Series {
				if s.Key != (stream.Key{Event: Event, Instance: name}) {
					t.Errorf("series %s, want %s @%s only", s.Key, Event, name)
				}
				counted += s.Hist.Count()
			}
			select {
			case printed <- struct{}{}:
			default:
			}
			return nil
		})
	}()
	// Reads of one burst, once bpftrace prints (it is attached), then two
	// more prints so that every completion is out.
	waitPrint(t, printed)
	before := completions(t, name)
	directReads(t, dev, 400)
	after := completions(t, name)
	for range 3 {
		waitPrint(t, printed)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if kernel := after - before; counted != kernel || kernel < 400 {
		t.Errorf("bpftrace timed %g requests on %s, the kernel completed %g (400 reads)", counted, name, kernel)
	}
}

func waitPrint(t *testing.T, printed <-chan struct{}) {
	t.Helper()
	select {
	case <-printed:
	case <-time.After(30 * time.Second):
		t.Fatal("bpftrace printed nothing for 30 s")
	}
}

// loopDevice attaches a 16 MiB file of the test as a loop device.
func loopDevice(t *testing.T) string {
	backing := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(backing, make([]byte, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", backing).Output()
	if err != nil {
		testenv.SkipOrFail(t, "losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "--detach", dev).Run() })
	return dev
}

// completions returns the reads and writes the device has completed.
func completions(t *testing.T, name string) float64 {
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 7 && f[2] == name {
			r, _ := strconv.ParseFloat(f[3], 64)
			w, _ := strconv.ParseFloat(f[7], 64)
			return r + w
		}
	}
	t.Fatalf("%s not in /proc/diskstats", name)
	return 0
}

// directReads reads n 4 KiB blocks of dev with O_DIRECT, each a request.
func directReads(t *testing.T, dev string, n int) {
	f, err := os.OpenFile(dev, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw := make([]byte, 8192)
	off := (4096 - int(uintptr(unsafe.Pointer(&raw[0]))%4096)) % 4096
	buf := raw[off : off+4096]
	for i := range n {
		if _, err := f.ReadAt(buf, int64(i%4096)*4096); err != nil {
			t.Fatal(err)
		}
	}
}
