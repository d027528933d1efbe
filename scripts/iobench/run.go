package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/scripts/benchkit"
)

// runner runs the two tools on the same file, block size and duration.
type runner struct {
	fio, latscope string
	file          string
	size          int64
	bs            int
	duration      time.Duration
	// engine is fio's ioengine; jobs, when set, is the reader count of a
	// run whose key is the I/O depth (io_uring, libaio).
	engine string
	jobs   int
	// pin prefixes both commands (taskset -c LIST) when CPUs are given.
	pin []string
}

// fioArgs is fio's command at concurrency n: numjobs=n synchronous readers
// (psync) in threads, like latscope's n goroutines, no ramp time, total
// latency percentiles (lat, not clat: latscope times the whole pread).
//
// randrepeat=0 and norandommap make fio draw offsets as latscope does:
// uniformly, with repeats, from a fresh seed each run. fio's defaults would
// replay the same offset sequence every run and never reread a block within
// a pass, which a host or device cache could reward on the second run.
//
// With an asynchronous engine n is the I/O depth of each of r.jobs
// readers; fio's io_uring then issues IORING_OP_READ from a plain ring, as
// latscope does (no SQ polling, no fixed buffers or files).
func (r runner) fioArgs(n int) []string {
	engine := []string{"--ioengine=psync", "--numjobs=" + strconv.Itoa(n)}
	if r.jobs > 0 {
		engine = []string{"--ioengine=" + r.engine, "--iodepth=" + strconv.Itoa(n), "--numjobs=" + strconv.Itoa(r.jobs)}
	}
	args := append(r.prefix(r.fio),
		"--name=iotest",
		"--filename="+r.file,
		"--size="+strconv.FormatInt(r.size, 10),
		"--bs="+strconv.Itoa(r.bs),
		"--rw=randread",
		"--direct=1",
	)
	args = append(args, engine...)
	return append(args,
		"--thread",
		"--group_reporting",
		"--time_based",
		"--runtime="+strconv.FormatInt(r.duration.Milliseconds(), 10)+"ms",
		"--ramp_time=0",
		"--randrepeat=0",
		"--norandommap",
		"--lat_percentiles=1",
		"--percentile_list=50:90:99:99.9",
		"--output-format=json",
	)
}

// latscopeArgs is latscope's command at concurrency n, also without
// warm-up, so that its whole process's CPU time matches its measured I/Os.
func (r runner) latscopeArgs(n int) []string {
	load := []string{"--concurrency", strconv.Itoa(n)}
	if r.jobs > 0 {
		load = []string{"--engine", "io_uring", "--iodepth", strconv.Itoa(n), "--concurrency", strconv.Itoa(r.jobs)}
	}
	args := append(r.prefix(r.latscope), "iotest", r.file,
		"--size", strconv.FormatInt(r.size, 10),
		"--bs", strconv.Itoa(r.bs),
	)
	return append(append(args, load...),
		"--duration", r.duration.String(),
		"--warmup", "0s",
		"--format", "json",
		"--plain",
	)
}

func (r runner) prefix(tool string) []string {
	return append(append([]string(nil), r.pin...), tool)
}

// measure runs one tool once at concurrency n.
func (r runner) measure(ctx context.Context, tool string, n int) (runResult, error) {
	argv := r.fioArgs(n)
	if tool == toolLatscope {
		argv = r.latscopeArgs(n)
	}
	res := runResult{Tool: tool, Concurrency: n, Command: argv}
	p, err := benchkit.Run(ctx, argv, r.duration+2*time.Minute)
	res.Stderr = benchkit.Tail(p.Stderr, 20)
	if err != nil {
		return res, fmt.Errorf("%s: %w%s", strings.Join(argv, " "), err, benchkit.Indent(res.Stderr))
	}
	var m measurement
	if tool == toolFio {
		m, _, err = parseFio(p.Stdout)
	} else {
		m, err = parseLatscope(p.Stdout, n*max(r.jobs, 1), r.bs)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w%s", strings.Join(argv, " "), err, benchkit.Indent(res.Stderr))
	}
	res.measurement = m
	res.Raw, _ = benchkit.JSONStart(p.Stdout)
	res.CPUUserS, res.CPUSysS = p.User.Seconds(), p.Sys.Seconds()
	res.CPUPerIOUS = float64(p.CPU()) / 1e3 / float64(m.Ops)
	res.WallS = p.Wall.Seconds()
	res.MaxRSSKB = p.MaxRSSKB
	return res, nil
}
