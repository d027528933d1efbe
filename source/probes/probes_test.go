package probes

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/probe/nettest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// TestNetTestProbeAgainstARealServer opens nettest:HOST:PORT as the
// command line does, against a real server on loopback, and gets windows
// of round trips at the --interval asked for.
func TestNetTestProbeAgainstARealServer(t *testing.T) {
	srv, err := nettest.Listen(nettest.ServerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx)

	op := &source.Opener{Probes: []source.Probe{NetTest()}, Options: source.Options{Interval: 100 * time.Millisecond}, Diag: input.NewDiagnostics(nil, 5)}
	src, err := op.Open(ctx, "nettest:"+srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithTimeout(ctx, 550*time.Millisecond)
	defer stop()
	var ivs []stream.Interval
	if err := src.Run(runCtx, func(iv stream.Interval) error { ivs = append(ivs, iv); return nil }); err != nil {
		t.Fatal(err)
	}
	var trips float64
	for _, iv := range ivs {
		if iv.Duration > 150*time.Millisecond {
			t.Errorf("window of %s, want 100ms", iv.Duration)
		}
		for _, s := range iv.Series {
			trips += s.Hist.Count()
		}
	}
	if len(ivs) < 4 || trips < 100 {
		t.Errorf("%d windows, %g round trips", len(ivs), trips)
	}
}

func TestProbesRefuseBadArguments(t *testing.T) {
	op := &source.Opener{Probes: []source.Probe{IOTest(), NetTest()}}
	for spec, want := range map[string]string{
		"iotest:/no/such/dir": "iotest: directory /no/such/dir",
		"nettest:":            "nettest: no server address",
	} {
		if _, err := op.Open(context.Background(), spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", spec, err, want)
		}
	}
}
