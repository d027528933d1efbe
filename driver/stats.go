package driver

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/internal/pace"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// StatsEvery is how often --stats prints a line while a live source runs.
const StatsEvery = 5 * time.Second

// StatsReporter keeps latscope's own cost visible while live sources run
// (--stats): elapsed time, the process's CPU time, each sampler's polling
// rate and capture ratio, the events the sources emitted and the resident
// memory, as one line such as
//
//	latscope stats: 10.0 s, CPU 0.23 s (2.3 % of one core), 99.8 polls/s, 5120 events/s, capture 0.994, RSS 24 MiB
//
// CPU is the whole process's (sampling, decoding and the view): what the
// machine pays for watching. Every method is safe on a nil *StatsReporter
// (--stats off) and does nothing, so callers need no checks.
type StatsReporter struct {
	samplers []namedSampler
	clock    statsClock
	start    time.Time
	cpuStart time.Duration

	mu     sync.Mutex
	events float64
}

type namedSampler struct {
	name string
	s    stream.Sampler
}

// statsClock is where the reporter reads time, CPU and memory (fixed in
// tests).
type statsClock struct {
	now func() time.Time
	cpu func() time.Duration
	// rss returns the resident set in bytes, or -1 when unknown.
	rss func() int64
}

var processClock = statsClock{now: time.Now, cpu: pace.ProcessCPU, rss: residentBytes}

// NewStatsReporter starts counting from now for srcs; those implementing
// stream.Sampler contribute their polling rate and capture ratio.
func NewStatsReporter(srcs []source.Source) *StatsReporter {
	return newStatsReporter(srcs, processClock)
}

func newStatsReporter(srcs []source.Source, clock statsClock) *StatsReporter {
	r := &StatsReporter{clock: clock, start: clock.now(), cpuStart: clock.cpu()}
	for _, src := range srcs {
		if s, ok := src.(stream.Sampler); ok {
			r.samplers = append(r.samplers, namedSampler{name: src.Name(), s: s})
		}
	}
	return r
}

// Observe counts the events of one emitted interval (the histograms'
// counts; count-and-sum means are not events seen one by one).
func (r *StatsReporter) Observe(iv stream.Interval) {
	if r == nil {
		return
	}
	var n float64
	for _, sh := range iv.Series {
		if sh.Hist != nil {
			n += sh.Hist.Count()
		}
	}
	r.mu.Lock()
	r.events += n
	r.mu.Unlock()
}

// CPUSeconds is the process CPU time used since the reporter started.
func (r *StatsReporter) CPUSeconds() float64 {
	if r == nil {
		return 0
	}
	return (r.clock.cpu() - r.cpuStart).Seconds()
}

// Fill returns st with CPUSeconds set, for the report JSON's "source"
// object (st unchanged when --stats is off).
func (r *StatsReporter) Fill(st stream.SamplerStats) stream.SamplerStats {
	if r == nil {
		return st
	}
	st.CPUSeconds = r.CPUSeconds()
	return st
}

// Line is the current statistics line, without a newline.
func (r *StatsReporter) Line() string {
	if r == nil {
		return ""
	}
	elapsed := r.clock.now().Sub(r.start).Seconds()
	cpu := r.CPUSeconds()
	r.mu.Lock()
	events := r.events
	r.mu.Unlock()
	parts := []string{fmt.Sprintf("%.1f s", elapsed)}
	if elapsed > 0 {
		parts = append(parts, fmt.Sprintf("CPU %.2f s (%.1f %% of one core)", cpu, 100*cpu/elapsed))
	} else {
		parts = append(parts, fmt.Sprintf("CPU %.2f s", cpu))
	}
	rate := ""
	if elapsed > 0 {
		rate = formatRate(events/elapsed) + " events/s"
	}
	if len(r.samplers) == 1 {
		// One sampler: its polling rate, the events, then its capture.
		sp := samplerParts(r.samplers[0], false)
		parts = append(parts, sp[0])
		parts = appendNonEmpty(parts, rate)
		parts = append(parts, sp[1:]...)
	} else {
		parts = appendNonEmpty(parts, rate)
		for _, ns := range r.samplers {
			parts = append(parts, samplerParts(ns, true)...)
		}
	}
	if rss := r.clock.rss(); rss >= 0 {
		parts = append(parts, fmt.Sprintf("RSS %d MiB", (rss+1<<19)>>20))
	}
	return "latscope stats: " + strings.Join(parts, ", ")
}

// samplerParts describes one sampler; with several, each is named.
func samplerParts(ns namedSampler, named bool) []string {
	st := ns.s.SamplerStats()
	prefix := ""
	if named {
		prefix = ns.name + " "
	}
	parts := []string{fmt.Sprintf("%s%.1f polls/s", prefix, st.PollsPerSecond)}
	if st.CaptureRatio != nil {
		parts = append(parts, fmt.Sprintf("%scapture %.3f", prefix, *st.CaptureRatio))
	}
	for _, cp := range st.Captures {
		if cp.Ratio != nil && cp.What == "statements" {
			parts = append(parts, fmt.Sprintf("%sstatement capture %.3f", prefix, *cp.Ratio))
		}
	}
	if st.Missed > 0 {
		parts = append(parts, fmt.Sprintf("%smissed %d", prefix, st.Missed))
	}
	for _, r := range st.Rings {
		if r.Overruns > 0 {
			parts = append(parts, fmt.Sprintf("%s%s overruns %d", prefix, r.Table, r.Overruns))
		}
	}
	return parts
}

func appendNonEmpty(parts []string, s string) []string {
	if s == "" {
		return parts
	}
	return append(parts, s)
}

// formatRate prints a rate with one decimal below 100, whole above.
func formatRate(v float64) string {
	if v < 100 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// Run prints Line to w every interval until ctx ends, then once more.
func (r *StatsReporter) Run(ctx context.Context, every time.Duration, w io.Writer) {
	if r == nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			fmt.Fprintln(w, r.Line())
		case <-ctx.Done():
			fmt.Fprintln(w, r.Line())
			return
		}
	}
}

// Start runs Run in the background; the returned stop ends it, printing
// the final line, and returns once it is printed. Call stop after the
// sources have finished so the last line counts every interval.
func (r *StatsReporter) Start(every time.Duration, w io.Writer) (stop func()) {
	if r == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, every, w)
	}()
	return func() { cancel(); <-done }
}

// residentBytes reads the resident set from /proc/self/statm (Linux): -1
// elsewhere or on error.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return -1
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return -1
	}
	return pages * int64(os.Getpagesize())
}
