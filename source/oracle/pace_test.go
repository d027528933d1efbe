package oracle

import (
	"context"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
)

// fakeClock advances only when the pacer sleeps or a "query" takes time.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }
func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		panic("sleep of a non-positive duration")
	}
	c.t = c.t.Add(d)
	return ctx.Err()
}

// TestPacerKeepsTheSchedule: queries taking 300 ms, then one of 2.5 s, on a
// 1 s interval. Polls start at whole seconds from the first; the long query
// skips the deadlines it overran (counted) instead of drifting or bursting.
func TestPacerKeepsTheSchedule(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &fakeClock{t: t0}
	p := newPacer(time.Second, c.now, c.sleep)
	queries := []time.Duration{300, 300, 2500, 300, 999, 1000, 0}
	var starts []time.Duration
	for _, q := range queries {
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		starts = append(starts, c.t.Sub(t0))
		c.t = c.t.Add(q * time.Millisecond)
	}
	// 0, 1, 2; the 2.5 s query from 2 s ends at 4.5 s: 3 s and 4 s skipped;
	// 5; the 999 ms query from 5 ends before 6; the 1000 ms one from 6 ends
	// exactly at 7, which is not missed
	want := []time.Duration{0, 1, 2, 5, 6, 7, 8}
	for i := range want {
		if starts[i] != want[i]*time.Second {
			t.Fatalf("poll starts %v, want %v (s)", starts, want)
		}
	}
	if p.skipped != 2 {
		t.Errorf("%d skipped, want 2", p.skipped)
	}
}

// TestPacerCancel: a cancelled context ends the wait.
func TestPacerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := newPacer(time.Hour, time.Now, sleepCtx)
	if err := p.wait(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	start := time.Now()
	if err := p.wait(ctx); err == nil || time.Since(start) > time.Second {
		t.Errorf("wait after cancel: %v after %s", err, time.Since(start))
	}
}

// TestPacerRealClock: with the real clock and 20 ms queries on a 50 ms
// interval, polls stay on the 50 ms grid (within the timer's lateness), not
// 70 ms apart.
func TestPacerRealClock(t *testing.T) {
	const interval = 50 * time.Millisecond
	p := newPacer(interval, time.Now, sleepCtx)
	var starts []time.Time
	for range 6 {
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		starts = append(starts, time.Now())
		time.Sleep(20 * time.Millisecond)
	}
	if p.skipped > 0 {
		t.Skipf("the machine was too busy: %d polls skipped", p.skipped)
	}
	for k, at := range starts {
		ideal := starts[0].Add(time.Duration(k) * interval)
		if at.Before(ideal) || at.Sub(ideal) > 40*time.Millisecond {
			t.Errorf("poll %d at +%s, want +%s", k, at.Sub(starts[0]), ideal.Sub(starts[0]))
		}
	}
}

// TestHistogramRowsMapping: the values the driver returns (time.Time,
// int64, float64) and the TM9 texts map alike; unreadable rows are skipped
// and counted (SYNTHETIC rows).
func TestHistogramRowsMapping(t *testing.T) {
	at := time.Date(2024, 3, 15, 10, 0, 0, 0, time.FixedZone("", 3600))
	r := &rows{columns: selectNames(histogramQueryMicro), values: [][]any{
		{at, int64(1), "2024-03-10 06:00:00", "log file sync", int64(8), float64(12)},
		{"2024-03-15 10:00:00.000000+01:00", "1", "2024-03-10 06:00:00", "log file sync", "4294967295", "3"},
		{"yesterday", int64(1), nil, "log file sync", int64(8), int64(1)},
		{at, int64(1), nil, "log file sync", "eight", int64(1)},
	}}
	out, bad := histogramRows(r, time.UTC, 10)
	if len(out) != 2 || bad != `2 of 4 histogram rows skipped (first: row 13: unreadable time "yesterday")` {
		t.Fatalf("%d rows, %q", len(out), bad)
	}
	for i, o := range out {
		if !o.End.Equal(at) || o.Instance != "1" || o.Unit != hist.Microsecond || o.Line != 11+i ||
			o.Startup != "2024-03-10 06:00:00" || !o.StartupAt.Equal(time.Date(2024, 3, 10, 5, 0, 0, 0, time.UTC)) {
			t.Errorf("row %d: %+v", i, o)
		}
	}
	if out[0].Bound != 8 || out[0].Count != 12 || out[1].Bound != 4294967295 || out[1].Count != 3 {
		t.Errorf("bounds and counts: %+v", out)
	}
	if _, bad := histogramRows(&rows{columns: []string{"X"}}, time.UTC, 0); bad == "" {
		t.Error("a result without the columns is not reported")
	}
}
