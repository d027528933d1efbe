package driver

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/internal/testkit/dbtest"
	"github.com/latscope/latscope/server/jobctl"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/stream"
)

// The issue's fault: "a database job whose server is stopped for 30 s: a
// gap, then data again", as it says. The two servers' tests run in
// parallel, so that together they take one outage's time.
const (
	outageFor   = 30 * time.Second
	faultWindow = 300 * time.Millisecond
)

// TestPostgresJobSurvivesServerOutage runs a serve job on a real
// PostgreSQL, stops the server, starts it again on the same port and
// checks the archive and the job's states.
func TestPostgresJobSurvivesServerOutage(t *testing.T) {
	t.Parallel()
	pg := dbtest.StartPostgres(t, dbtest.PostgresOptions{})
	testJobSurvivesOutage(t, pg.URI, pg.Stop, pg.Start)
}

// TestMariaDBJobSurvivesServerOutage is the same fault on MariaDB. The
// consumers the sampler needs are enabled by startup options, so that the
// restarted server has them too (as a real deployment would).
func TestMariaDBJobSurvivesServerOutage(t *testing.T) {
	t.Parallel()
	m := dbtest.StartMariaDB(t, dbtest.MariaDBOptions{Settings: []string{
		"--performance-schema-consumer-events-waits-current=ON",
		"--performance-schema-consumer-events-waits-history-long=ON",
		"--performance-schema-consumer-events-statements-current=ON",
		"--performance-schema-consumer-events-statements-history-long=ON",
	}})
	testJobSurvivesOutage(t, m.URI(), m.Stop, m.Start)
}

// stateSeen is one state the job was observed in.
type stateSeen struct {
	state jobs.State
	since time.Time
	err   string
}

func testJobSurvivesOutage(t *testing.T, uri string, stop, start func(testing.TB)) {
	arch, err := archive.Open(t.TempDir(), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	job := jobs.Job{Name: "db", Source: jobctl.RedactSource(uri), Interval: faultWindow,
		Open: jobOpener("db", uri, faultWindow, logger)}
	runner, err := jobs.NewRunner([]jobs.Job{job}, arch, jobs.Backoff{Min: 200 * time.Millisecond, Max: time.Second}, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { runner.Run(ctx) })
	states := watchStates(ctx, &wg, runner)

	waitFor(t, runner, 15*time.Second, "data before the outage", func(st jobs.Status) bool {
		return st.State == jobs.Running && st.Intervals >= 4
	})
	stop(t)
	downFrom := time.Now()
	waitFor(t, runner, 10*time.Second, "the job reconnecting", func(st jobs.Status) bool {
		return st.State == jobs.Reconnecting
	})
	time.Sleep(time.Until(downFrom.Add(outageFor)))
	downTo := time.Now()
	start(t)
	var before int64
	waitFor(t, runner, 20*time.Second, "running again", func(st jobs.Status) bool {
		before = st.Intervals
		return st.State == jobs.Running
	})
	waitFor(t, runner, 10*time.Second, "data after the outage", func(st jobs.Status) bool {
		return st.Intervals >= before+3
	})
	final := runner.Status()[0]
	cancel()
	wg.Wait()

	checkStates(t, <-states, downFrom)
	if final.Restarts != 0 {
		t.Errorf("the job restarted %d times: the source should reconnect by itself (and the runner write no gap of its own)", final.Restarts)
	}
	ivs := readArchive(t, arch)
	checkOutageWindows(t, ivs, downFrom, downTo)
	if err := arch.IntegrityCheck(context.Background()); err != nil {
		t.Error(err)
	}
}

// watchStates records every state the runner's only job goes through
// until ctx ends.
func watchStates(ctx context.Context, wg *sync.WaitGroup, runner *jobs.Runner) <-chan []stateSeen {
	out := make(chan []stateSeen, 1)
	wg.Go(func() {
		var seen []stateSeen
		for {
			st := runner.Status()[0]
			if st.Since != nil && (len(seen) == 0 || seen[len(seen)-1].state != st.State) {
				seen = append(seen, stateSeen{st.State, *st.Since, st.LastError})
			}
			select {
			case <-ctx.Done():
				out <- seen
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	return out
}

func waitFor(t *testing.T, runner *jobs.Runner, limit time.Duration, what string, ok func(jobs.Status) bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		st := runner.Status()[0]
		if ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s: %+v", what, limit, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkStates wants running, reconnecting (with the error, since the
// outage began) and running again.
func checkStates(t *testing.T, seen []stateSeen, downFrom time.Time) {
	t.Helper()
	var names []jobs.State
	for _, s := range seen {
		names = append(names, s.state)
	}
	i := slices.Index(names, jobs.Reconnecting)
	if i < 1 || names[i-1] != jobs.Running || i+1 >= len(names) || names[i+1] != jobs.Running {
		t.Fatalf("states %v: want running, reconnecting, running", names)
	}
	r := seen[i]
	if r.err == "" {
		t.Errorf("reconnecting without the last error")
	}
	// The loss is noticed at the first poll after the server went: the
	// stop itself takes a moment, so allow a little before downFrom.
	if r.since.Before(downFrom.Add(-5*time.Second)) || r.since.After(downFrom.Add(5*time.Second)) {
		t.Errorf("reconnecting since %s, the server stopped at %s", r.since.Format(time.StampMilli), downFrom.Format(time.StampMilli))
	}
	t.Logf("states %v; reconnecting since %s (server down at %s): %s", names,
		r.since.Format(time.StampMilli), downFrom.Format(time.StampMilli), r.err)
}

func readArchive(t *testing.T, arch *archive.Archive) []stream.Interval {
	t.Helper()
	var ivs []stream.Interval
	err := arch.Read(context.Background(), archive.Query{Resolution: archive.Raw}, func(iv stream.Interval) error {
		ivs = append(ivs, iv)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ivs, func(a, b stream.Interval) int { return a.Start.Compare(b.Start) })
	return ivs
}

// checkOutageWindows wants data before and after the outage, one gap
// stretch covering the time the server was surely down, and no window
// written twice or overlapping another (the source writes the gap; the
// runner must not add its own).
func checkOutageWindows(t *testing.T, ivs []stream.Interval, downFrom, downTo time.Time) {
	t.Helper()
	var gapFrom, gapTo time.Time
	dataBefore, dataAfter := 0, 0
	for i, iv := range ivs {
		// The archive keeps times to the millisecond: ends and starts of
		// unaligned windows (MariaDB's) may differ by less.
		if i > 0 && iv.Start.Before(ivs[i-1].End().Add(-time.Millisecond)) {
			t.Errorf("window %d (%s, gap %v) overlaps the one before (ending %s)", i, iv.Start.Format(time.StampMilli), iv.Gap, ivs[i-1].End().Format(time.StampMilli))
		}
		switch {
		case iv.Gap && gapFrom.IsZero():
			gapFrom, gapTo = iv.Start, iv.End()
		case iv.Gap && iv.Start.Sub(gapTo).Abs() < time.Millisecond:
			gapTo = iv.End()
		case iv.Gap:
			t.Errorf("a second gap stretch at %s (%s): one outage, one gap", iv.Start.Format(time.StampMilli), iv.Duration)
		case iv.End().Before(downFrom):
			dataBefore++
		case iv.Start.After(downTo):
			dataAfter++
		}
	}
	if gapFrom.IsZero() {
		t.Fatalf("no gap in %d windows", len(ivs))
	}
	if dataBefore == 0 || dataAfter == 0 {
		t.Errorf("data windows: %d before the outage, %d after; want some of each", dataBefore, dataAfter)
	}
	// The window in which the server went may still hold a poll from
	// before, and the one in which it came back one from after: the gap
	// covers the outage but for up to one window at each end.
	if gapFrom.After(downFrom.Add(faultWindow)) || gapTo.Before(downTo.Add(-faultWindow)) {
		t.Errorf("gap %s–%s does not cover the outage %s–%s", gapFrom.Format(time.StampMilli), gapTo.Format(time.StampMilli),
			downFrom.Format(time.StampMilli), downTo.Format(time.StampMilli))
	}
	// Longer than the outage by at most the sources' reconnect backoff
	// (capped at 5 s for PostgreSQL, 10 s for MySQL) and a window.
	if over := gapTo.Sub(gapFrom) - downTo.Sub(downFrom); over > 10*time.Second+2*faultWindow {
		t.Errorf("the gap outlasts the outage by %s", over)
	}
	t.Logf("outage %s (server surely down %s–%s); gap %s (%s–%s); %d windows before, %d after",
		downTo.Sub(downFrom).Round(time.Millisecond), downFrom.Format(time.StampMilli), downTo.Format(time.StampMilli),
		gapTo.Sub(gapFrom).Round(time.Millisecond), gapFrom.Format(time.StampMilli), gapTo.Format(time.StampMilli), dataBefore, dataAfter)
}
