package stream

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
)

// The binner's own tests are synthetic by nature: event times chosen to hit
// each rule (the sources' tests cover it again on real files).

// binTest drives a Binner and keeps what it emits as text.
type binTest struct {
	t     *testing.T
	b     *Binner
	out   []Interval
	late  int
	keys  []string
	made  int // histograms made by NewHist
	trims int // Emitted calls
}

func newBinTest(t *testing.T, cfg BinnerConfig) *binTest {
	bt := &binTest{t: t, keys: []string{"a", "b", "c"}}
	cfg.Source = "src"
	cfg.OnLate = func() { bt.late++ }
	cfg.Key = func(s int) Key { return Key{Event: bt.keys[s]} }
	cfg.NewHist = func(int) *hist.Histogram { bt.made++; return hist.NewExact(hist.Microsecond, 0) }
	cfg.Emitted = func(int, *hist.Histogram) { bt.trims++ }
	cfg.Emit = func(iv Interval) error {
		if err := iv.Validate(); err != nil {
			t.Errorf("emitted an invalid interval: %v", err)
		}
		bt.out = append(bt.out, iv)
		return nil
	}
	bt.b = NewBinner(cfg)
	return bt
}

// add places an event at t and counts it in series s with latency 1 µs per
// unit of s (so that sums tell series apart).
func (bt *binTest) add(t int64, s int) {
	bt.t.Helper()
	if err := bt.b.Place(t); err != nil {
		bt.t.Fatal(err)
	}
	if err := bt.b.Hist(s).Record(float64(s + 1)); err != nil {
		bt.t.Fatal(err)
	}
}

func (bt *binTest) end() {
	bt.t.Helper()
	if err := bt.b.EndRun(); err != nil {
		bt.t.Fatal(err)
	}
}

// text renders the emitted intervals, one per line: "start+duration" (start
// in the binner's units since the epoch, as s.ns), then "series=count" per
// series, or "quiet".
func (bt *binTest) text() string {
	var lines []string
	for _, iv := range bt.out {
		l := fmt.Sprintf("%s+%s", iv.Start.Format("15:04:05.000000"), iv.Duration)
		if len(iv.Series) == 0 {
			l += " quiet"
		}
		for _, s := range iv.Series {
			l += fmt.Sprintf(" %s=%g", s.Key.Event, s.Hist.Count())
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

func (bt *binTest) want(want string) {
	bt.t.Helper()
	want = strings.TrimSpace(strings.ReplaceAll(want, "\t", ""))
	if got := bt.text(); got != want {
		bt.t.Errorf("emitted:\n%s\nwant:\n%s", got, want)
	}
}

const sec = int64(time.Second)

func TestBinnerWindowsQuietAndOrder(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: time.Second})
	bt.add(10*sec+100, 1) // window 10, series b first
	bt.add(10*sec+200, 0) // a
	bt.add(11*sec+5, 0)   // window 11
	bt.add(10*sec+900, 1) // one interval late: still open
	bt.add(14*sec+1, 2)   // closes 10 and 11; 12 and 13 are quiet
	bt.add(15*sec, 0)     // 13 is quiet too: one stretch
	bt.add(17*sec+500, 0) // closes 14 and 15
	bt.add(17*sec+700, 0)
	bt.end()
	bt.want(`
		00:00:10.000000+1s a=1 b=2
		00:00:11.000000+1s a=1
		00:00:12.000000+2s quiet
		00:00:14.000000+1s c=1
		00:00:15.000000+1s a=1
		00:00:16.000000+1s quiet
		00:00:17.000000+1s a=2`)
	if bt.late != 0 {
		t.Errorf("late = %d, want 0", bt.late)
	}
	// One histogram per series and window, each seen by Emitted once.
	if bt.made != 6 || bt.trims != 6 {
		t.Errorf("NewHist made %d, Emitted saw %d, want 6 and 6", bt.made, bt.trims)
	}
	if iv := bt.out[0]; iv.Source != "src" || iv.Relative || iv.Start.Location() != time.UTC {
		t.Errorf("first interval = %+v, want source src on the UTC wall clock", iv)
	}
	if s := bt.out[0].Series[1]; s.Hist.Sum != 4 {
		t.Errorf("sum of b in window 10 = %g µs, want 4", s.Hist.Sum)
	}
}

func TestBinnerQuietStretchBeforeWindowIsOne(t *testing.T) {
	// A quiet stretch found in two steps (two windows skipped, then the
	// window before the newest one stays empty) is one interval.
	bt := newBinTest(t, BinnerConfig{Interval: time.Second})
	bt.add(0, 0)
	bt.add(5*sec, 0)
	bt.add(6*sec, 0)
	bt.end()
	bt.want(`
		00:00:00.000000+1s a=1
		00:00:01.000000+4s quiet
		00:00:05.000000+1s a=1
		00:00:06.000000+1s a=1`)
}

func TestBinnerLateNewRun(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: time.Second})
	bt.add(20*sec, 0)
	bt.add(21*sec+500, 0)
	bt.add(20*sec+499, 1) // more than one interval before the newest: new run
	bt.add(22*sec, 1)     // continues the new run, which overlaps the old one
	bt.end()
	bt.want(`
		00:00:20.000000+1s a=1
		00:00:21.000000+1s a=1
		00:00:20.000000+1s b=1
		00:00:21.000000+1s quiet
		00:00:22.000000+1s b=1`)
	if bt.late != 1 {
		t.Errorf("late = %d, want 1", bt.late)
	}
}

func TestBinnerFirstWindowMayGetEarlierEvent(t *testing.T) {
	// At the start of a run, an event less than one interval older than
	// the first opens the window before it.
	bt := newBinTest(t, BinnerConfig{Interval: time.Second})
	bt.add(5*sec+200, 0)
	bt.add(4*sec+300, 1)
	bt.end()
	bt.want(`
		00:00:04.000000+1s b=1
		00:00:05.000000+1s a=1`)
	if bt.late != 0 {
		t.Errorf("late = %d, want 0", bt.late)
	}
}

func TestBinnerJumpStartsRun(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: time.Second})
	bt.add(0, 0)
	bt.add(int64(maxQuiet), 0) // a month after the newest: still quiet time
	bt.add(int64(2*maxQuiet)+3*sec, 0)
	bt.end()
	if len(bt.out) != 4 {
		t.Fatalf("emitted %d intervals, want 4:\n%s", len(bt.out), bt.text())
	}
	if q := bt.out[1]; len(q.Series) != 0 || q.Duration != maxQuiet-time.Second {
		t.Errorf("second interval = %s+%s with %d series, want the quiet month", q.Start, q.Duration, len(q.Series))
	}
	if got, want := bt.out[3].Start, time.Unix(0, int64(2*maxQuiet)+3*sec).UTC(); !got.Equal(want) {
		t.Errorf("after the jump: start %s, want %s (no quiet interval across it)", got, want)
	}
	if bt.late != 0 {
		t.Errorf("late = %d, want 0 (a jump forward is not late)", bt.late)
	}
}

func TestBinnerRelativeRunsEndToEnd(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: time.Second, Relative: true})
	// A tool's clock from its start: the first run begins in window 0,
	// keeping its offset in the window.
	bt.add(5*sec+300, 0)
	bt.add(7*sec+100, 0)
	bt.add(4*sec+900, 1) // before window 0 of the run: a new run
	bt.add(0, 1)         // the tool started again: another run
	bt.add(sec, 1)
	bt.end()
	bt.want(`
		00:00:00.000000+1s a=1
		00:00:01.000000+1s quiet
		00:00:02.000000+1s a=1
		00:00:03.000000+1s b=1
		00:00:04.000000+1s b=1
		00:00:05.000000+1s b=1`)
	if bt.late != 2 {
		t.Errorf("late = %d, want 2", bt.late)
	}
	for _, iv := range bt.out {
		if !iv.Relative || iv.Start.Location() != time.UTC {
			t.Fatalf("interval at %s: Relative=%v, location %s, want relative UTC", iv.Start, iv.Relative, iv.Start.Location())
		}
	}
}

func TestBinnerLateToOldest(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: time.Second, Late: LateToOldest})
	bt.add(10*sec+500, 0)
	bt.add(9*sec+900, 1)         // before the first window: counted in it
	bt.add(12*sec, 0)            // closes 10
	bt.add(3*sec, 2)             // far back: counted in 11, the oldest window not emitted
	bt.add(int64(2*maxQuiet), 0) // no run ends: one quiet stretch
	bt.end()
	bt.want(fmt.Sprintf(`
		00:00:10.000000+1s a=1 b=1
		00:00:11.000000+1s c=1
		00:00:12.000000+1s a=1
		00:00:13.000000+%s quiet
		00:00:00.000000+1s a=1`, time.Duration(2*maxQuiet-13*time.Second)))
	if bt.late != 2 {
		t.Errorf("late = %d, want 2", bt.late)
	}
}

func TestBinnerFlush(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: time.Second, Late: LateToOldest})
	if err := bt.b.Flush(100 * sec); err != nil || len(bt.out) != 0 {
		t.Fatalf("Flush before any event: %v, %d intervals; want nothing", err, len(bt.out))
	}
	bt.add(10*sec+500, 0)
	bt.add(11*sec+500, 0)
	if err := bt.b.Flush(11*sec + 999); err != nil {
		t.Fatal(err)
	}
	bt.want(`00:00:10.000000+1s a=1`) // 11 has not ended
	if err := bt.b.Flush(14*sec + 1); err != nil {
		t.Fatal(err)
	}
	bt.add(13*sec, 1) // behind what was flushed: counted in window 14
	bt.add(15*sec, 1)
	bt.end()
	bt.want(`
		00:00:10.000000+1s a=1
		00:00:11.000000+1s a=1
		00:00:12.000000+2s quiet
		00:00:14.000000+1s b=1
		00:00:15.000000+1s b=1`)
	if bt.late != 1 {
		t.Errorf("late = %d, want 1", bt.late)
	}
}

func TestBinnerFlushThenLateNewRun(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: time.Second})
	bt.add(10*sec, 0)
	if err := bt.b.Flush(12 * sec); err != nil {
		t.Fatal(err)
	}
	bt.add(11*sec+500, 1) // within an interval of the newest, but window 11 was emitted
	bt.end()
	bt.want(`
		00:00:10.000000+1s a=1
		00:00:11.000000+1s quiet
		00:00:11.000000+1s b=1`)
	if bt.late != 1 {
		t.Errorf("late = %d, want 1", bt.late)
	}
}

func TestBinnerMicrosecondsAndLocation(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	// 2.5 s → 2.5 s; 1.0000005 s is rounded down to whole µs.
	bt := newBinTest(t, BinnerConfig{Interval: 1000000500 * time.Nanosecond, Tick: time.Microsecond, Location: paris})
	if got := bt.b.Interval(); got != time.Second {
		t.Errorf("Interval() = %s, want 1s", got)
	}
	day := time.Date(2026, 11, 22, 4, 49, 45, 0, time.UTC).UnixMicro()
	bt.add(day+310000, 0)
	bt.b.SetLocation(time.UTC) // later windows start in UTC
	bt.add(day+1e6, 0)
	bt.b.SetLocation(nil) // ignored
	bt.end()
	if len(bt.out) != 2 {
		t.Fatalf("emitted %d intervals, want 2", len(bt.out))
	}
	want0 := time.Date(2026, 11, 22, 5, 49, 45, 0, paris)
	if s := bt.out[0].Start; !s.Equal(want0) || s.Location() != time.UTC || s.Hour() != 4 {
		// Emitted after SetLocation(UTC): both windows are in UTC.
		t.Errorf("first start = %s, want %s in UTC", s, want0)
	}
	if d := bt.out[1].Start.Sub(bt.out[0].Start); d != time.Second {
		t.Errorf("windows %s apart, want 1s", d)
	}

	bt = newBinTest(t, BinnerConfig{Interval: time.Second, Tick: time.Microsecond, Location: paris})
	bt.add(day, 0)
	bt.end()
	if s := bt.out[0].Start; !s.Equal(time.UnixMicro(day)) || s.Location() != paris {
		t.Errorf("start = %s, want %s in Europe/Paris", s, time.UnixMicro(day).In(paris))
	}
}

func TestBinnerBeforeEpoch(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: 1500 * time.Millisecond, Tick: time.Microsecond})
	bt.add(-1, 0) // 1 µs before the epoch: window −1
	bt.end()
	if s := bt.out[0].Start; !s.Equal(time.Unix(-2, 5e8)) {
		t.Errorf("start = %s, want 1.5 s before the epoch", s)
	}
}

func TestBinnerIntervalBounds(t *testing.T) {
	for _, c := range []struct{ in, tick, want time.Duration }{
		{0, 0, time.Microsecond},
		{time.Nanosecond, 0, time.Microsecond},
		{100 * 24 * time.Hour, 0, 31 * 24 * time.Hour},
		{1500 * time.Nanosecond, time.Microsecond, time.Microsecond},
		{time.Second, time.Millisecond, time.Second},
	} {
		b := NewBinner(BinnerConfig{Interval: c.in, Tick: c.tick})
		if got := b.Interval(); got != c.want {
			t.Errorf("interval %s, tick %s: Interval() = %s, want %s", c.in, c.tick, got, c.want)
		}
	}
}

func TestBinnerEmitError(t *testing.T) {
	boom := errors.New("boom")
	b := NewBinner(BinnerConfig{Source: "src", Interval: time.Second,
		Key:     func(int) Key { return Key{Event: "a"} },
		NewHist: func(int) *hist.Histogram { return hist.NewExact(hist.Microsecond, 0) },
		Emit:    func(Interval) error { return boom }})
	if err := b.Place(0); err != nil {
		t.Fatal(err)
	}
	_ = b.Hist(0).Record(1)
	if err := b.Place(5 * sec); !errors.Is(err, boom) {
		t.Errorf("Place closing a window: %v, want boom", err)
	}
	if err := b.EndRun(); !errors.Is(err, boom) {
		t.Errorf("EndRun: %v, want boom", err)
	}
}

func TestBinnerNoAllocationPerEvent(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: time.Second})
	for v := range 100 { // grow the histogram first
		bt.add(0, 0)
		_ = bt.b.Hist(0).Record(float64(v))
	}
	i := int64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		_ = bt.b.Place(i * 1000)
		_ = bt.b.Hist(0).Record(float64(i % 100))
	})
	if allocs != 0 {
		t.Errorf("%g allocations per event in an open window, want 0", allocs)
	}
}

// TestBinnerConservesEvents checks random, slightly disordered events
// against an independent computation: under LateToOldest every event is
// counted once, windows come in order, and windows plus quiet stretches
// tile the time from the first window to the last.
func TestBinnerConservesEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const width = 250 * time.Millisecond
	bt := newBinTest(t, BinnerConfig{Interval: width, Late: LateToOldest})
	var times []int64
	now := int64(1_700_000_000) * sec
	for range 20000 {
		now += int64(rng.ExpFloat64() * float64(40*time.Millisecond))
		if rng.IntN(50) == 0 {
			now += int64(rng.IntN(5)) * sec // quiet stretches
		}
		jitter := int64(rng.IntN(int(width))) // up to one interval early
		times = append(times, now-jitter)
		bt.add(now-jitter, rng.IntN(3))
	}
	bt.end()

	total := 0.0
	perWindow := map[int64]float64{}
	for i, iv := range bt.out {
		if i > 0 && !iv.Start.Equal(bt.out[i-1].End()) {
			t.Fatalf("interval %d starts at %s, the previous ended at %s", i, iv.Start, bt.out[i-1].End())
		}
		for _, s := range iv.Series {
			total += s.Hist.Count()
			perWindow[iv.Start.UnixNano()/int64(width)] += s.Hist.Count()
		}
	}
	if total != float64(len(times)) {
		t.Errorf("counted %g events, want %d", total, len(times))
	}
	// Events more than one window behind the newest are moved to the
	// oldest open window; elsewhere each window holds exactly its events.
	want := map[int64]float64{}
	hi, next := int64(-1<<62), int64(-1<<62)
	for _, tm := range times {
		k := tm / int64(width)
		if next == -1<<62 {
			hi, next = k, k
		}
		if k > hi {
			next, hi = max(next, k-1), k
		}
		want[max(k, next)]++
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if perWindow[k] != want[k] {
			t.Fatalf("window %d holds %g events, want %g", k, perWindow[k], want[k])
		}
	}
	if len(perWindow) != len(want) {
		t.Errorf("%d windows with events, want %d", len(perWindow), len(want))
	}
}

func TestBinnerRelativeRunDoesNotReachBack(t *testing.T) {
	bt := newBinTest(t, BinnerConfig{Interval: time.Second, Relative: true})
	bt.add(sec/2, 0) // run 1: windows 0 and 1
	bt.add(sec+7*sec/10, 0)
	bt.add(sec/10, 1)  // late: run 2 starts in window 2, at 2.1 s
	bt.add(0, 1)       // 2.0 s: still window 2
	bt.add(-sec/20, 2) // 1.95 s would reach into run 1's window 1: run 3
	bt.end()
	bt.want(`
		00:00:00.000000+1s a=1
		00:00:01.000000+1s a=1
		00:00:02.000000+1s b=2
		00:00:03.000000+1s c=1`)
	if bt.late != 2 {
		t.Errorf("late = %d, want 2", bt.late)
	}
}

func TestBinnerPlacedWithoutHistIsQuiet(t *testing.T) {
	// An event placed but not recorded (filtered out) still says the
	// source observed its window.
	bt := newBinTest(t, BinnerConfig{Interval: time.Second})
	bt.add(5*sec+200, 0)
	if err := bt.b.Place(4*sec + 300); err != nil {
		t.Fatal(err)
	}
	bt.add(7*sec, 0)
	if err := bt.b.Place(8 * sec); err != nil {
		t.Fatal(err)
	}
	bt.end()
	bt.want(`
		00:00:04.000000+1s quiet
		00:00:05.000000+1s a=1
		00:00:06.000000+1s quiet
		00:00:07.000000+1s a=1
		00:00:08.000000+1s quiet`)
}

// FuzzBinner feeds event times, flushes and run ends and checks that every
// event is counted once in a valid interval and that intervals tile time
// where the binner promises it (one LateToOldest run; relative runs).
func FuzzBinner(f *testing.F) {
	f.Add([]byte{0, 1, 10, 0, 250, 1, 3, 2, 200, 0, 0, 3}, uint8(0))
	f.Add([]byte{1, 1, 10, 0, 250, 1, 3, 2, 200, 0, 0, 3, 255, 127, 1}, uint8(1))
	f.Add([]byte{200, 0, 2, 100, 100, 100, 1, 0, 9, 9, 9}, uint8(6))
	f.Fuzz(func(t *testing.T, ops []byte, mode uint8) {
		late, relative := LatePolicy(mode&1), mode&2 != 0
		tick := []time.Duration{time.Nanosecond, time.Microsecond}[mode>>2&1]
		var out []Interval
		events := 0
		b := NewBinner(BinnerConfig{Source: "f", Interval: 100 * tick, Tick: tick, Relative: relative, Late: late,
			Key:     func(s int) Key { return Key{Event: fmt.Sprint(s)} },
			NewHist: func(int) *hist.Histogram { return hist.NewExact(hist.Microsecond, 0) },
			Emit: func(iv Interval) error {
				if err := iv.Validate(); err != nil {
					t.Fatal(err)
				}
				out = append(out, iv)
				return nil
			}})
		now := int64(mode) << 40
		for i := 0; i+1 < len(ops); i += 2 {
			step := int64(int8(ops[i])) * 7 // −896..889 units: up to 9 intervals
			switch ops[i+1] {
			case 254:
				if err := b.Flush(now + step); err != nil {
					t.Fatal(err)
				}
				continue
			case 255:
				if err := b.EndRun(); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if ops[i+1] == 253 {
				now += 40 * 24 * int64(time.Hour/tick) // over a month
			}
			now += step
			if err := b.Place(now); err != nil {
				t.Fatal(err)
			}
			_ = b.Hist(int(ops[i+1] % 5)).Record(float64(ops[i]))
			events++
		}
		if err := b.EndRun(); err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for _, iv := range out {
			for _, s := range iv.Series {
				total += s.Hist.Count()
			}
		}
		if total != float64(events) {
			t.Fatalf("counted %g events, placed %d", total, events)
		}
		tiles := relative || (late == LateToOldest && !slices.Contains(ops, 255) && !slices.Contains(ops, 253))
		for i := 1; tiles && i < len(out); i++ {
			if !out[i].Start.Equal(out[i-1].End()) {
				t.Fatalf("interval %d starts at %s, the previous ended at %s", i, out[i].Start, out[i-1].End())
			}
		}
	})
}
