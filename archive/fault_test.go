package archive

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// writerEnv makes the test binary a writer subprocess (see
// TestWriterSubprocess) appending to the archive it names.
const writerEnv = "LATSCOPE_ARCHIVE_WRITER_DIR"

// faultSeries is the number of series per interval in the fault tests:
// heavy writes, 200 points per transaction.
const faultSeries = 200

// lastStart returns the newest raw window start (Unix ns) and the number
// of raw windows.
func lastStart(t testing.TB, a *Archive) (last int64, n int) {
	t.Helper()
	sources, err := int64s(ctx, a.db, "SELECT id FROM sources")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range sources {
		if err := eachWindow(ctx, a.db, src, 0, math.MinInt64, math.MaxInt64, noLimit, func(w window) error {
			last, n = max(last, w.start), n+1
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return last, n
}

// TestWriterSubprocess is the writer the kill -9 test starts: it appends
// intervals of faultSeries series after the archive's newest one, printing
// each start once committed, until killed.
func TestWriterSubprocess(t *testing.T) {
	dir := os.Getenv(writerEnv)
	if dir == "" {
		t.Skip("helper process: run by TestKill9DuringWrites") // scripts/testsummary does not list it
	}
	a, err := Open(dir, Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	hs := realHistograms(t)
	last, _ := lastStart(t, a)
	start := time.Unix(0, last).Add(time.Second)
	if last == 0 {
		// Four minutes before an hour: the kills fall before, while and
		// after the first hour is packed.
		start = time.Date(2025, 12, 31, 23, 56, 0, 0, time.UTC)
	}
	for i := 0; ; i++ {
		iv := synthetic("db", start.Add(time.Duration(i)*time.Second), 1, faultSeries, hs[i%len(hs):])[0]
		if err := a.Write(context.Background(), iv); err != nil {
			fmt.Println("write:", err)
			os.Exit(4)
		}
		fmt.Println(iv.Start.UnixNano())
	}
}

// TestKill9DuringWrites kills a writer during heavy writes 20 times in a
// row: each time the archive opens (after an integrity check, since the
// close was not clean), every interval the writer reported committed is
// there (at most the one in flight is lost), and writing resumes.
func TestKill9DuringWrites(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	total := 0
	for round := 0; round < 20; round++ {
		committed := runAndKill(t, dir, 5+rng.IntN(40))
		a, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("round %d: reopening after kill -9: %v", round, err)
		}
		if err := a.IntegrityCheck(context.Background()); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		last, n := lastStart(t, a)
		if last < committed {
			t.Fatalf("round %d: newest interval %d, but %d was reported committed", round, last, committed)
		}
		if n < total {
			t.Fatalf("round %d: %d intervals, %d before", round, n, total)
		}
		got := readAll(t, a, Query{Resolution: Raw, From: time.Unix(0, last)})
		if len(got) != 1 || len(got[0].Series) != faultSeries {
			t.Fatalf("round %d: the newest interval reads back with %d windows", round, len(got))
		}
		total = n
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	blocks := blockCount(t, a)
	if total > 4*60 && blocks == 0 {
		t.Errorf("%d intervals from 23:56 on, but the first hour was not packed", total)
	}
	t.Logf("20 kills: %d intervals of %d series kept, %d hours packed", total, faultSeries, blocks)
}

// runAndKill starts a writer, lets it commit at least n intervals, kills it
// with SIGKILL and returns the newest start it reported committed.
func runAndKill(t *testing.T, dir string, n int) int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterSubprocess$", "-test.count=1")
	cmd.Env = append(os.Environ(), writerEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var committed int64
	sc := bufio.NewScanner(out)
	for seen := 0; seen < n && sc.Scan(); {
		v, err := strconv.ParseInt(strings.TrimSpace(sc.Text()), 10, 64)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("writer: %s", sc.Text())
		}
		committed, seen = v, seen+1
	}
	// Kill while the writer is busy in its next transactions.
	cmd.Process.Signal(syscall.SIGKILL)
	for sc.Scan() { // what it committed before the signal landed
		if v, err := strconv.ParseInt(strings.TrimSpace(sc.Text()), 10, 64); err == nil {
			committed = v
		}
	}
	cmd.Wait()
	if committed == 0 {
		t.Fatal("the writer committed nothing")
	}
	return committed
}

// TestDiskFull fills a 2 MiB tmpfs data directory: the write fails with an
// error naming the directory, nothing is damaged, and writing resumes once
// there is room again.
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipAlways(t, "mounting a small tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.SkipOrFail(t, "mount -t tmpfs failed as root: %v: %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	a, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	written := 0
	var full error
	for i := 0; i < 100000 && full == nil; i++ {
		iv := synthetic("db", t0.Add(time.Duration(i)*time.Second), 1, 50, hs[i%len(hs):])[0]
		if full = a.Write(ctx, iv); full == nil {
			written++
		}
	}
	if full == nil {
		t.Fatal("2 MiB never filled")
	}
	if !strings.Contains(full.Error(), dir) || !strings.Contains(full.Error(), "full") {
		t.Fatalf("the disk-full error %q should name %s and say full", full, dir)
	}
	t.Logf("after %d intervals: %v", written, full)
	if err := a.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	if _, n := lastStart(t, a); n != written {
		t.Fatalf("%d intervals readable, %d written", n, written)
	}
	if out, err := exec.Command("mount", "-o", "remount,size=16m", dir).CombinedOutput(); err != nil {
		t.Fatalf("growing the tmpfs: %v: %s", err, out)
	}
	iv := synthetic("db", t0.Add(time.Duration(written)*time.Second), 1, 50, hs)[0]
	if err := a.Write(ctx, iv); err != nil {
		t.Fatalf("writing after space returned: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, n := lastStart(t, b); n != written+1 {
		t.Fatalf("%d intervals after reopening, want %d", n, written+1)
	}
}
