package terminal

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

// recorder is a synchronised Out that keeps each Write (Run writes one
// frame per Write) with its time.
type recorder struct {
	mu     sync.Mutex
	writes []string
	times  []time.Time
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, string(p))
	r.times = append(r.times, time.Now())
	return len(p), nil
}

func (r *recorder) frames() ([]string, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...), append([]time.Time(nil), r.times...)
}

// waitFor waits for a frame that satisfies ok and returns it.
func (r *recorder) waitFor(t *testing.T, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	seen := 0
	for time.Now().Before(deadline) {
		frames, _ := r.frames()
		for ; seen < len(frames); seen++ {
			if ok(frames[seen]) {
				return frames[seen]
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	frames, _ := r.frames()
	last := ""
	if len(frames) > 0 {
		last = frames[len(frames)-1]
	}
	t.Fatalf("no frame %s after 5 s; last frame:\n%s", what, last)
	return ""
}

// feedOf returns a closed, buffered feed holding ivs.
func feedOf(ivs ...stream.Interval) <-chan stream.Interval {
	feed := make(chan stream.Interval, len(ivs))
	for _, iv := range ivs {
		feed <- iv
	}
	close(feed)
	return feed
}

// threeSeries is a synthetic recording: reads wait most, then writes; the
// idle SQL*Net event waits longest of all but idle events come last.
func threeSeries(t testing.TB, n int) []stream.Interval {
	var ivs []stream.Interval
	for i := range n {
		ivs = append(ivs, synthetic(t, i, events{
			readKey:  {8000, 9000, 120},
			writeKey: {300, 400},
			idleKey:  {5e6},
		}))
	}
	return ivs
}

func runCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRunOncePrintsEverySeriesInOrder(t *testing.T) {
	var out bytes.Buffer
	err := Run(runCtx(t), feedOf(threeSeries(t, 5)...), Options{Out: &out, Once: true, Plain: true, Size: func() (int, int) { return 100, 30 }})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "\x1b") {
		t.Error("plain output holds escape codes")
	}
	titles := []string{
		"latscope: db file sequential read @orcl1\n",
		"\n\nlatscope: log file parallel write @orcl1\n",
		"\n\nlatscope: SQL*Net message from client @orcl1\n",
	}
	at := 0
	for i, title := range titles {
		j := strings.Index(got[at:], title)
		if j < 0 || (i == 0 && j != 0) {
			t.Fatalf("series %d (%q) not in order in:\n%s", i+1, title, got)
		}
		at += j + len(title)
	}
	for i, want := range []string{"Series 1/3, n/p to switch: db file", "Series 2/3, n/p to switch: log file", "Series 3/3, n/p to switch: SQL*Net"} {
		if !strings.Contains(got, want) {
			t.Errorf("frame %d lacks %q", i+1, want)
		}
	}
	for _, frame := range strings.Split(got, "\n\nlatscope: ") {
		checkFits(t, frame, 100, 30)
	}
	if strings.Count(got, "events 15") != 3 && strings.Count(got, "events 10") != 1 {
		t.Errorf("final frames do not hold every interval:\n%s", got)
	}
}

func TestRunOnceColourAndEmpty(t *testing.T) {
	var out bytes.Buffer
	if err := Run(runCtx(t), feedOf(threeSeries(t, 2)...), Options{Out: &out, Once: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\x1b[48;5;") {
		t.Error("colour output lacks palette escapes")
	}
	for _, frame := range strings.Split(visible(out.String()), "\n\nlatscope: ") {
		checkFits(t, frame, defaultWidth, defaultHeight)
	}
	out.Reset()
	if err := Run(runCtx(t), feedOf(), Options{Out: &out, Once: true}); err != nil || out.Len() != 0 {
		t.Errorf("empty feed: %v, %q", err, out.String())
	}
	if err := Run(runCtx(t), feedOf(), Options{Out: &out}); err != nil || out.Len() != 0 {
		t.Errorf("empty live feed: %v, %q", err, out.String())
	}
	if err := Run(runCtx(t), feedOf(), Options{}); err == nil {
		t.Error("no Out: no error")
	}
}

func TestRunKeys(t *testing.T) {
	t.Parallel()
	keys, press := io.Pipe()
	defer press.Close()
	feed := make(chan stream.Interval)
	var out recorder
	done := make(chan error, 1)
	go func() {
		done <- Run(runCtx(t), feed, Options{Out: &out, Keys: keys, Plain: true, Size: func() (int, int) { return 100, 40 }})
	}()
	for _, iv := range threeSeries(t, 3) {
		feed <- iv
	}
	out.waitFor(t, "with all data", func(f string) bool {
		return strings.Contains(f, "latscope: db file") && strings.Contains(f, "Series 1/3") && strings.Contains(f, "events 9")
	})
	key := func(k string) { press.Write([]byte(k)) }

	key("n")
	out.waitFor(t, "of the second series after n", func(f string) bool {
		return strings.Contains(f, "latscope: log file parallel write") && strings.Contains(f, "Series 2/3")
	})
	// The choice sticks by key when the order changes: writes now wait most.
	feed <- synthetic(t, 3, events{writeKey: {9e6}})
	out.waitFor(t, "still of writes, now first", func(f string) bool {
		return strings.Contains(f, "latscope: log file parallel write") && strings.Contains(f, "Series 1/3")
	})
	key("f")
	out.waitFor(t, "without the intensity map after f", func(f string) bool {
		return strings.Contains(f, "Frequency heat map") && !strings.Contains(f, "Intensity")
	})
	key("i")
	out.waitFor(t, "without the frequency map after i", func(f string) bool {
		return strings.Contains(f, "Intensity heat map") && !strings.Contains(f, "Frequency")
	})
	key("b")
	out.waitFor(t, "with both maps after b", func(f string) bool {
		return strings.Contains(f, "Intensity heat map") && strings.Contains(f, "Frequency heat map")
	})
	key("l")
	out.waitFor(t, "in log scale after l", func(f string) bool { return strings.Contains(f, "log scale") })
	key("\x1b[D") // left arrow: previous series
	out.waitFor(t, "of the last series after ←", func(f string) bool {
		return strings.Contains(f, "latscope: SQL*Net") && strings.Contains(f, "Series 3/3")
	})
	key(" ")
	out.waitFor(t, "paused", func(f string) bool { return strings.Contains(f, "PAUSED") })
	// Paused: data is consumed but the display is frozen.
	feed <- synthetic(t, 4, events{idleKey: {1}})
	time.Sleep(300 * time.Millisecond)
	frames, _ := out.frames()
	if last := frames[len(frames)-1]; !strings.Contains(last, "PAUSED") || strings.Contains(last, "events 4 ") {
		t.Errorf("paused view changed:\n%s", last)
	}
	key(" ")
	out.waitFor(t, "resumed with the new data", func(f string) bool {
		return !strings.Contains(f, "PAUSED") && strings.Contains(f, "events 4\n")
	})
	key("q")
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("q: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("q did not end Run")
	}
}

func TestRunCtrlCAndContext(t *testing.T) {
	t.Parallel()
	// Ctrl-C (byte 3 in raw mode) quits a replay waiting for data.
	feed := make(chan stream.Interval)
	var out recorder
	err := Run(runCtx(t), feed, Options{Out: &out, Keys: strings.NewReader("\x03"), Replay: true})
	if err != nil {
		t.Errorf("Ctrl-C: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	if err := Run(ctx, feed, Options{Out: &out}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled live view: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	if err := Run(ctx, feed, Options{Out: &out, Replay: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled replay: %v", err)
	}
}

// sampleOf returns the sample number in a frame's footer.
func sampleOf(frame string) string {
	i := strings.Index(frame, "  sample ")
	if i < 0 {
		return ""
	}
	rest := frame[i+len("  sample "):]
	return rest[:strings.IndexByte(rest, '\n')]
}

func TestRunReplayDefaultPacing(t *testing.T) {
	t.Parallel()
	ivs := threeSeries(t, 20)
	feed := make(chan stream.Interval) // unbuffered: shows the back-pressure
	var sent atomic.Int32
	go func() {
		defer close(feed)
		for _, iv := range ivs {
			feed <- iv
			sent.Add(1)
		}
	}()
	var out recorder
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- Run(runCtx(t), feed, Options{Out: &out, Replay: true, Plain: true}) }()
	time.Sleep(500 * time.Millisecond)
	// One column per frame at 10 frames/s, reading one interval ahead.
	if n := sent.Load(); n > 8 {
		t.Errorf("%d of 20 intervals read after 0.5 s: the replay does not pace its reads", n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if elapsed < 1500*time.Millisecond || elapsed > 3500*time.Millisecond {
		t.Errorf("20 columns took %v, want about 2 s", elapsed)
	}
	frames, _ := out.frames()
	if len(frames) != 20 {
		t.Errorf("%d frames, want one per column (20)", len(frames))
	}
	for i, f := range frames {
		if got, want := sampleOf(f), strconv.Itoa(i+1); got != want {
			t.Errorf("frame %d shows %s columns, want %s", i+1, got, want)
		}
	}
}

func TestRunReplaySpeed(t *testing.T) {
	t.Parallel()
	// 20 one-second intervals at 20× take (19 s between the first and last
	// ends)/20 = 0.95 s.
	var out recorder
	start := time.Now()
	if err := Run(runCtx(t), feedOf(threeSeries(t, 20)...), Options{Out: &out, Replay: true, Plain: true, Speed: 20}); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if elapsed < 800*time.Millisecond || elapsed > 1600*time.Millisecond {
		t.Errorf("speed 20: %v, want about 0.95 s", elapsed)
	}
	frames, _ := out.frames()
	if last := frames[len(frames)-1]; !strings.Contains(last, "events 60\n") {
		t.Errorf("final frame lacks some data:\n%s", last)
	}
	// 1000×: several intervals per frame, never more than 10 frames/s.
	var fast recorder
	start = time.Now()
	if err := Run(runCtx(t), feedOf(threeSeries(t, 20)...), Options{Out: &fast, Replay: true, Plain: true, Speed: 1000}); err != nil {
		t.Fatal(err)
	}
	elapsed = time.Since(start)
	if elapsed > 700*time.Millisecond {
		t.Errorf("speed 1000: %v", elapsed)
	}
	frames, times := fast.frames()
	checkFrameRate(t, times)
	if last := frames[len(frames)-1]; !strings.Contains(last, "events 60\n") {
		t.Errorf("final frame lacks some data:\n%s", last)
	}
}

// checkFrameRate fails when two frames are less than 100 ms apart (with a
// little slack for timer jitter).
func checkFrameRate(t *testing.T, times []time.Time) {
	t.Helper()
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d < 90*time.Millisecond {
			t.Errorf("frames %d and %d are %v apart", i, i+1, d)
		}
	}
}

func TestRunLiveCoalesces(t *testing.T) {
	t.Parallel()
	feed := make(chan stream.Interval)
	go func() {
		defer close(feed)
		for i := range 300 {
			feed <- synthetic(t, i, events{readKey: {100}})
			time.Sleep(3 * time.Millisecond)
		}
	}()
	var out recorder
	start := time.Now()
	if err := Run(runCtx(t), feed, Options{Out: &out, Plain: true}); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	frames, times := out.frames()
	checkFrameRate(t, times)
	if max := int(elapsed/frameInterval) + 1; len(frames) > max || len(frames) < 3 {
		t.Errorf("%d frames in %v", len(frames), elapsed)
	}
	if last := frames[len(frames)-1]; !strings.Contains(last, "events 300\n") {
		t.Errorf("final frame lacks some data:\n%s", last)
	}
	for i, f := range frames {
		if i > 0 && !strings.HasPrefix(f, "\nlatscope: ") {
			t.Errorf("frame %d is not separated by a blank line: %q", i+1, f[:min(len(f), 20)])
		}
	}
}

func TestRunFullScreen(t *testing.T) {
	t.Parallel()
	var out recorder
	err := Run(runCtx(t), feedOf(threeSeries(t, 3)...), Options{Out: &out, Replay: true, FullScreen: true, Size: func() (int, int) { return 90, 30 }})
	if err != nil {
		t.Fatal(err)
	}
	frames, _ := out.frames()
	all := strings.Join(frames, "")
	if !strings.HasPrefix(all, escEnterFullScreen) {
		t.Errorf("does not enter the alternate screen: %q", all[:min(len(all), 30)])
	}
	// Each frame clears and homes first and ends without a newline.
	draws := frames[1 : len(frames)-1]
	if len(draws) < 3 {
		t.Fatalf("%d frames drawn", len(draws))
	}
	for i, f := range draws {
		if !strings.HasPrefix(f, escClearHome) || strings.HasSuffix(f, "\n") {
			t.Errorf("frame %d: %q…%q", i+1, f[:min(len(f), 20)], f[max(0, len(f)-10):])
		}
		checkFits(t, strings.ReplaceAll(strings.TrimPrefix(f, escClearHome), "\r\n", "\n"), 90, 30)
	}
	// On exit: restore, then the last frame once more on the normal screen.
	exit := frames[len(frames)-1]
	if !strings.HasPrefix(exit, escLeaveFullScreen) || !strings.HasSuffix(exit, "\r\n") {
		t.Errorf("exit sequence %q…", exit[:min(len(exit), 30)])
	}
	last := strings.TrimPrefix(draws[len(draws)-1], escClearHome)
	if strings.TrimSuffix(strings.TrimPrefix(exit, escLeaveFullScreen), "\r\n") != last {
		t.Error("the last frame is not printed again on the normal screen")
	}
}

func TestRunResizeAndTinyTerminals(t *testing.T) {
	t.Parallel()
	var size atomic.Int64
	size.Store(80<<16 | 24)
	getSize := func() (int, int) { s := size.Load(); return int(s >> 16), int(s & 0xffff) }
	feed := make(chan stream.Interval)
	var out recorder
	done := make(chan error, 1)
	go func() { done <- Run(runCtx(t), feed, Options{Out: &out, Plain: true, Size: getSize}) }()
	for _, iv := range threeSeries(t, 4) {
		feed <- iv
	}
	out.waitFor(t, "with all data", func(f string) bool { return strings.Contains(f, "events 12\n") })
	time.Sleep(3 * frameInterval / 2)
	for _, sz := range [][2]int{{40, 12}, {1, 1}, {5, 3}, {13, 7}, {160, 50}} {
		before, _ := out.frames()
		size.Store(int64(sz[0])<<16 | int64(sz[1]))
		seen := 0
		f := out.waitFor(t, "after a resize", func(string) bool { seen++; return seen > len(before) })
		checkFits(t, strings.TrimPrefix(f, "\n"), sz[0], sz[1])
		if sz[0] == 160 && !strings.Contains(f, "Frequency heat map: events per second") {
			t.Errorf("160×50 frame:\n%s", f)
		}
	}
	close(feed)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestRunStayOpenAfterTheReplayEnds(t *testing.T) {
	t.Parallel()
	keys, press := io.Pipe()
	defer press.Close()
	var out recorder
	done := make(chan error, 1)
	go func() {
		done <- Run(runCtx(t), feedOf(threeSeries(t, 3)...), Options{Out: &out, Keys: keys, Plain: true, Replay: true,
			StayOpen: true, Size: func() (int, int) { return 100, 40 }})
	}()
	out.waitFor(t, "the last column", func(f string) bool { return strings.Contains(f, "Series 1/3") && strings.Contains(f, "events 9") })
	select {
	case err := <-done:
		t.Fatalf("Run returned (%v) at the end of the replay; StayOpen should wait for q", err)
	case <-time.After(300 * time.Millisecond):
	}
	press.Write([]byte("n"))
	out.waitFor(t, "the second series after the end", func(f string) bool { return strings.Contains(f, "Series 2/3") })
	press.Write([]byte("q"))
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("q: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("q did not end the view")
	}
}
