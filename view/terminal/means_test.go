package terminal

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// meanFeed is SYNTHETIC: what a pg_stat_statements sampler emits, 1 s
// windows of one statement's calls and total time (ms): 10/25, 20/20,
// none, a gap, 4/40.
func meanFeed() []stream.Interval {
	t0 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	key := stream.Key{Event: "select 1", Instance: "db1"}
	ivs := []stream.Interval{}
	for i, m := range []struct {
		n, ms float64
		gap   bool
	}{{10, 25, false}, {20, 20, false}, {0, 0, false}, {0, 0, true}, {4, 40, false}} {
		iv := stream.Interval{Source: "pg", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second, Gap: m.gap}
		if m.n > 0 {
			iv.Means = []stream.SeriesMean{{Key: key, Count: m.n, Sum: m.ms, Unit: hist.Millisecond}}
		}
		ivs = append(ivs, iv)
	}
	return ivs
}

// meanLinesOf tracks a feed as the live view does.
func meanLinesOf(ivs []stream.Interval) []MeanLine {
	tr := newMeanTracker()
	for _, iv := range ivs {
		tr.Add(iv)
	}
	return meanLines(tr)
}

func TestMeanLines(t *testing.T) {
	lines := meanLinesOf(meanFeed())
	if len(lines) != 1 || lines[0].Name != "select 1 @db1" || lines[0].LastMean != 10e6 || lines[0].LastRate != 4 {
		t.Fatalf("lines %+v", lines)
	}
	want := []float64{2.5e6, 1e6, math.NaN(), math.NaN(), 10e6}
	for i, v := range lines[0].Recent {
		if v != want[i] && !(math.IsNaN(v) && math.IsNaN(want[i])) {
			t.Errorf("recent[%d] = %v, want %v", i, v, want[i])
		}
	}
}

func TestRenderMeans(t *testing.T) {
	lines := meanLinesOf(meanFeed())
	for _, c := range []struct {
		plain bool
		want  string
	}{
		// 2.5ms, 1ms, none, gap, 10ms between 1 and 10 ms: levels 1, 0, 7.
		{false, meanHeader + "\nselect 1 @db1  ▂▁  █ mean 10ms 4/s\n"},
		{true, meanHeader + "\nselect 1 @db1  ._  # mean 10ms 4/s\n"},
	} {
		var buf bytes.Buffer
		RenderMeans(&buf, lines, 80, 5, c.plain)
		if buf.String() != c.want {
			t.Errorf("plain %v:\n%q\nwant\n%q", c.plain, buf.String(), c.want)
		}
	}
	var buf bytes.Buffer
	RenderMeans(&buf, lines, 20, 5, true)
	if got := buf.String(); got != meanHeader[:20]+"\nselect 1 @db1 mean 1\n" {
		t.Errorf("narrow: %q", got)
	}
	buf.Reset()
	RenderMeans(&buf, lines, 80, 1, true)
	if buf.Len() != 0 {
		t.Errorf("one line is too few for a header and a series: %q", buf.String())
	}
}

// A live view with heat-map series and mean series keeps the screen size
// and lists the means under the map; a feed with only means prints them.
func TestRunShowsMeans(t *testing.T) {
	ivs := threeSeries(t, 5)
	for i, m := range meanFeed() {
		ivs[i].Means = m.Means
		ivs[i].Source = "pg"
	}
	var out recorder
	if err := Run(runCtx(t), feedOf(ivs...), Options{Out: &out, Plain: true, Size: func() (int, int) { return 100, 30 }}); err != nil {
		t.Fatal(err)
	}
	frames, _ := out.frames()
	last := frames[len(frames)-1]
	if !strings.Contains(last, meanHeader+"\nselect 1 @db1  ._  # mean 10ms 4/s\n") {
		t.Errorf("last frame lacks the mean line:\n%s", last)
	}
	checkFits(t, strings.TrimPrefix(last, "\n"), 100, 30)
	var once bytes.Buffer
	if err := Run(runCtx(t), feedOf(meanFeed()...), Options{Out: &once, Once: true, Plain: true, Size: func() (int, int) { return 100, 30 }}); err != nil {
		t.Fatal(err)
	}
	if got := once.String(); got != meanHeader+"\nselect 1 @db1  ._  # mean 10ms 4/s\n" {
		t.Errorf("once with only means: %q", got)
	}
}

// TestRenderHostFigures: a host figure's line shows its value with its
// symbol, no mean latency and no rate. SYNTHETIC %util windows: 10 %,
// 40 %, 12.5 % (levels 0, 7, 1).
func TestRenderHostFigures(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	tr := newMeanTracker()
	for i, busy := range []float64{100, 400, 125} {
		tr.Add(stream.Interval{Source: "host:db1", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Means: []stream.SeriesMean{{Key: stream.Key{Event: "disk.%util", Instance: "sda"}, Count: 1000, Sum: busy * 100,
				Unit: stream.QuantityUnit, Quantity: stream.Percent}}})
	}
	var buf bytes.Buffer
	RenderMeans(&buf, meanLines(tr), 60, 5, true)
	if want := meanHeader + "\ndisk.%util @sda  _#. 12.5%\n"; buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
}

// TestRunMeansAlone: a live view of mean series alone (host:) gives them
// the screen under its title, not a third of it. SYNTHETIC: 40 series.
func TestRunMeansAlone(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	var ivs []stream.Interval
	for i := range 3 {
		var ms []stream.SeriesMean
		for d := range 40 {
			ms = append(ms, stream.SeriesMean{Key: stream.Key{Event: "disk.%util", Instance: fmt.Sprintf("sd%02d", d)}, Count: 1000,
				Sum: float64(100 * (i + d)), Unit: stream.QuantityUnit, Quantity: stream.Percent})
		}
		ivs = append(ivs, stream.Interval{Source: "host:db1", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second, Means: ms})
	}
	var out recorder
	if err := Run(runCtx(t), feedOf(ivs...), Options{Out: &out, Plain: true, Size: func() (int, int) { return 100, 30 }}); err != nil {
		t.Fatal(err)
	}
	frames, _ := out.frames()
	last := strings.TrimPrefix(frames[len(frames)-1], "\n")
	checkFits(t, last, 100, 30)
	if !strings.Contains(last, "mean series only: no latency map") || strings.Count(last, "disk.%util @sd") != 27 {
		t.Errorf("a screen of means alone: title, a line, the header and 27 series; got\n%s", last)
	}
}
