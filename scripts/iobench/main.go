// Command iobench runs `latscope iotest` and fio side by side on the same
// data file, block size and concurrency (psync, O_DIRECT), alternating runs,
// and compares their medians against the requirements: p50 and p99
// within ±10 % of fio's, IOPS at least 95 % of fio's, CPU per I/O (rusage)
// no higher than fio's.
//
//	go run ./scripts/iobench -out bench-out/iotest-vs-fio.json
//
// It exits non-zero on harness errors only; a failed requirement is shown
// as FAIL in the table (and exits 3 with -strict).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/latscope/latscope/internal/bytesize"
	"github.com/latscope/latscope/scripts/benchkit"
)

func main() {
	os.Exit(benchkit.Main("iobench", os.Args[1:], os.Stdout, os.Stderr, parseFlags, bench))
}

// config is the parsed command line.
type config struct {
	benchkit.Options
	dir, file   string
	size        int64
	bs          int
	concurrency []int
	// engine is fio's ioengine: psync sweeps -concurrency; io_uring and
	// libaio sweep -iodepth at one -concurrency, latscope on io_uring.
	engine        string
	iodepth       []int
	runs          int
	duration      time.Duration
	cpus          string
	latscope, fio string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{Options: benchkit.NewOptions()}
	fs := benchkit.NewFlagSet("iobench", "latscope iotest vs fio on the same file (psync, O_DIRECT, random reads).", stderr)
	c.Define(fs, "iotest-vs-fio.json", "the raw runs and the summary", "a requirement")
	size := fs.String("size", "1g", "data file size (K, M, G are powers of 1024)")
	bs := fs.String("bs", "8k", "block size of each read")
	conc := fs.String("concurrency", "1,4", "comma-separated reader counts (fio numjobs); with -engine io_uring or libaio, one count")
	fs.StringVar(&c.engine, "engine", "psync", "fio's ioengine: psync (latscope --engine psync), io_uring or libaio (both against latscope --engine io_uring)")
	depth := fs.String("iodepth", "1,8,32", "comma-separated I/O depths per reader swept with -engine io_uring or libaio")
	fs.StringVar(&c.dir, "dir", filepath.Join(c.Repo, "bench-out"), "directory for the temporary data file (must be on the storage to test, not tmpfs)")
	fs.StringVar(&c.file, "file", "", "use this data file instead: reused when it holds at least -size bytes, created (and kept) when missing")
	fs.IntVar(&c.runs, "runs", 3, "runs per tool and concurrency (medians are compared)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured time of each run (no warm-up)")
	fs.StringVar(&c.cpus, "cpus", "", "run both tools under taskset -c LIST (e.g. 0 or 0,1)")
	fs.StringVar(&c.latscope, "latscope", "", "latscope binary (default: bin/latscope, else built from this repository)")
	fs.StringVar(&c.fio, "fio", "fio", "fio binary")
	if err := benchkit.Parse(fs, args); err != nil {
		return c, err
	}
	var err error
	if c.size, err = bytesize.Parse(*size); err != nil || c.size <= 0 {
		return c, fmt.Errorf("-size %q: want a positive byte count such as 1g", *size)
	}
	b, err := bytesize.Parse(*bs)
	if err != nil || b < 512 || b%512 != 0 || b > 64<<20 {
		return c, fmt.Errorf("-bs %q: want a multiple of 512 up to 64m (O_DIRECT)", *bs)
	}
	c.bs = int(b)
	if c.size < b {
		return c, fmt.Errorf("-size %s is smaller than one block of %s", *size, *bs)
	}
	if c.concurrency, err = benchkit.ParseInts(*conc, 1, 1024); err != nil {
		return c, fmt.Errorf("-concurrency %q: %w", *conc, err)
	}
	if c.iodepth, err = benchkit.ParseInts(*depth, 1, 1024); err != nil {
		return c, fmt.Errorf("-iodepth %q: %w", *depth, err)
	}
	switch {
	case c.engine == "psync":
	case c.engine != "io_uring" && c.engine != "libaio":
		return c, fmt.Errorf("-engine %q: want psync, io_uring or libaio", c.engine)
	case len(c.concurrency) != 1:
		return c, fmt.Errorf("-engine %s sweeps -iodepth: give one -concurrency, not %q", c.engine, *conc)
	}
	if c.runs < 1 || c.duration < time.Second {
		return c, errors.New("-runs must be at least 1 and -duration at least 1s")
	}
	return c, nil
}

// report is the JSON written to -out.
type report struct {
	Machine   machineFacts `json:"machine"`
	File      string       `json:"file"`
	SizeBytes int64        `json:"size_bytes"`
	BlockSize int          `json:"bs"`
	// Engine is fio's ioengine; with io_uring or libaio the runs' keys are
	// I/O depths at Jobs readers.
	Engine      string       `json:"engine"`
	Jobs        int          `json:"jobs,omitempty"`
	DurationS   float64      `json:"duration_s"`
	RunsPerTool int          `json:"runs_per_tool"`
	Runs        []runResult  `json:"runs"`
	Summary     []comparison `json:"summary"`
	Pass        bool         `json:"pass"`
}

// bench prepares the tools and the data file, runs everything, writes the
// table and the JSON and reports whether every requirement passed. The
// data file it created is removed however it ends.
func bench(ctx context.Context, c config, stdout, stderr io.Writer) (bool, error) {
	fio, err := exec.LookPath(c.fio)
	if err != nil {
		return false, fmt.Errorf("fio not found (%v): install it (apt-get install fio)", err)
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return false, err
	}
	scratch, err := os.MkdirTemp(c.dir, "iobench-")
	if err != nil {
		return false, fmt.Errorf("temporary directory in %s: %w", c.dir, err)
	}
	defer os.RemoveAll(scratch)
	latscope, err := benchkit.FindLatscope(ctx, c.latscope, true, c.Repo, scratch, stderr)
	if err != nil {
		return false, err
	}
	r := runner{fio: fio, latscope: latscope, size: c.size, bs: c.bs, duration: c.duration, engine: c.engine}
	if c.queued() {
		r.jobs = c.concurrency[0]
	}
	if c.cpus != "" {
		r.pin = []string{"taskset", "-c", c.cpus}
	}
	if r.file, err = dataFile(ctx, c, scratch, stderr); err != nil {
		return false, err
	}
	rep := report{
		Machine: gatherMachine(ctx, filepath.Dir(r.file), fio, latscope, c.cpus),
		File:    r.file, SizeBytes: c.size, BlockSize: c.bs, Engine: c.engine, Jobs: r.jobs, DurationS: c.duration.Seconds(), RunsPerTool: c.runs,
	}
	writeHeader(stdout, rep)
	if rep.Runs, err = runAll(ctx, r, c, stderr); err != nil {
		return false, err
	}
	rep.Summary, rep.Pass = benchkit.Judge(c.loads(), rep.Runs, compare)
	if err := writeTable(stdout, rep.Summary, c.loadName()); err != nil {
		return false, err
	}
	return rep.Pass, benchkit.SaveJSON(stdout, c.Out, "raw runs and summary", rep)
}

// runAll runs both tools at each concurrency, alternating which goes first
// (fio, latscope; latscope, fio; ...) so that a drift in the machine's load
// does not favour one of them.
func runAll(ctx context.Context, r runner, c config, stderr io.Writer) ([]runResult, error) {
	return benchkit.Sweep(ctx, c.loads(), c.runs, []string{toolFio, toolLatscope}, func(s benchkit.Step[int]) (runResult, error) {
		res, err := r.measure(ctx, s.Tool, s.Key)
		if err != nil {
			return res, err
		}
		res.Run, res.Sequence = s.Run, s.Seq
		fmt.Fprintf(stderr, "[%2d/%d] %-8s %s=%d run %d: %6.0f IOPS  p50 %6.1f µs  p99 %7.1f µs  p99.9 %7.1f µs  CPU/IO %5.2f µs\n",
			res.Sequence, s.Total, s.Tool, c.loadName()[:1], s.Key, res.Run, res.IOPS, res.P50US, res.P99US, res.P999US, res.CPUPerIOUS)
		return res, nil
	})
}

// queued reports whether the runs sweep I/O depths (fio io_uring or
// libaio against latscope's io_uring) rather than reader counts (psync).
func (c config) queued() bool { return c.engine != "psync" }

// loads are the swept keys: I/O depths or reader counts.
func (c config) loads() []int {
	if c.queued() {
		return c.iodepth
	}
	return c.concurrency
}

// loadName names the swept key in the table.
func (c config) loadName() string {
	if c.queued() {
		return "iodepth"
	}
	return "concurrency"
}

func writeHeader(w io.Writer, rep report) {
	m, s := rep.Machine, rep.Machine.Storage
	engine := "psync"
	if rep.Engine != "psync" && rep.Engine != "" {
		engine = fmt.Sprintf("fio %s vs latscope io_uring, %d reader(s)", rep.Engine, rep.Jobs)
	}
	fmt.Fprintf(w, "latscope iotest vs fio: %s random reads, %s, O_DIRECT, %s file, %s per run, %d runs each, no warm-up\n",
		bytesize.Format(int64(rep.BlockSize)), engine, bytesize.Format(rep.SizeBytes), time.Duration(rep.DurationS*float64(time.Second)), rep.RunsPerTool)
	fmt.Fprintf(w, "machine: %s; %s; latscope %s\n", m.Summary(), m.Fio, m.Latscope)
	dev := s.Device
	if s.Partition != "" {
		dev = s.Partition + " on " + s.Device
	}
	fmt.Fprintf(w, "storage: %s (%s", s.Dir, s.Filesystem)
	if dev != "" {
		fmt.Fprintf(w, " on %s, %s, rotational=%s, scheduler %s", dev, strings.TrimSpace(s.Vendor+" "+s.Model), s.Rotational, s.Scheduler)
	}
	fmt.Fprintln(w, ")")
	if s.Note != "" {
		fmt.Fprintf(w, "note: %s\n", s.Note)
	}
	if m.Pinning != "" {
		fmt.Fprintf(w, "both tools pinned: taskset -c %s\n", m.Pinning)
	}
	fmt.Fprintln(w)
}
