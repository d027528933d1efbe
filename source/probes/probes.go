// Package probes opens latscope's own load tests as live sources named on
// the command line: iotest:DIR and nettest:HOST:PORT. The tests themselves
// live in the probe wing (probe/iotest, probe/nettest); this package only
// maps the reading options onto them.
package probes

import (
	"fmt"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/probe/iotest"
	"github.com/latscope/latscope/probe/nettest"
	"github.com/latscope/latscope/source"
)

// IOTest is the iotest:DIR probe: storage read latency with the default
// load, until stopped.
func IOTest() source.Probe {
	return source.Probe{
		Scheme:      "iotest",
		Description: iotest.ProbeDescription(),
		Open: func(arg string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
			cfg := iotest.Config{Path: arg, Interval: opts.Interval, Events: opts.Events, Progress: opts.Progress}
			return iotest.OpenProbe(cfg, diag)
		},
	}
}

// NetTest is the nettest:HOST:PORT probe: request/reply round trips to a
// `latscope nettest server`, one connection, default sizes, until stopped.
func NetTest() source.Probe {
	return source.Probe{
		Scheme: "nettest",
		Description: fmt.Sprintf("nettest:HOST:PORT times %d-byte request/reply round trips to a `latscope nettest server` "+
			"on one connection; `latscope nettest client` has every mode and size", nettest.DefaultSize),
		Open: func(arg string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
			return nettest.OpenProbe(nettest.Config{Addr: arg, Interval: opts.Interval}, diag)
		},
	}
}
