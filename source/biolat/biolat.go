// Package biolat is the bio: source: block-I/O latency histograms per
// device, from the kernel's block tracepoints (a request's issue to its
// completion), through bpftrace. It needs root and bpftrace, and says so
// plainly when either is missing.
package biolat

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/tracehist"
	"github.com/latscope/latscope/stream"
)

// Event is the series' event: with the device as instance, it sits beside
// the host: source's disk.* series.
const Event = "disk.bio"

// mapPrefix starts the names of the bpftrace maps the script prints: one
// histogram per kernel device number, in µs.
const mapPrefix = "@usecs"

// Probe returns the bio: source: "bio:" for every device, "bio:vda,sdb"
// for some.
func Probe() source.Probe {
	return source.Probe{
		Scheme: "bio",
		Description: "block-I/O latency per device (bio: or bio:vda,sdb), issue to completion, from the kernel's block " +
			"tracepoints through bpftrace: needs root and bpftrace",
		Open: func(arg string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
			return open(arg, opts, diag, Env{})
		},
	}
}

// Env is where the source finds its tools and devices (zero: the
// machine's; tests point them elsewhere).
type Env struct {
	// Bpftrace is the bpftrace binary (default: from PATH).
	Bpftrace string
	// Diskstats is /proc/diskstats, which names devices by number.
	Diskstats string
	// Euid is the effective user id (default: the process's).
	Euid func() int
}

func (e Env) orDefaults() Env {
	if e.Diskstats == "" {
		e.Diskstats = "/proc/diskstats"
	}
	if e.Euid == nil {
		e.Euid = os.Geteuid
	}
	return e
}

type bioSource struct {
	devices  []string
	interval time.Duration
	opts     source.Options
	diag     *input.Diagnostics
	env      Env
}

func open(arg string, opts source.Options, diag *input.Diagnostics, env Env) (source.Source, error) {
	env = env.orDefaults()
	if env.Euid() != 0 {
		return nil, errors.New("bio: block-I/O latency needs root (bpftrace attaches to the kernel's block tracepoints): run latscope as root")
	}
	if env.Bpftrace == "" {
		path, err := exec.LookPath("bpftrace")
		if err != nil {
			return nil, errors.New("bio: bpftrace not found (Debian package bpftrace): block-I/O latency is read through it")
		}
		env.Bpftrace = path
	}
	s := &bioSource{interval: opts.Interval, opts: opts, diag: diag, env: env}
	if s.interval <= 0 {
		s.interval = time.Second
	}
	if s.interval%time.Millisecond != 0 {
		return nil, fmt.Errorf("bio: --interval %s: a whole number of milliseconds, please", s.interval)
	}
	for _, d := range strings.Split(arg, ",") {
		if d = strings.TrimSpace(d); d != "" {
			s.devices = append(s.devices, d)
		}
	}
	return s, nil
}

// Name returns the source's name.
func (s *bioSource) Name() string { return "bio:" + strings.Join(s.devices, ",") }

// script times each request from issue to completion per device and
// prints the histograms, with the time, every interval. Completions go to
// one of two maps, switched every interval, and the script prints and
// clears the one just left: with one map, a request that completes
// between the print and the clear would be lost.
func (s *bioSource) script() string {
	return fmt.Sprintf(`BEGIN { @odd = 0; }
tracepoint:block:block_rq_issue { @start[args->dev, args->sector] = nsecs; }
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ {
	$us = (nsecs - @start[args->dev, args->sector]) / 1000;
	if (@odd) { %[1]s_odd[args->dev] = hist($us); } else { %[1]s_even[args->dev] = hist($us); }
	delete(@start[args->dev, args->sector]);
}
interval:ms:%[2]d {
	@odd = 1 - @odd;
	time("%%H:%%M:%%S\n");
	if (@odd) { print(%[1]s_even); clear(%[1]s_even); } else { print(%[1]s_odd); clear(%[1]s_odd); }
}
END { clear(@start); clear(%[1]s_odd); clear(%[1]s_even); clear(@odd); }
`, mapPrefix, s.interval.Milliseconds())
}

// Run runs bpftrace until ctx ends and emits its histograms per device.
func (s *bioSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	cmd := exec.CommandContext(ctx, s.env.Bpftrace, "-q", "-e", s.script())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("bio: starting bpftrace: %w", err)
	}
	opts := s.opts
	opts.Counts, opts.Unit, opts.Date = source.CountsInterval, hist.Microsecond, time.Now()
	// The map name only gives the unit (µs); keep every map the script prints.
	opts.Events = nil
	src, err := tracehist.BpftraceFormat().Open(source.Input{Name: s.Name(), Reader: out, Diag: s.diag}, opts)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	names := deviceNames(s.env.Diskstats)
	runErr := src.Run(ctx, func(iv stream.Interval) error {
		iv.Source = s.Name()
		iv.Series = s.byDevice(iv.Series, names)
		return emit(iv)
	})
	waitErr := cmd.Wait()
	if ctx.Err() != nil {
		return nil // stopped by --duration or Ctrl-C
	}
	if waitErr != nil {
		return fmt.Errorf("bio: bpftrace: %v: %s", waitErr, firstLines(stderr.String(), 3))
	}
	return runErr
}

// byDevice names each histogram's device and keeps the devices asked for.
func (s *bioSource) byDevice(series []stream.SeriesHist, names map[string]string) []stream.SeriesHist {
	var out []stream.SeriesHist
	for _, sh := range series {
		if !strings.HasPrefix(sh.Key.Event, mapPrefix) {
			continue
		}
		dev, ok := names[sh.Key.Instance]
		if !ok {
			dev = sh.Key.Instance // a device that came after the start
		}
		if len(s.devices) > 0 && !slices.Contains(s.devices, dev) {
			continue
		}
		sh.Key = stream.Key{Event: Event, Instance: dev}
		out = append(out, sh)
	}
	return out
}

// deviceNames maps the kernel's device numbers as the block tracepoints
// print them (major << 20 | minor) to names, from /proc/diskstats (none
// when it cannot be read: the numbers stay).
func deviceNames(diskstats string) map[string]string {
	f, err := os.Open(diskstats)
	if err != nil {
		return map[string]string{}
	}
	defer f.Close()
	return parseDeviceNames(f)
}

// parseDeviceNames reads "major minor name ..." lines; others are skipped.
func parseDeviceNames(r io.Reader) map[string]string {
	names := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		major, err1 := strconv.ParseUint(fields[0], 10, 12)
		minor, err2 := strconv.ParseUint(fields[1], 10, 20)
		if err1 == nil && err2 == nil {
			names[strconv.FormatUint(major<<20|minor, 10)] = fields[2]
		}
	}
	return names
}

// firstLines returns the first n non-empty lines of s, joined.
func firstLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		// bpftrace warns when it cannot raise RLIMIT_MEMLOCK: harmless.
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "RLIMIT_MEMLOCK") && len(lines) < n {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "no message"
	}
	return strings.Join(lines, "; ")
}
