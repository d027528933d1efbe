package linuxaudit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// benchLogBytes is the size of the generated log the benchmark reads.
const benchLogBytes = 128 << 20

var (
	benchOnce sync.Once
	benchLog  []byte
	benchPath string
)

var stampRE = regexp.MustCompile(`msg=audit\((\d+)\.(\d+):(\d+)\)`)

// generatedLog repeats the repository's real audit logs' records until
// benchLogBytes, each repetition with new serials (one per original
// event) and a time 0.1 s later, so that events stay joined and the open
// set holds about 2 s of them, as on a busy host. It is written to a file
// once for ausearch.
func generatedLog(b *testing.B) ([]byte, string) {
	benchOnce.Do(func() {
		var records [][]byte
		for _, rel := range []string{
			"audit/linux-audit/elastic-go-libaudit/normal.log",
			"audit/linux-audit/elastic-go-libaudit/audit-rhel7.log",
			"audit/linux-audit/elastic-beats/auditbeat_testdata_sudo.log",
			"audit/linux-audit/elastic-beats/filebeat_auditd_audit-cent7-node.log",
		} {
			data, err := os.ReadFile(testenv.DataFile(b, rel))
			if err != nil {
				b.Fatal(err)
			}
			for _, line := range bytes.Split(data, []byte("\n")) {
				if stampRE.Match(line) {
					records = append(records, line)
				}
			}
		}
		var out bytes.Buffer
		out.Grow(benchLogBytes + 64<<10)
		serial := uint64(1)
		for rep := 0; out.Len() < benchLogBytes; rep++ {
			sec := 1700000000 + rep/10
			msec := (rep % 10) * 100
			serials := map[string]uint64{}
			for _, line := range records {
				m := stampRE.FindSubmatchIndex(line)
				orig := string(line[m[2]:m[7]])
				s, ok := serials[orig]
				if !ok {
					s, serial = serial, serial+1
					serials[orig] = s
				}
				out.Write(line[:m[0]])
				fmt.Fprintf(&out, "msg=audit(%d.%03d:%d)", sec, msec, s)
				out.Write(line[m[1]:])
				out.WriteByte('\n')
			}
		}
		benchLog = out.Bytes()
		benchPath = filepath.Join(os.TempDir(), "latscope-bench-audit.log")
		if err := os.WriteFile(benchPath, benchLog, 0o600); err != nil {
			b.Fatal(err)
		}
	})
	return benchLog, benchPath
}

// BenchmarkRead reads and joins the generated log on one core (run with
// -cpu 1); it reports MB/s (wall and CPU time), allocations per record
// and, with ausearch installed and LATSCOPE_BENCH_AUSEARCH=1, ausearch -i's
// MB/s of CPU time on the same file.
func BenchmarkRead(b *testing.B) {
	data, path := generatedLog(b)
	records := bytes.Count(data, []byte("msg=audit("))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range b.N {
		n := 0
		err := Read(context.Background(), "bench", bytes.NewReader(data), input.NewDiagnostics(nil, 0), func(e Event) error {
			n += len(e.Records)
			return nil
		})
		if err != nil || n != records {
			b.Fatalf("%d of %d records: %v", n, records, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(records), "records/op")
	// The machine is shared: the CPU time the reading took says more about
	// one core's speed than the wall clock.
	b.ReportMetric(float64(len(data))*float64(b.N)/1e6/(cpuTime()-cpu0).Seconds(), "cpu-MB/s")
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(records*b.N), "allocs/record")
	if mbps, ok := ausearchSpeed(path, len(data)); ok {
		b.ReportMetric(mbps, "ausearch-cpu-MB/s")
	}
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var (
	ausearchOnce sync.Once
	ausearchMBps float64
)

// ausearchSpeed times `ausearch -i -if FILE` once (output discarded), in
// MB per second of its CPU time, as cpu-MB/s is for Read.
func ausearchSpeed(path string, size int) (float64, bool) {
	bin, err := exec.LookPath("ausearch")
	if err != nil || os.Getenv("LATSCOPE_BENCH_AUSEARCH") == "" {
		return 0, false
	}
	ausearchOnce.Do(func() {
		cmd := exec.Command(bin, "-i", "-if", path)
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		if err := cmd.Run(); err != nil {
			return
		}
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		ausearchMBps = float64(size) / 1e6 / cpu.Seconds()
	})
	return ausearchMBps, ausearchMBps > 0
}
