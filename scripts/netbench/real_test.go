package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/scripts/benchkit"
)

// latscopeForTest returns bin/latscope when it has nettest (make test
// builds it first), else a binary built into a temporary directory.
func latscopeForTest(t *testing.T) string {
	t.Helper()
	repo := testenv.RepoRoot(t)
	bin := filepath.Join(repo, "bin", "latscope")
	if exec.Command(bin, "nettest", "client", "--help").Run() == nil {
		return bin
	}
	built := filepath.Join(t.TempDir(), "latscope")
	cmd := exec.Command("go", "build", "-o", built, "./cmd/latscope")
	cmd.Dir, cmd.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building latscope: %v\n%s", err, out)
	}
	return built
}

// Each tool's real server and client, with the harness's own commands
// (unpinned, 2 s, side by side to keep the test short): the reports
// parse, the CPU is counted, and no server outlives its run.
func TestMeasureReal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs each tool for 2 s")
	}
	r := runner{duration: 2 * time.Second}
	var err error
	if r.sockperf, err = exec.LookPath("sockperf"); err != nil {
		testenv.SkipOrFail(t, "sockperf is not installed (apt-get install sockperf)")
	}
	if r.qperf, err = exec.LookPath("qperf"); err != nil {
		testenv.SkipOrFail(t, "qperf is not installed (apt-get install qperf)")
	}
	r.latscope = latscopeForTest(t)
	for _, tool := range []string{toolSockperf, toolLatscope, toolQperf} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			res, err := r.measure(context.Background(), tool, 64)
			if err != nil {
				t.Fatal(err)
			}
			if res.RoundTrips < 1000 || res.MeanUS <= 0 || res.PerSecond <= 0 || res.AllRoundTrips < res.RoundTrips {
				t.Errorf("measurement %+v", res.measurement)
			}
			if tool != toolQperf && (res.P50US <= 0 || res.P99US < res.P50US || res.MaxUS < res.P99US) {
				t.Errorf("percentiles %+v", res.measurement)
			}
			if res.ClientCPUPerRoundTripUS <= 0 || res.ServerCPUS <= 0 || res.WallS < 2 {
				t.Errorf("client CPU/RT %v µs, server CPU %v s, wall %v s", res.ClientCPUPerRoundTripUS, res.ServerCPUS, res.WallS)
			}
			if (tool == toolLatscope) != (len(res.Raw) > 0) || (tool != toolLatscope) != (res.Output != "") || strings.Contains(res.Output, "\x1b[") {
				t.Errorf("raw %d bytes, output %q", len(res.Raw), res.Output)
			}
			if benchkit.Listening(res.Port) {
				t.Errorf("something still listens on the server's port %d", res.Port)
			}
		})
	}
}
