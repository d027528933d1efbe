// Package host is the host: source: CPU, pressure stall information,
// memory and paging, block devices, network interfaces, TCP retransmits
// and load, sampled from /proc and /sys every --interval with sar's and
// iostat -x's formulas, as mean series with quantities (docs/host.md).
package host

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Scheme is the source's name on the command line: host:, host:disk,cpu.
const Scheme = "host"

// DefaultInterval is the sampling interval without --interval.
const DefaultInterval = time.Second

// groupNames are the parts of host: a SOURCE may name, in series order.
var groupNames = []string{"cpu", "disk", "net", "mem", "psi", "load"}

// Probe is the host: source for the opener.
func Probe() source.Probe {
	return source.Probe{
		Scheme: Scheme,
		Description: "host: samples this machine every --interval (default 1s) from /proc and /sys: " +
			"host:cpu, host:disk, host:net, host:mem, host:psi, host:load or a comma list (host:disk,cpu); host: is all",
		Open: func(arg string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
			return Open(arg, Config{Interval: opts.Interval, Diag: diag})
		},
	}
}

// Config shapes a host: source. Zero values take the defaults.
type Config struct {
	Interval time.Duration
	// ProcDir and SysDir are where /proc and /sys are (tests read
	// captures).
	ProcDir, SysDir string
	// Hostname names the source (default: this machine's).
	Hostname string
	Diag     *input.Diagnostics
}

// Open returns the source of the groups listed in arg ("": all).
func Open(arg string, c Config) (*Source, error) {
	g, err := parseGroups(arg)
	if err != nil {
		return nil, err
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.ProcDir == "" {
		c.ProcDir = "/proc"
	}
	if c.SysDir == "" {
		c.SysDir = "/sys"
	}
	if c.Hostname == "" {
		if c.Hostname, err = os.Hostname(); err != nil {
			return nil, fmt.Errorf("host: the host name: %w", err)
		}
	}
	if _, err := os.Stat(c.ProcDir + "/stat"); err != nil {
		return nil, fmt.Errorf("host: needs Linux's /proc: %w", err)
	}
	return &Source{cfg: c, groups: g, name: Scheme + ":" + c.Hostname}, nil
}

// parseGroups reads "", "disk" or "disk,cpu".
func parseGroups(arg string) (groups, error) {
	if arg == "" {
		return groups{cpu: true, disk: true, net: true, mem: true, psi: true, load: true}, nil
	}
	var g groups
	flags := map[string]*bool{"cpu": &g.cpu, "disk": &g.disk, "net": &g.net, "mem": &g.mem, "psi": &g.psi, "load": &g.load}
	for _, name := range strings.Split(arg, ",") {
		on, ok := flags[strings.TrimSpace(name)]
		switch {
		case !ok && strings.TrimSpace(name) == "bio":
			// Latency histograms need tracing, not /proc: a source of their own.
			return groups{}, fmt.Errorf("host:%s: block-I/O latency histograms are the bio: source (bio: or bio:vda; root and bpftrace), given beside host:", arg)
		case !ok:
			return groups{}, fmt.Errorf("host:%s: unknown part %q (known: %s; host: alone is all)", arg, name, strings.Join(groupNames, ", "))
		}
		*on = true
	}
	return g, nil
}

// Source samples the host until its context ends.
type Source struct {
	cfg    Config
	groups groups
	name   string
	warn   *input.OnceWarnings // a file that cannot be read, once per file
}

// Name is "host:" and the host name, the Interval.Source of every window.
func (s *Source) Name() string { return s.name }

// Run samples at once, then at every multiple of the interval on the
// wall clock (so that windows line up with other live sources' columns),
// and emits each window between two samples.
func (s *Source) Run(ctx context.Context, emit func(stream.Interval) error) error {
	s.warn = input.NewOnceWarnings(s.cfg.Diag, s.name)
	smp := newSampler(s.cfg.ProcDir, s.cfg.SysDir, s.groups, s.report)
	defer smp.close()
	var snaps [2]snapshot
	prev, cur := &snaps[0], &snaps[1]
	smp.sample(prev)
	prevAt := time.Now()
	// The first window is at least half an interval: a sliver would give
	// jumpy rates.
	timer := time.NewTimer(untilNext(prevAt, s.cfg.Interval, s.cfg.Interval/2))
	defer timer.Stop()
	size := 0
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		smp.sample(cur)
		at := time.Now()
		elapsed := at.Sub(prevAt) // monotonic
		smp.forget(cur)
		out := means(prev, cur, elapsed, s.groups, smp, make([]stream.SeriesMean, 0, size))
		size = len(out)
		iv := stream.Interval{Source: s.name, Start: prevAt.Round(0), Duration: elapsed, Means: out}
		if err := emit(iv); err != nil {
			return err
		}
		prev, cur, prevAt = cur, prev, at
		timer.Reset(untilNext(time.Now(), s.cfg.Interval, s.cfg.Interval/10))
	}
}

// untilNext is the wait from now to the next multiple of every on the
// wall clock that is at least least away (so that a late wake-up does not
// make a sliver of a window).
func untilNext(now time.Time, every, least time.Duration) time.Duration {
	next := now.Truncate(every).Add(every)
	if d := next.Sub(now); d >= least {
		return d
	}
	return next.Add(every).Sub(now)
}

// report counts a skipped line or an unreadable file, with file:line.
func (s *Source) report(file string, line int, reason string) {
	if line > 0 {
		s.cfg.Diag.Malformed(file, line, reason)
		return
	}
	s.warn.Warn(file, "%s: %s (its series are left out)", file, reason)
}

var _ source.Source = (*Source)(nil)
