package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/probe/loadtest"
	"github.com/latscope/latscope/probe/nettest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/static"
)

// NetServerConfig configures `latscope nettest server`.
type NetServerConfig struct {
	Config
	Server nettest.ServerConfig
}

// NetServer serves nettest clients until ctx is cancelled or Duration has
// passed.
func NetServer(ctx context.Context, c NetServerConfig) error {
	// Each test blocks in system calls on its own thread (see
	// nettest.Server): a second Go processor keeps the runtime from taking
	// the first back from a test's blocked read even when the server is
	// pinned to one CPU, and the collector stays away while nothing but
	// connections' buffers is allocated.
	defer holdProcessors(2)()
	c.Server.Log = c.Stderr
	s, err := nettest.Listen(c.Server)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stderr, "latscope nettest server: listening on %s (protocol v1); stop with Ctrl-C\n", s.Addr())
	if c.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Duration)
		defer cancel()
	}
	err = s.Serve(ctx)
	fmt.Fprintf(c.Stderr, "latscope nettest server: served %d tests, refused %d\n", s.Served(), s.Refused())
	if err == nil && errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err() // Ctrl-C: exit 130
	}
	return err
}

// NetClientConfig configures `latscope nettest client`.
type NetClientConfig struct {
	Config
	Test nettest.Config
	// Format is table or json for the report on stdout.
	Format string
	// Output writes the heat maps (.html, .svg, .png) or the report (.json,
	// .txt); Record writes the latency stream as a recording.
	Output, Record string
	Plain          bool
	MapStyle
	// The what-if calculator: a per-call server time or a TPS observed at
	// the measured RTT (at most one), with RoundTrips per call.
	ServerTime time.Duration
	TPS        float64
	RoundTrips int
}

// NetClient runs a network test: the live heat map on a terminal (or
// per-interval lines), then the report.
func NetClient(ctx context.Context, c NetClientConfig) error {
	defer holdProcessors(max(c.Test.Connections, 1) + 1)()
	prog := newProgress(c.Stderr, c.StderrTTY)
	diag := input.NewDiagnostics(prog.messages(), input.DefaultReportLimit)
	test := nettest.New(c.Test, diag)
	o := &opened{sources: []source.Source{test}, live: true, diag: diag, prog: prog}
	tee, closeRecord, err := openRecorder(c.Record, diag, c.Stderr)
	if err != nil {
		return err
	}
	live := liveRun{Config: c.Config, Plain: c.Plain || c.Format == "json", MapStyle: c.MapStyle, Tee: tee}
	linesLive := !(c.StdoutTTY && !live.Plain) && c.Format != "json"
	if linesLive {
		fmt.Fprintln(c.Stdout, nettest.IntervalHeader())
		live.Headless = func(stream.Interval) {
			res := test.Result()
			if n := len(res.Intervals); n > 0 {
				fmt.Fprintln(c.Stdout, nettest.LiveLine(res.Intervals[n-1], test.Config()))
			}
		}
	}
	all, runErr := live.run(ctx, o)
	if err := closeRecord(); err != nil && runErr == nil {
		runErr = err
	}
	res := test.Result()
	if res.Total == nil || res.Total.Lat.Count() == 0 {
		if runErr == nil {
			runErr = errors.New("no round trip completed")
		}
		return runErr
	}
	whatIf, err := c.whatIf(res)
	if err != nil {
		return err
	}
	rep := nettest.NewReport(res, whatIf)
	write := func(w io.Writer, format string) error {
		if format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}
		return rep.WriteTable(w, !linesLive)
	}
	if err := write(c.Stdout, c.Format); err != nil {
		return err
	}
	page := static.Options{Title: "latscope nettest " + rep.Server, Scale: c.Scale, RowScale: c.RowScale, ReportHTML: netTestPage(rep)}
	if err := writeTestOutput(c.Config, c.Output, page, all, write); err != nil {
		return err
	}
	if runErr == nil && errors.Is(ctx.Err(), context.Canceled) {
		runErr = ctx.Err() // interrupted: the report is out, exit 130
	}
	return runErr
}

// whatIf builds the calculator when --server-time or --tps was given.
func (c NetClientConfig) whatIf(res nettest.Result) (*nettest.WhatIf, error) {
	if c.ServerTime == 0 && c.TPS == 0 {
		return nil, nil
	}
	st := loadtest.Summarize(loadtest.Step{Elapsed: res.Elapsed, Latency: res.Total.Lat, Max: res.Total.Max})
	return nettest.NewWhatIf(st.MeanUS, c.ServerTime, c.TPS, c.RoundTrips)
}
