package pcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/pcptest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source/host"
	"github.com/latscope/latscope/stream"
)

// TestLiveHostMatchesPCP: latscope's own host: source and a pmlogger
// archive, started together and recording the same seconds at 1 s under a
// write load, give the same figures for the same series: the two sources
// mean one thing by one name. Both sample on their own clocks, started
// within milliseconds of each other, so the comparison is over the seconds
// both cover, summed (sum of sums over sum of counts), within 2 % or a
// small absolute amount for figures near zero.
func TestLiveHostMatchesPCP(t *testing.T) {
	config, err := os.ReadFile(testenv.DataFile(t, "pcp/pmlogger.conf"))
	if err != nil {
		t.Fatal(err)
	}
	n := recordSeconds(t)
	pmcd := pcptest.StartPMCD(t)
	dir := t.TempDir()
	src, err := host.Open("", host.Config{Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		writeLoad(t, filepath.Join(dir, "load"), stop)
	}()
	var live []stream.Interval
	// host: reads /proc on whole seconds: pmlogger is started so that
	// its samples land on them too, within milliseconds.
	// The logger runs on until host: is done (however many starts it
	// took to align), then is stopped.
	logger := startOnSecond(t, pmcd, dir, string(config), n+60)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(n)*time.Second+500*time.Millisecond)
	defer cancel()
	err = src.Run(ctx, func(iv stream.Interval) error {
		live = append(live, iv)
		return nil
	})
	if err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // pmlogger's sample after host:'s last
	logger.Kill()
	close(stop)
	wg.Wait()
	archived := readAll(t, logger.Base, readOptions{})

	from, to := overlap(live, archived)
	// pmlogger asks pmcd for the metadata of what it fetched right after
	// its first sample: hundreds of loopback packets in the milliseconds
	// between the two samplers' first readings. Compare from the second on.
	from = from.Add(time.Second)
	if to.Sub(from) < time.Duration(n-4)*time.Second {
		t.Fatalf("host: and the archive overlap %s of %d s", to.Sub(from), n)
	}
	// A loaded machine can stretch a sampler's interval across from or
	// to, leaving its windows a second short of the span: both are
	// compared over the time both sides' windows cover.
	for range 4 {
		from, to = covered(archived, from, to)
		from, to = covered(live, from, to)
	}
	a, b := totals(live, from, to), totals(archived, from, to)
	compared := 0
	for _, k := range []stream.Key{
		{Event: "cpu.%user", Instance: "all"}, {Event: "cpu.%system", Instance: "all"},
		{Event: "cpu.%idle", Instance: "all"}, {Event: "cpu.%iowait", Instance: "all"},
		{Event: "cpu.%steal", Instance: "all"}, {Event: "cpu.%user", Instance: "cpu0"},
		{Event: "disk.w/s", Instance: "vda"}, {Event: "disk.wkB/s", Instance: "vda"},
		{Event: "disk.%util", Instance: "vda"}, {Event: "disk.aqu-sz", Instance: "vda"},
		{Event: "disk.w_await", Instance: "vda"}, {Event: "disk.wareq-sz", Instance: "vda"},
		{Event: "net.rxpck/s", Instance: "lo"}, {Event: "net.rxkB/s", Instance: "lo"},
		{Event: "net.txpck/s", Instance: "lo"},
		{Event: "mem.kbmemused"}, {Event: "mem.%memused"}, {Event: "mem.kbavail"}, {Event: "mem.kbcached"},
		{Event: "mem.pgpgout/s"}, {Event: "mem.fault/s"},
		{Event: "psi.io.some"}, {Event: "psi.cpu.some"}, {Event: "load.1"}, {Event: "load.plist"},
		{Event: "cpu.cswch/s"},
	} {
		x, okA := a[k]
		y, okB := b[k]
		if !okA || !okB {
			t.Errorf("%s: host: has it %v, the archive %v", k, okA, okB)
			continue
		}
		vx, vy := x.Sum/x.Count, y.Sum/y.Count
		if math.Abs(vx-vy) > math.Max(0.02*math.Abs(vy), floor(y.Quantity)) {
			t.Errorf("%s over %s: host: %.3f (%g/%g), PCP archive %.3f (%g/%g)", k, to.Sub(from), vx, x.Sum, x.Count, vy, y.Sum, y.Count)
		}
		compared++
	}
	t.Logf("%d series compared over %s: host: beside pmlogger", compared, to.Sub(from))
}

// startOnSecond starts pmlogger so that its first sample, and so every
// one after it at 1 s, falls within 15 ms of a whole second: it starts
// the logger ahead of a second by its start-up time, reads where the
// first sample fell, and starts again with the lead corrected.
func startOnSecond(t *testing.T, pmcd *pcptest.PMCD, dir, config string, samples int) *pcptest.Logger {
	t.Helper()
	lead := 50 * time.Millisecond
	var best *pcptest.Logger
	bestOff := time.Hour
	for attempt := 0; attempt < 6; attempt++ {
		next := time.Now().Truncate(time.Second).Add(2 * time.Second)
		time.Sleep(time.Until(next.Add(-lead)))
		l := pmcd.StartLogger(t, dir, fmt.Sprintf("live%d", attempt), config, 3, samples)
		first := firstSample(t, l.Base)
		off := first.Sub(first.Round(time.Second))
		if off.Abs() < bestOff.Abs() {
			if best != nil {
				best.Kill()
			}
			best, bestOff = l, off
		} else {
			l.Kill()
		}
		if off.Abs() < 15*time.Millisecond {
			break
		}
		lead += off
	}
	// A loaded machine may not let pmlogger start on time: the closest
	// start is used (the comparison's tolerance covers tens of ms).
	t.Logf("pmlogger samples %s off host:'s whole seconds", bestOff)
	return best
}

// firstSample returns the time of a growing archive's first sample of
// the metrics latscope maps.
func firstSample(t *testing.T, base string) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		a, err := Open(base)
		if err != nil {
			continue
		}
		tr := newTracker(a.Meta)
		var at time.Time
		errFound := errors.New("found")
		_ = a.Results(time.Time{}, func(r Result, _ bool) error {
			if tr.relevant(r) {
				at = r.At
				return errFound
			}
			return nil
		}, func(error) {})
		if !at.IsZero() {
			return at
		}
	}
	t.Fatalf("pmlogger wrote no sample to %s in 30 s", base)
	return time.Time{}
}

// floor is the absolute difference two samplers a few milliseconds apart
// may show for a figure near zero.
func floor(q stream.Quantity) float64 {
	switch q {
	case stream.Percent, stream.Count:
		return 0.5
	case stream.KB:
		return 4096
	case stream.Latency:
		return 0.2e6 // ns: 0.2 ms
	}
	return 2
}

// overlap returns the span both streams cover with windows.
func overlap(a, b []stream.Interval) (from, to time.Time) {
	span := func(ivs []stream.Interval) (time.Time, time.Time) {
		return ivs[0].Start, ivs[len(ivs)-1].End()
	}
	fa, ta := span(a)
	fb, tb := span(b)
	from, to = fa, ta
	if fb.After(from) {
		from = fb
	}
	if tb.Before(to) {
		to = tb
	}
	return from, to
}

// covered returns the span of the windows of ivs that totals counts in
// [from, to).
func covered(ivs []stream.Interval, from, to time.Time) (time.Time, time.Time) {
	var first, last time.Time
	for _, iv := range ivs {
		if !inSpan(iv, from, to) {
			continue
		}
		if first.IsZero() || iv.Start.Before(first) {
			first = iv.Start
		}
		if iv.End().After(last) {
			last = iv.End()
		}
	}
	if first.IsZero() {
		return from, to
	}
	return first, last
}

// inSpan says whether a window is inside [from, to): the samplers are
// within milliseconds of each other, so a window that starts or ends that
// close to the span is in it.
func inSpan(iv stream.Interval, from, to time.Time) bool {
	const slack = 50 * time.Millisecond
	return !iv.Start.Before(from.Add(-slack)) && !iv.End().After(to.Add(slack))
}

// totals sums each series over the windows inside [from, to); latencies
// are turned into ns so that both sources' units compare.
func totals(ivs []stream.Interval, from, to time.Time) map[stream.Key]stream.SeriesMean {
	out := map[stream.Key]stream.SeriesMean{}
	for _, iv := range ivs {
		if !inSpan(iv, from, to) {
			continue
		}
		for _, m := range iv.Means {
			k := stream.Key{Event: m.Key.Event, Instance: m.Key.Instance}
			t := out[k]
			t.Quantity = m.Quantity
			t.Count += m.Count
			if m.Quantity.IsLatency() {
				t.Sum += m.Unit.Nanos(m.Sum)
			} else {
				t.Sum += m.Sum
			}
			out[k] = t
		}
	}
	return out
}
