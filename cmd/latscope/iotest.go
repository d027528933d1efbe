package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
	"github.com/latscope/latscope/internal/bytesize"
	"github.com/latscope/latscope/probe/iotest"
)

// iotestFlags are `latscope iotest`'s own flags.
type iotestFlags struct {
	bs, size             string
	concurrency          int
	steps                []int
	engine               string
	iodepth              []int
	rates                []float64
	duration, warmup     time.Duration
	interval             time.Duration
	write, filePerReader bool
	format, output       string
	record               string
	style                mapStyleFlags
	plain                bool
}

func newIOTestCommand(env environment) *cobra.Command {
	var f iotestFlags
	cmd := &cobra.Command{
		Use:   "iotest [PATH]",
		Short: "Measure storage latency from one reader to saturation (CALIBRATE_IO done right)",
		Long: `Measure storage latency with random reads, every read timed, and show it as a live
heat map, then report IOPS, MB/s, mean, p50/p90/p99/p99.9 and max per load step, the
saturation knee, a fitted scalability model, the latency modes (cache vs media) and
warnings when results look too good to be true.

PATH is a directory (a scratch file of --size is created there and removed afterwards,
also on Ctrl-C), an existing file or a block device (both only ever read). Reads are
O_DIRECT, so the page cache is bypassed; where a filesystem refuses O_DIRECT the test
says so and reads through the page cache. Writes happen only with --write, only on
the scratch file, with O_DIRECT|O_DSYNC.

Load is a closed loop of N concurrent readers (--concurrency N, or a sweep with
--steps 1,2,4,8), or an open loop at fixed arrival rates (--rate IOPS[,IOPS...],
Poisson arrivals) whose latency counts from each I/O's intended start, so that a slow
I/O cannot hide the ones queued behind it (coordinated omission).

--engine io_uring gives each reader its own io_uring with --iodepth I/Os in flight (a new
one submitted as each completes), as fio --ioengine=io_uring --iodepth N does; latency is
fio's "lat", submission to completion. A list (--iodepth 1,2,4,8,16,32) sweeps the depth.

The report goes to stdout (--format json for machines); -o FILE.html writes one page
with the report, a latency-vs-IOPS chart and the heat maps (steps marked), -o FILE.svg|.png
the heat maps, -o FILE.json the report, --record FILE.lsr the latency stream.`,
		Example: `  latscope iotest /u01/oradata                          # 4 readers, 30 s
  latscope iotest /u01/oradata --steps 1,2,4,8,16,32 --duration 20s -o sweep.html
  latscope iotest /dev/nvme0n1 --concurrency 8 --format json
  latscope iotest . --rate 500,1000,2000,4000 --duration 15s
  latscope iotest /var/tmp --size 8G --write --concurrency 1       # commit-like writes
  latscope iotest /u01/oradata --engine io_uring --iodepth 1,2,4,8,16,32 --concurrency 1 -o depth.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.config(env, cmd, args)
			if err != nil {
				return err
			}
			return driver.IOTest(cmd.Context(), c)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.bs, "bs", "8k", "block size of each read (a multiple of 512: 8k, 16k, 1m)")
	fl.StringVar(&f.size, "size", "1g", "scratch file size, the working set (grow it past any cache); for a file or device: read only its first SIZE bytes")
	fl.IntVarP(&f.concurrency, "concurrency", "c", 0, "concurrent readers of a single step (default 4); with --rate, the most I/Os in flight (default 64)")
	fl.IntSliceVar(&f.steps, "steps", nil, "sweep: run one step per reader count, e.g. 1,2,4,8,16,32")
	fl.StringVar(&f.engine, "engine", iotest.EnginePsync, "how each reader issues I/Os: psync (one pread at a time) or io_uring (--iodepth in flight)")
	fl.IntSliceVar(&f.iodepth, "iodepth", nil, "io_uring: I/Os each reader keeps in flight (default 1); a list sweeps it, e.g. 1,2,4,8,16,32")
	fl.Float64SliceVar(&f.rates, "rate", nil, "open loop: I/Os per second with Poisson arrivals, one step per rate, e.g. 1000,2000")
	fl.DurationVar(&f.duration, "duration", 30*time.Second, "measured time of each step (after the warm-up)")
	fl.DurationVar(&f.duration, "step-duration", 30*time.Second, "same as --duration")
	fl.DurationVar(&f.warmup, "warmup", 2*time.Second, "unmeasured run before each step")
	fl.DurationVar(&f.interval, "interval", time.Second, "heat-map column width: one latency histogram per interval")
	fl.BoolVar(&f.write, "write", false, "random O_DIRECT|O_DSYNC writes instead of reads (scratch file only)")
	fl.BoolVar(&f.filePerReader, "file-per-reader", false, "give each reader its own scratch file (--size is split among them)")
	fl.StringVar(&f.format, "format", "table", "report on stdout: table or json")
	fl.StringVarP(&f.output, "output", "o", "", "write the report page with the heat maps (.html), the heat maps (.svg, .png) or the report (.json, .txt)")
	fl.StringVar(&f.record, "record", "", "also save the latency stream as a latscope recording (FILE.lsr)")
	f.style.register(cmd, "heat-map colour scale: linear or log")
	fl.BoolVar(&f.plain, "plain", false, "no live heat map: progress on stderr, then the report")
	return cmd
}

// config maps the flags onto the driver's configuration.
func (f *iotestFlags) config(env environment, cmd *cobra.Command, args []string) (driver.IOTestConfig, error) {
	c := driver.IOTestConfig{
		Config: driver.Config{Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr, StdoutTTY: env.stdoutTTY, StderrTTY: env.stderrTTY},
		Format: f.format, Output: f.output, Record: f.record, Plain: f.plain,
	}
	style, err := loadTestOutputFlags(f.format, f.style)
	if err != nil {
		return c, err
	}
	c.MapStyle = style
	bs, err := bytesize.Parse(f.bs)
	if err != nil {
		return c, usagef("--bs: %v", err)
	}
	size, err := bytesize.Parse(f.size)
	if err != nil {
		return c, usagef("--size: %v", err)
	}
	if bs > 1<<30 {
		return c, usagef("--bs %s is absurd for a latency test", f.bs)
	}
	t := iotest.Config{
		BlockSize: int(bs), StepDuration: f.duration, Warmup: f.warmup, Interval: f.interval,
		Write: f.write, FilePerReader: f.filePerReader, Rates: f.rates,
		Engine: f.engine, IODepths: f.iodepth,
	}
	if len(args) == 1 {
		t.Path = args[0]
	}
	// --size's default is for scratch files; an existing file or device is
	// read whole unless --size is given.
	if cmd.Flags().Changed("size") || iotest.IsDir(t.Path) {
		t.Size = size
	}
	if size == 0 && cmd.Flags().Changed("size") {
		return c, usagef("--size must be more than 0")
	}
	switch {
	case len(f.steps) > 0 && f.concurrency > 0 && len(f.rates) == 0:
		return c, usagef("give either --concurrency N or --steps N,N,...")
	case len(f.steps) > 0 && len(f.rates) > 0:
		return c, usagef("--steps sweeps reader counts, --rate sweeps arrival rates: give one of them")
	case len(f.rates) > 0:
		t.Workers = f.concurrency
	case len(f.steps) > 0:
		t.Steps = f.steps
	case f.concurrency != 0:
		t.Steps = []int{f.concurrency}
	}
	if f.duration <= 0 {
		return c, usagef("--duration must be positive")
	}
	if f.warmup < 0 || f.interval <= 0 {
		return c, usagef("--warmup must not be negative and --interval must be positive")
	}
	c.Test = t
	return c, nil
}

// loadTestOutputFlags checks a load test's --format (table or json) and
// its heat maps' --scale and --rows-per-octave.
func loadTestOutputFlags(format string, style mapStyleFlags) (driver.MapStyle, error) {
	switch format {
	case "table", "json":
	default:
		return driver.MapStyle{}, usagef("--format %q: want table or json", format)
	}
	return style.parse()
}
