// Package driver runs latscope's commands: it opens the SOURCE arguments
// with the known formats and probes, runs them through the stream and hands
// the result to a view or sink. cmd/latscope only maps flags onto Config.
package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/probe/iotest"
	"github.com/latscope/latscope/sink"
	csvsink "github.com/latscope/latscope/sink/csv"
	hdrlogsink "github.com/latscope/latscope/sink/hdrlog"
	"github.com/latscope/latscope/sink/jsonl"
	lsrsink "github.com/latscope/latscope/sink/lsr"
	otlpsink "github.com/latscope/latscope/sink/otlp"
	promsink "github.com/latscope/latscope/sink/prometheus"
	pylatencymapsink "github.com/latscope/latscope/sink/pylatencymap"
	"github.com/latscope/latscope/source"
	archivesource "github.com/latscope/latscope/source/archive"
	"github.com/latscope/latscope/source/awr"
	"github.com/latscope/latscope/source/biolat"
	"github.com/latscope/latscope/source/events"
	"github.com/latscope/latscope/source/fio"
	"github.com/latscope/latscope/source/hdrlog"
	"github.com/latscope/latscope/source/host"
	"github.com/latscope/latscope/source/lsr"
	"github.com/latscope/latscope/source/mysql"
	"github.com/latscope/latscope/source/netapp"
	"github.com/latscope/latscope/source/oracle"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/pcp"
	"github.com/latscope/latscope/source/postgres"
	"github.com/latscope/latscope/source/probes"
	"github.com/latscope/latscope/source/prometheus"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/source/remote"
	"github.com/latscope/latscope/source/tracehist"
	"github.com/latscope/latscope/stream"
)

// Config is what every command shares.
type Config struct {
	Sources []string
	Read    source.Options
	// ByFile keeps series from different sources apart (--by file).
	ByFile bool
	// Duration stops live sources after this long (0: run until Ctrl-C).
	Duration time.Duration
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	// StdoutTTY and StderrTTY say whether they are terminals.
	StdoutTTY bool
	StderrTTY bool
}

// Formats lists the file formats latscope detects, in detection order.
func Formats() []source.Format {
	formats := []source.Format{lsr.Format(), pylatencymap.Format(), oracle10046.Format()}
	formats = append(formats, tracehist.Formats()...)
	formats = append(formats, awr.Format(), awr.PollFormat())
	formats = append(formats, fio.JSONFormat(), fio.HistLogFormat(), hdrlog.Format())
	formats = append(formats, netapp.Format(), prometheus.Format(), events.WaitFormat(), postgres.Format())
	// Last: plain "time latency" columns are the most generic shape.
	formats = append(formats, events.Format())
	return formats
}

// Stores lists the inputs that are paths to databases, or URLs: the
// archive, a latscope serve's archive over its API, a Prometheus-compatible
// store through PromQL, and PCP archives.
func Stores() []source.Store {
	return []source.Store{archivesource.Store(), remote.Store(), prometheus.Store(), pcp.Store()}
}

// Sinks lists the formats `latscope convert` writes.
func Sinks() []sink.Format {
	return []sink.Format{lsrsink.Format(), pylatencymapsink.Format(), hdrlogsink.Format(), jsonl.Format(), promsink.Format(), csvsink.Format(), otlpsink.Format()}
}

// Probes lists the live sources named scheme:ARG.
func Probes() []source.Probe {
	return []source.Probe{probes.IOTest(), probes.NetTest(), mysql.Probe(), mysql.MariaDBProbe(), oracle.Probe(),
		postgres.Probe(), postgres.ProbePostgresql(), host.Probe(), biolat.Probe()}
}

// opened is the set of sources of one run.
type opened struct {
	sources []source.Source
	live    bool
	diag    *input.Diagnostics
	prog    *progress
	stats   *StatsReporter // --stats; nil when off
}

// open opens every SOURCE; it fails only when none could be opened.
func (c *Config) open(ctx context.Context) (*opened, error) {
	if len(c.Sources) == 0 {
		return nil, errors.New("no SOURCE given (a file, - for stdin, or a probe such as iotest:DIR)")
	}
	prog := newProgress(c.Stderr, c.StderrTTY)
	diag := input.NewDiagnostics(prog.messages(), input.DefaultReportLimit)
	o := &opened{diag: diag, prog: prog}
	opts := c.Read
	if opts.Progress == nil {
		opts.Progress = prog.statusLines()
	}
	op := &source.Opener{Formats: Formats(), Stores: Stores(), Probes: Probes(), Options: opts, Diag: diag, Stdin: c.Stdin, WrapFile: o.prog.wrap}
	var failed []error
	for _, spec := range c.Sources {
		src, err := op.Open(ctx, spec)
		if err != nil {
			failed = append(failed, err)
			// A lone source's error is the run's, printed once by the caller.
			if len(c.Sources) > 1 {
				fmt.Fprintf(c.Stderr, "latscope: %v\n", err)
			}
			continue
		}
		o.sources = append(o.sources, src)
		o.live = o.live || isLive(spec, c.Read)
		if isLoadProbe(spec) {
			reserveProcsForProbe()
		}
	}
	if len(o.sources) == 0 {
		if len(c.Sources) == 1 {
			return nil, failed[0]
		}
		return nil, fmt.Errorf("none of the %d sources could be read", len(c.Sources))
	}
	if len(failed) > 0 {
		fmt.Fprintf(c.Stderr, "latscope: %d of %d sources opened\n", len(o.sources), len(c.Sources))
	}
	return o, nil
}

// isProbe reports whether a SOURCE names a live probe.
func isProbe(spec string) bool {
	for _, p := range Probes() {
		if strings.HasPrefix(spec, p.Scheme+":") {
			return true
		}
	}
	return false
}

// isLoadProbe reports whether a SOURCE is a probe that loads what it
// measures and times it (iotest:, nettest:), not a database sampler or
// host: reading /proc.
func isLoadProbe(spec string) bool {
	return isProbe(spec) && !isDatabase(spec) && !strings.HasPrefix(spec, host.Scheme+":")
}

// reserveProcsForProbe gives every iotest reader its own Go processor (plus
// one for the view): with fewer, a read that completes while all processors
// are busy waits up to 10 ms for the scheduler, and that wait would be
// measured as storage latency.
func reserveProcsForProbe() {
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), iotest.DefaultReaders+1))
}

// isLive reports whether a SOURCE produces data over time (a probe, a
// followed file, or a pipe) rather than being a finished recording.
func isLive(spec string, opts source.Options) bool {
	return spec == "-" || opts.Follow || isProbe(spec)
}

// run feeds every interval of the sources to emit. Live sources stop after
// Duration; errors of single sources are printed and only fail the run when
// no source produced anything.
func (c *Config) run(ctx context.Context, o *opened, emit func(stream.Interval) error) error {
	if o.live && c.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Duration)
		defer cancel()
	}
	if c.Read.DB.Stats && o.live {
		o.stats = NewStatsReporter(o.sources)
		defer o.stats.Start(StatsEvery, c.Stderr)()
	}
	got := 0
	err := source.RunAll(ctx, o.sources, c.ByFile, o.diag, func(iv stream.Interval) error {
		if !c.inWindow(iv) {
			return nil
		}
		got++
		o.stats.Observe(iv)
		return emit(iv)
	})
	o.prog.done()
	// A live source stopped by --duration or by the view quitting is done,
	// not failed.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = nil
	}
	if err != nil && got > 0 {
		fmt.Fprintf(c.Stderr, "latscope: %v\n", err)
		return nil
	}
	return err
}

// inWindow applies --from and --until to every source (an archive reads
// only that window in the first place).
func (c *Config) inWindow(iv stream.Interval) bool {
	if !c.Read.From.IsZero() && iv.Start.Before(c.Read.From) {
		return false
	}
	return c.Read.To.IsZero() || iv.Start.Before(c.Read.To)
}

// collect reads every source to the end into a recording.
func (c *Config) collect(ctx context.Context, o *opened) (*stream.Recording, error) {
	rec := &stream.Recording{}
	err := c.run(ctx, o, func(iv stream.Interval) error {
		rec.Add(iv)
		return nil
	})
	return rec, err
}

// finish prints the skipped-input summary.
func (o *opened) finish(w io.Writer) {
	for _, p := range o.diag.Problems() {
		if p.Count > len(p.First) {
			fmt.Fprintf(w, "latscope: %s: %d malformed line(s) skipped in all (first %d shown above)\n", p.Source, p.Count, len(p.First))
		}
	}
}
