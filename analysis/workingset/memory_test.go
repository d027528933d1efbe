package workingset

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

// childEnv makes the test binary a child that counts a synthetic workload
// ("READS,DISTINCT") and reports its figures and peak RSS: the memory bound
// is measured in a process that does nothing else.
const childEnv = "LATSCOPE_WORKINGSET_CHILD"

// maxRSS is the must-show bound of issue 18: 100 M reads over 20 M
// distinct blocks counted in at most 64 MB resident.
const maxRSS = 64 << 20

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(countChild(spec))
	}
	os.Exit(m.Run())
}

// childReport is what the child prints.
type childReport struct {
	Result   *Result `json:"result"`
	Seconds  float64 `json:"seconds"`
	PeakRSS  int64   `json:"peak_rss"`
	Distinct uint64  `json:"distinct"`
}

func countChild(spec string) int {
	var reads, distinct uint64
	if _, err := fmt.Sscanf(spec, "%d,%d", &reads, &distinct); err != nil || distinct == 0 || reads%distinct != 0 {
		fmt.Fprintf(os.Stderr, "%s=%q: want READS,DISTINCT with READS a multiple of DISTINCT\n", childEnv, spec)
		return 2
	}
	start := time.Now()
	c := NewCounter(Options{})
	syntheticReads(reads, distinct, c.Add)
	rep := childReport{Result: c.Result(time.Millisecond), Seconds: time.Since(start).Seconds(), Distinct: distinct}
	rss, err := peakRSS()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rep.PeakRSS = rss
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// peakRSS reads the process's peak resident set (VmHWM), bytes.
func peakRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/self/status: no VmHWM")
}

// syntheticReads issues reads single-block reads of distinct blocks, each
// block read reads/distinct times, in a scrambled order: read i reads block
// index (i·a mod reads) mod distinct, a permutation since a is coprime with
// reads (a prime other than 2 and 5, and reads is a round number). Blocks
// spread over 8 files; 70 % of reads take 64-127 µs (cache-like), 30 %
// 4096-8191 µs (media-like), by a hash of i.
func syntheticReads(reads, distinct uint64, add func(stream.BlockRead)) {
	const a = 2654435761
	r := stream.BlockRead{Blocks: 1, Event: "db file sequential read"}
	for i := range reads {
		idx := (i * (a % reads)) % reads % distinct
		h := mix(i ^ 0x5eed)
		r.File, r.Block = uint32(idx%8)+1, idx/8
		if h%10 < 7 {
			r.Micros = 64 + int64(h>>32)%64
		} else {
			r.Micros = 4096 + int64(h>>32)%4096
		}
		add(r)
	}
}

// TestMemoryBounded is issue 18's must-show: 100 M reads over 20 M
// distinct blocks in at most 64 MB RSS, the estimates within three
// standard errors. It takes about 10 s on two shared cores; with -short,
// the same workload at a tenth of the size.
func TestMemoryBounded(t *testing.T) {
	reads, distinct := uint64(100_000_000), uint64(20_000_000)
	if testing.Short() {
		reads, distinct = 10_000_000, 2_000_000
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d", childEnv, reads, distinct))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	var rep childReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("child's report %q: %v", out, err)
	}
	r := rep.Result
	t.Logf("%d reads over %d distinct blocks: %.1f s, peak RSS %.1f MiB; estimated %d distinct (%+.3f %%)",
		reads, distinct, rep.Seconds, float64(rep.PeakRSS)/(1<<20), r.Total.DistinctBlocks,
		100*(float64(r.Total.DistinctBlocks)/float64(distinct)-1))
	if rep.PeakRSS > maxRSS {
		t.Errorf("peak RSS %d bytes, over the %d bound", rep.PeakRSS, maxRSS)
	}
	if r.Exact || r.RelativeError != relativeError(DefaultPrecision) {
		t.Fatalf("exact %v, relative error %g", r.Exact, r.RelativeError)
	}
	if r.Total.Reads != int64(reads) || r.Total.ReadCalls != int64(reads) {
		t.Errorf("reads %d, calls %d, want %d", r.Total.Reads, r.Total.ReadCalls, reads)
	}
	within := func(what string, got int64, want float64) {
		t.Helper()
		if d := math.Abs(float64(got)-want) / want; d > 3*r.RelativeError {
			t.Errorf("%s: %d distinct, want %.0f within 3σ (%.2f %%): off by %.2f %%", what, got, want, 300*r.RelativeError, 100*d)
		}
	}
	within("total", r.Total.DistinctBlocks, float64(distinct))
	for _, f := range r.Files {
		within(f.Name, f.DistinctBlocks, float64(distinct/8))
	}
	// Each block is read 5 (or reads/distinct) times, each read cache-like
	// with chance 0.7: a block counts in the cache-like class unless all
	// its reads were slow, in the media-like one unless all were fast.
	k := float64(reads / distinct)
	within("cache-like", r.Classes[0].DistinctBlocks, float64(distinct)*(1-math.Pow(0.3, k)))
	within("media-like", r.Classes[1].DistinctBlocks, float64(distinct)*(1-math.Pow(0.7, k)))
}
