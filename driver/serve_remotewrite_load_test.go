package driver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/promtest"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/server/httpsec"
)

// The remote-write load benchmark of issue 16 (docs/fleet.md "Scale"):
// latscope serve with synthetic jobs sending to a real Prometheus 2.42.
// It runs only with LATSCOPE_LOADBENCH=1. Knobs, besides
// LATSCOPE_LOADBENCH_SECONDS (length of each run, 60):
//
//	LATSCOPE_LOADBENCH_RWJOBS    jobs per sender (50)
//	LATSCOPE_LOADBENCH_RWEVENTS  series per job (10)
//	LATSCOPE_LOADBENCH_SATSECONDS length of each saturation step (20)
//	LATSCOPE_LOADBENCH_SATMAX    most senders of the saturation (32)
//	LATSCOPE_LOADBENCH_SATCLASSIC 1: the saturation sends classic buckets

// rwSender is one latscope serve (serveJobs) with a remote_write target.
type rwSender struct {
	data   string
	stderr *syncBuffer
	stops  *stopLog
	served chan error
	cancel context.CancelFunc
	// begin is the start of the jobs' first window: they emit a window
	// per second from then on, catching up if they start late.
	begin time.Time
	// emitted counts the series the jobs emitted (archived, spooled).
	emitted *atomic.Int64
}

// startRWSender starts serveJobs with nJobs synthetic jobs of events
// series each, host label host, sending to url.
func startRWSender(t *testing.T, dir, host, url string, native bool, nJobs, events int) *rwSender {
	t.Helper()
	hists := realHistograms(t)
	var encoded, at, emitted atomic.Int64
	begin := time.Now().Truncate(time.Second)
	defs := syntheticJobs(nJobs, func(i int) synthetic {
		return synthetic{hists: hists, offset: i, start: begin, realTime: true, events: events, at: &at, encoded: &encoded, emitted: &emitted}
	})
	s := &rwSender{data: filepath.Join(dir, host), stderr: &syncBuffer{}, stops: &stopLog{}, served: make(chan error, 1), begin: begin, emitted: &emitted}
	c := &config.Config{Data: s.data, Listen: "127.0.0.1:0", Prometheus: config.Prometheus{Host: host},
		RemoteWrite: []config.RemoteWrite{{Name: "prom", URL: url, IsNative: native, SpoolAge: config.DefaultRemoteWriteAge}}}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		s.served <- serveJobs(ctx, ServeConfig{Stderr: s.stderr}, c, defs, &httpsec.Redactor{}, slog.New(s.stops))
	}()
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(s.stderr.String(), "serving on"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start:\n%s", host, s.stderr)
		}
	}
	return s
}

// backlog is what waits in the spool now: batches and samples (from
// the batch files' names, SEQ-SHARD-MS-SAMPLES.rw).
func (s *rwSender) backlog() (batches, samples int) {
	entries, _ := os.ReadDir(filepath.Join(s.data, RemoteWriteDir, "prom"))
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".rw")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(base[strings.LastIndexByte(base, '-')+1:])
		batches, samples = batches+1, samples+n
	}
	return batches, samples
}

// stop stops the server and returns the sender's totals, as it logs them.
func (s *rwSender) stop(t *testing.T) map[string]int64 {
	t.Helper()
	s.cancel()
	if err := <-s.served; err != nil {
		t.Fatal(err)
	}
	return s.stops.get(t)
}

// stopLog is a slog handler keeping the "remote write stopped" record's
// counts (sent_samples, sent_bytes, dropped_samples, spooled_batches).
type stopLog struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (h *stopLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *stopLog) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *stopLog) WithGroup(string) slog.Handler                { return h }

func (h *stopLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "remote write stopped" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts = map[string]int64{}
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindUint64 || a.Value.Kind() == slog.KindInt64 {
			h.counts[a.Key], _ = strconv.ParseInt(a.Value.String(), 10, 64)
		}
		return true
	})
	return nil
}

func (h *stopLog) get(t *testing.T) map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts == nil {
		t.Fatal("the server did not log remote write stopped")
	}
	return h.counts
}

// minBacklog polls the senders' spools for a second and returns the
// least total seen: the batches of the second just emitted are in
// flight for a moment even when the store keeps up.
func minBacklog(senders []*rwSender) (batches, samples int) {
	batches = 1 << 30
	for range 50 {
		b, n := 0, 0
		for _, s := range senders {
			sb, sn := s.backlog()
			b, n = b+sb, n+sn
		}
		if b < batches {
			batches, samples = b, n
		}
		time.Sleep(20 * time.Millisecond)
	}
	return batches, samples
}

func emittedBy(senders []*rwSender) int64 {
	var n int64
	for _, s := range senders {
		n += s.emitted.Load()
	}
	return n
}

// rwRun is one measured run of n senders against one Prometheus.
type rwRun struct {
	senders, series                 int
	seconds                         float64
	sentSamples, sentBytes, dropped int64
	// emittedPerSec is the series the jobs emitted per second in the
	// window, appendedPerSec the samples Prometheus appended.
	emittedPerSec, appendedPerSec  float64
	promCPU, latscopeCPU           float64 // % of one core
	promRSS, latscopeRSS           float64 // MiB
	backlogBatches, backlogSamples int
	spooledAtStop                  int64
}

// runRemoteWrite starts n senders of nJobs × events series each, lets
// them send for seconds (after a 3 s warm-up) and measures.
func runRemoteWrite(t *testing.T, prom *promtest.Server, native bool, n, nJobs, events, seconds int) rwRun {
	t.Helper()
	dir := benchDir(t)
	var senders []*rwSender
	for i := range n {
		senders = append(senders, startRWSender(t, dir, fmt.Sprintf("host%03d", i), prom.WriteURL(), native, nJobs, events))
	}
	// Jobs started, first batches sent; the window runs from mid-second
	// to mid-second, between the jobs' bursts at each second's end, so
	// that it holds exactly `seconds` of them.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(3*time.Second + 500*time.Millisecond)))
	before, promBefore, appBefore, emBefore := measure(t), prom.CPU(t), prom.Appended(t), emittedBy(senders)
	time.Sleep(time.Until(before.wall.Truncate(time.Second).Add(time.Duration(seconds)*time.Second + 500*time.Millisecond)))
	after, promAfter, appAfter, emAfter := measure(t), prom.CPU(t), prom.Appended(t), emittedBy(senders)
	r := rwRun{senders: n, series: n * nJobs * events, latscopeRSS: rssMiB(t, "VmRSS"),
		promRSS: float64(procField(t, fmt.Sprintf("/proc/%d/status", prom.PID()), "VmRSS")) / 1024}
	r.backlogBatches, r.backlogSamples = minBacklog(senders)
	wall := after.wall.Sub(before.wall)
	r.appendedPerSec = (appAfter - appBefore) / wall.Seconds()
	r.emittedPerSec = float64(emAfter-emBefore) / wall.Seconds()
	r.latscopeCPU = 100 * float64(after.cpu-before.cpu) / float64(wall)
	r.promCPU = 100 * float64(promAfter-promBefore) / float64(wall)
	// The senders' totals cover their whole life, from the first window
	// to the stop.
	var life time.Duration
	stopped := time.Now()
	for _, s := range senders {
		st := s.stop(t)
		r.sentSamples += st["sent_samples"]
		r.sentBytes += st["sent_bytes"]
		r.dropped += st["dropped_samples"]
		r.spooledAtStop += st["spooled_batches"]
		life += stopped.Sub(s.begin)
	}
	r.seconds = life.Seconds() / float64(n) // the senders' mean life
	return r
}

// sentPerSec is the samples acknowledged per second, all senders.
func (r rwRun) sentPerSec() float64 { return float64(r.sentSamples) / r.seconds }

// TestRemoteWriteLoad is one latscope serve, 50 synthetic jobs × 10
// series at 1 s (500 series), sending by remote write to a real
// Prometheus 2.42 for a minute, native histograms then classic buckets.
func TestRemoteWriteLoad(t *testing.T) {
	loadBench(t)
	nJobs, events := knob("LATSCOPE_LOADBENCH_RWJOBS", 50), knob("LATSCOPE_LOADBENCH_RWEVENTS", 10)
	seconds := knob("LATSCOPE_LOADBENCH_SECONDS", 60)
	for _, native := range []bool{true, false} {
		name := map[bool]string{true: "native", false: "classic"}[native]
		t.Run(name, func(t *testing.T) {
			prom := promtest.Start(t, promtest.Options{NativeHistograms: true, RemoteWriteReceiver: true})
			r := runRemoteWrite(t, prom, native, 1, nJobs, events, seconds)
			loadRow(t, name+": series, seconds", "%d, %d", r.series, seconds)
			loadRow(t, name+": samples sent per second", "%.0f (%.1f per series)", r.sentPerSec(), r.sentPerSec()/float64(r.series))
			loadRow(t, name+": bytes sent per second", "%.0f (%.1f per series; request bodies, snappy)", float64(r.sentBytes)/r.seconds, float64(r.sentBytes)/r.seconds/float64(r.series))
			loadRow(t, name+": latscope CPU, RSS", "%.1f %% of one core, %.1f MiB", r.latscopeCPU, r.latscopeRSS)
			loadRow(t, name+": Prometheus CPU, RSS", "%.1f %% of one core, %.1f MiB", r.promCPU, r.promRSS)
			loadRow(t, name+": series emitted, appended per second", "%.0f, %.0f", r.emittedPerSec, r.appendedPerSec)
			loadRow(t, name+": spool backlog (least in 1 s)", "%d batches, %d samples; %d spooled at stop, %d dropped", r.backlogBatches, r.backlogSamples, r.spooledAtStop, r.dropped)
			if r.backlogBatches > 0 {
				t.Errorf("%s: the spool kept %d batches: Prometheus did not keep up with %d series", name, r.backlogBatches, r.series)
			}
		})
	}
}

// TestRemoteWriteSaturation doubles the senders (latscope serves in this
// process, each with its own data directory and host label, 500 series
// each) against one Prometheus until it stops keeping up: the spool
// keeps a backlog, or it appends fewer samples than are sent.
func TestRemoteWriteSaturation(t *testing.T) {
	loadBench(t)
	nJobs, events := knob("LATSCOPE_LOADBENCH_RWJOBS", 50), knob("LATSCOPE_LOADBENCH_RWEVENTS", 10)
	seconds, most := knob("LATSCOPE_LOADBENCH_SATSECONDS", 20), knob("LATSCOPE_LOADBENCH_SATMAX", 32)
	native := os.Getenv("LATSCOPE_LOADBENCH_SATCLASSIC") != "1"
	prom := promtest.Start(t, promtest.Options{NativeHistograms: true, RemoteWriteReceiver: true})
	loadRow(t, "saturation ("+map[bool]string{true: "native", false: "classic"}[native]+")", "senders  series  emitted/s  sent/s  appended/s  Prometheus CPU %%  latscope CPU %% (per sender)  backlog")
	for n := 1; n <= most; n *= 2 {
		r := runRemoteWrite(t, prom, native, n, nJobs, events, seconds)
		loadRow(t, fmt.Sprintf("saturation: %d senders", n), "%7d %10.0f %7.0f %11.0f %17.1f %15.1f (%.1f)  %d batches, %d samples",
			r.series, r.emittedPerSec, r.sentPerSec(), r.appendedPerSec, r.promCPU, r.latscopeCPU, r.latscopeCPU/float64(n), r.backlogBatches, r.backlogSamples)
		// A window per series per second is due. The senders fall behind
		// when their jobs emit less than that (this process's CPU or
		// disk); Prometheus does when the spools keep a backlog or (native:
		// a sample per series) it appends less than the jobs emitted.
		due := float64(r.series)
		switch {
		case r.backlogBatches > n || native && r.appendedPerSec < 0.95*r.emittedPerSec:
			loadRow(t, "saturation: Prometheus keeps up to", "%d senders (%d series); not with %d", n/2, r.series/2, n)
			return
		case r.emittedPerSec < 0.95*due:
			loadRow(t, "saturation: the senders keep up to", "%d senders in one process (%d series); not with %d (Prometheus kept up with what they sent)", n/2, r.series/2, n)
			return
		}
	}
	loadRow(t, "saturation: keeps up to", "%d senders at least (LATSCOPE_LOADBENCH_SATMAX)", most)
}
