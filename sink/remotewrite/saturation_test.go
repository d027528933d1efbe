package remotewrite

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"

	"github.com/latscope/latscope/internal/testkit/promtest"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/stream"
)

// TestPrometheusSaturation finds how many latscope series at one sample
// a second one Prometheus 2.42 takes on this machine: a load mode of the
// sender (its mapping and wire encoding, without archive or spool, so
// that the generator is as light as it can be) sends real histograms,
// the 10046 trace's intervals cycled per host, for a number of series
// that doubles each step, at real time, until Prometheus appends less
// than it is sent or a second's requests take longer than the second.
// docs/fleet.md "Scale" records the figures. It runs only with
// LATSCOPE_LOADBENCH=1 (make bench); LATSCOPE_LOADBENCH_SATCLASSIC=1 sends
// classic buckets, LATSCOPE_LOADBENCH_SATSECONDS sets each step's length
// (20), LATSCOPE_LOADBENCH_SATFROM the first (1000) and
// LATSCOPE_LOADBENCH_SATSERIES the largest (256000).
func TestPrometheusSaturation(t *testing.T) {
	if os.Getenv("LATSCOPE_LOADBENCH") != "1" {
		t.Skip("a load benchmark: make bench runs it (LATSCOPE_LOADBENCH=1)")
	}
	native := os.Getenv("LATSCOPE_LOADBENCH_SATCLASSIC") != "1"
	seconds, most := envInt("LATSCOPE_LOADBENCH_SATSECONDS", 20), envInt("LATSCOPE_LOADBENCH_SATSERIES", 256000)
	store := promtest.Start(t, promtest.Options{NativeHistograms: true, RemoteWriteReceiver: true})
	ivs := traceIntervals(t)
	kind := map[bool]string{true: "native", false: "classic"}[native]
	t.Logf("%s: series  samples due/s  sent/s  appended/s  Prometheus CPU %%  µs per sample  generator CPU %%  late seconds", kind)
	for step, series := 0, envInt("LATSCOPE_LOADBENCH_SATFROM", 1000); series <= most; step, series = step+1, series*2 {
		r := saturationStep(t, store, ivs, step, series, seconds, native)
		t.Logf("%s: %7d %13.0f %7.0f %11.0f %16.1f %14.1f %16.1f %13d", kind, r.series, r.due, r.sent, r.appended, r.promCPU, 1e4*r.promCPU/r.appended, r.genCPU, r.late)
		switch {
		case r.appended < 0.95*r.sent:
			t.Logf("%s: Prometheus fell behind at %d series a second: it appended %.0f of %.0f samples/s", kind, r.series, r.appended, r.sent)
			return
		case r.sent < 0.9*r.due:
			t.Logf("%s: this machine could not send %.0f samples/s (%d series) beside Prometheus: %.0f sent, all appended; Prometheus %.0f %% and the generator %.0f %% of a core (%d of %d seconds late)",
				kind, r.due, r.series, r.sent, r.promCPU, r.genCPU, r.late, seconds)
			return
		}
	}
	t.Logf("%s: Prometheus kept up with %d series a second (LATSCOPE_LOADBENCH_SATSERIES)", kind, most)
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// traceIntervals are the 10046 trace's intervals with series (several
// events each), from knownRecording.
func traceIntervals(t *testing.T) []stream.Interval {
	var out []stream.Interval
	for _, iv := range knownRecording(t, time.Now()) {
		if iv.Source == "trace" && len(iv.Series) > 1 {
			out = append(out, iv)
		}
	}
	if len(out) == 0 {
		t.Fatal("no trace intervals")
	}
	return out
}

type saturation struct {
	series             int
	due                float64 // samples per second at one sample per series a second
	sent, appended     float64 // samples per second
	promCPU, genCPU    float64 // % of one core
	late               int     // seconds whose requests ended after the second
	requests, failures int
}

// saturationStep sends `series` series (hosts of the trace's events,
// cumulative through a promnative mapper) each second for `seconds`,
// measuring from the third second on.
func saturationStep(t *testing.T, store *promtest.Server, ivs []stream.Interval, step, series, seconds int, native bool) saturation {
	t.Helper()
	mapper := promnative.NewMapper(promnative.Options{MaxEventsPerJob: -1})
	enc := &Sender{opts: Options{Native: native}}
	perHost := len(promnative.NewMapper(promnative.Options{MaxEventsPerJob: -1}).Add("probe", ivs[0]))
	hosts := max(1, series/perHost)
	post := &poster{url: store.WriteURL(), client: &http.Client{}, auth: func(*http.Request) error { return nil }, timeout: 30 * time.Second}
	const workers, batch = 16, 2000
	var r saturation
	var mu sync.Mutex
	start := time.Now().Truncate(time.Second).Add(time.Second)
	var promBefore, genBefore time.Duration
	var appBefore, sentBefore float64
	var sentTotal float64
	for tick := range seconds + 2 {
		at := start.Add(time.Duration(tick) * time.Second)
		time.Sleep(time.Until(at))
		if tick == 2 {
			promBefore, genBefore = store.CPU(t), promtest.ProcessCPU(t, os.Getpid())
			appBefore, sentBefore = store.Appended(t), sentTotal
		}
		// Each host's next interval, stamped now, through the mapper;
		// requests go out as they fill, to `workers` connections.
		var wg sync.WaitGroup
		next := make(chan writeRequest, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for req := range next {
					err := post.post(context.Background(), snappy.Encode(nil, req.marshal()))
					mu.Lock()
					r.requests++
					if err != nil {
						r.failures++
						if r.failures == 1 {
							t.Logf("%v", err)
						}
					}
					mu.Unlock()
				}
			}()
		}
		var cur writeRequest
		n := 0
		for h := range hosts {
			iv := ivs[(tick+h)%len(ivs)]
			iv.Start, iv.Duration = at.Add(-time.Second), time.Second
			for _, s := range mapper.Add(fmt.Sprintf("s%d-host%06d", step, h), iv) {
				cur.Series = append(cur.Series, enc.timeSeries(s)...)
				n++
				if len(cur.Series) >= batch {
					sentTotal += float64(sampleCount(cur))
					next <- cur
					cur = writeRequest{}
				}
			}
		}
		if len(cur.Series) > 0 {
			sentTotal += float64(sampleCount(cur))
			next <- cur
		}
		close(next)
		wg.Wait()
		if tick >= 2 && time.Since(at) > time.Second {
			r.late++
		}
		r.series = n
	}
	// The measured ticks are seconds long unless their sends ran over.
	wall := max(time.Since(start.Add(2*time.Second)), time.Duration(seconds)*time.Second)
	r.sent = (sentTotal - sentBefore) / wall.Seconds()
	r.due = (sentTotal - sentBefore) / float64(seconds)
	r.appended = (store.Appended(t) - appBefore) / wall.Seconds()
	r.promCPU = 100 * float64(store.CPU(t)-promBefore) / float64(wall)
	r.genCPU = 100 * float64(promtest.ProcessCPU(t, os.Getpid())-genBefore) / float64(wall)
	return r
}

// sampleCount is the samples and histograms of a request.
func sampleCount(req writeRequest) int {
	n := 0
	for _, ts := range req.Series {
		n += len(ts.Samples) + len(ts.Histograms)
	}
	return n
}
