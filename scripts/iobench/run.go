package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// runner runs the two tools on the same file, block size and duration.
type runner struct {
	fio, latscope string
	file          string
	size          int64
	bs            int
	duration      time.Duration
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
func (r runner) fioArgs(n int) []string {
	return append(r.prefix(r.fio),
		"--name=iotest",
		"--filename="+r.file,
		"--size="+strconv.FormatInt(r.size, 10),
		"--bs="+strconv.Itoa(r.bs),
		"--rw=randread",
		"--ioengine=psync",
		"--direct=1",
		"--numjobs="+strconv.Itoa(n),
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
	return append(r.prefix(r.latscope), "iotest", r.file,
		"--size", strconv.FormatInt(r.size, 10),
		"--bs", strconv.Itoa(r.bs),
		"--concurrency", strconv.Itoa(n),
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
	p, err := execute(ctx, argv, r.duration+2*time.Minute)
	res.Stderr = tail(p.stderr, 20)
	if err != nil {
		return res, fmt.Errorf("%s: %w%s", strings.Join(argv, " "), err, indent(res.Stderr))
	}
	var m measurement
	if tool == toolFio {
		m, _, err = parseFio(p.stdout)
	} else {
		m, err = parseLatscope(p.stdout, n, r.bs)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w%s", strings.Join(argv, " "), err, indent(res.Stderr))
	}
	res.measurement = m
	res.Raw, _ = jsonStart(p.stdout)
	res.CPUUserS, res.CPUSysS = p.user.Seconds(), p.sys.Seconds()
	res.CPUPerIOUS = float64(p.user+p.sys) / 1e3 / float64(m.Ops)
	res.WallS = p.wall.Seconds()
	res.MaxRSSKB = p.maxRSSKB
	return res, nil
}

// process is what a finished child left.
type process struct {
	stdout, stderr []byte
	wall           time.Duration
	user, sys      time.Duration
	maxRSSKB       int64
}

// execute runs argv to completion within timeout. Cancelling ctx (Ctrl-C)
// interrupts the child, as a terminal would, and kills it if it lingers.
func execute(ctx context.Context, argv []string, timeout time.Duration) (process, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	p := process{stdout: stdout.Bytes(), stderr: stderr.Bytes(), wall: time.Since(start)}
	if cmd.ProcessState != nil {
		p.user, p.sys, p.maxRSSKB = childCPU(cmd.ProcessState)
	}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return p, fmt.Errorf("still running after %s: killed", timeout)
	case ctx.Err() != nil:
		return p, fmt.Errorf("interrupted: %w", ctx.Err())
	case err != nil:
		return p, err
	}
	return p, nil
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "\n    " + strings.ReplaceAll(s, "\n", "\n    ")
}
