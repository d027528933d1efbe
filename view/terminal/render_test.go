package terminal

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/")

// screen builds the frame of the first series of g for a w×h terminal with
// Layout, as Run does, and renders it.
func screen(t testing.TB, g *stream.Grid, w, h int, o RenderOptions) string {
	t.Helper()
	return screenScaled(t, g, w, h, o, heatmap.Linear)
}

func screenScaled(t testing.TB, g *stream.Grid, w, h int, o RenderOptions, scale heatmap.Scale) string {
	t.Helper()
	o.Width, o.Height = w, h
	cols, rows := Layout(w, h, o.Show)
	series := g.Series()
	if len(series) == 0 {
		t.Fatal("grid has no series")
	}
	f := heatmap.Build(g, series[0], heatmap.Options{Columns: cols, MaxRows: rows, MinRows: min(rows, 10), Scale: scale})
	var b bytes.Buffer
	Render(&b, f, o)
	checkFits(t, b.String(), w, h)
	return b.String()
}

// mapCells returns the map cells of the lines whose label is label, in
// screen order (frequency map first): the cells between the label column
// and the latest values.
func mapCells(t testing.TB, screen, label string, mapW int) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		r := []rune(l)
		if len(r) < labelWidth+mapW || strings.TrimSpace(string(r[:labelWidth])) != label {
			continue
		}
		out = append(out, string(r[labelWidth:labelWidth+mapW]))
	}
	return out
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("screen differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

func TestRenderPlainKnownGrid(t *testing.T) {
	g := knownGrid(t)
	got := screen(t, g, 80, 40, RenderOptions{Plain: true, SeriesIndex: 1, SeriesCount: 3})
	golden(t, "known-80x40.txt", got)
	cols, _ := Layout(80, 40, Both)
	if cols != 51 {
		t.Fatalf("80 wide: %d columns, want 51", cols)
	}
	// Cells: columns 0..3 are right-aligned; column 2 is a gap (' '),
	// column 1 observed with no events ('.').
	cases := []struct {
		label     string
		freq, int string
	}{
		{"16.4ms", ".. .", ".. ."},
		{"4.1ms", "1. .", "6. ."}, // 1 ev/s of 10 → level 1; 5 ms/s of 5 → 6
		{"128µs", ".. 2", ".. 1"}, // 2 ev/s → ceil(1.2) = 2; 0.4 ms/s of 5 → 1
		{"64µs", "6. .", "2. ."},  // 10 ev/s → 6; 1 ms/s of 5 → ceil(1.2) = 2
		{"32µs", ".. .", ".. ."},  // padding row (MinRows 10)
	}
	for _, c := range cases {
		cells := mapCells(t, got, c.label, cols)
		if len(cells) != 2 {
			t.Fatalf("row %s: %d lines, want 2 (one per map)", c.label, len(cells))
		}
		if want := strings.Repeat(" ", cols-4) + c.freq; cells[0] != want {
			t.Errorf("frequency row %s: %q, want %q", c.label, cells[0], want)
		}
		if want := strings.Repeat(" ", cols-4) + c.int; cells[1] != want {
			t.Errorf("intensity row %s: %q, want %q", c.label, cells[1], want)
		}
	}
	lines := strings.Split(got, "\n")
	if lines[0] != "latscope: db file sequential read @orcl1" {
		t.Errorf("title %q", lines[0])
	}
	if !strings.HasPrefix(lines[2], " 16.4ms ") {
		t.Errorf("top row first: %q", lines[2])
	}
	for _, want := range []string{
		"Frequency heat map: events per second", "Intensity heat map: time waited per second (ms/s)",
		// latest values: 2 ev/s and 0.4 ms/s in row 128µs
		".. 2       2  max 10", ".. 1     0.4  max 5",
		// legend: levels with the lower end of their range, linear 6ths of the max
		".. 0", "11 >0", "22 >1.67", "66 >8.33", "22 >0.833",
		// axis: the span of the 4 visible columns, the newest column total and the largest one
		"03:04:05 - 03:04:09      Σ2  maxΣ 11", "Σ0.4  maxΣ 6",
		// footer: (10·100 + 5000 + 2·200) µs / 13 events = 492 µs
		"Overall  avg 492µs  p50 100µs  p99 5.02ms  events 13",
		"Latest   avg 200µs  p50 201µs  p99 202µs  events 2  interval 1s  sample 3",
		"Date 2024-01-02T03:04:09+02:00  Series 1/3, n/p to switch: db file sequential re",
		"linear scale",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Error("plain screen holds escape codes")
	}
	if strings.Contains(got, "sum estimated") || strings.Contains(got, "capped") {
		t.Error("exact, uncapped sums flagged")
	}
}

func TestRenderColour(t *testing.T) {
	g := knownGrid(t)
	got := screen(t, g, 80, 40, RenderOptions{SeriesIndex: 1, SeriesCount: 1})
	for _, want := range []string{
		// row 64µs of the frequency map: level 6, zero, gap (default
		// background), zero, then the colours are reset.
		"\x1b[48;5;21m \x1b[48;5;15m \x1b[0m \x1b[48;5;15m \x1b[0m",
		"\x1b[48;5;51m",  // frequency level 1
		"\x1b[48;5;196m", // intensity level 6
		"\x1b[48;5;226m", // intensity level 1
	} {
		if !strings.Contains(got, want) {
			t.Errorf("colour screen lacks %q", want)
		}
	}
	for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		// Row 16.4ms: three observed zero cells and the zero swatch of the
		// legend, each cell with its escape.
		if strings.HasPrefix(l, " 16.4ms") && strings.Count(l, "\x1b[48;5;15m ") != 5 {
			t.Errorf("row 16.4ms: %q", l)
		}
		if strings.Contains(l, "\x1b") && !strings.HasSuffix(l, "\x1b[0m") {
			t.Errorf("line %d does not end with a reset: %q", i+1, l)
		}
	}
	if visible(got) == got {
		t.Error("no escapes in colour mode")
	}
	plain := screen(t, g, 80, 40, RenderOptions{Plain: true, SeriesIndex: 1, SeriesCount: 1})
	if a, b := strings.Count(got, "\n"), strings.Count(plain, "\n"); a != b {
		t.Errorf("colour screen has %d lines, plain %d", a, b)
	}
}

func TestRenderLogScaleAndPause(t *testing.T) {
	g := knownGrid(t)
	got := screenScaled(t, g, 80, 40, RenderOptions{Plain: true, Paused: true}, heatmap.Log)
	for _, want := range []string{"PAUSED  latscope: db file", "log scale", "11 ≥1", "max 10"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	// Log levels: 1 + floor(6·ln(v/1)/ln(10/1)): 10 → 6, 2 → 2, 1 → 1.
	if cells := mapCells(t, got, "128µs", 51); !strings.HasSuffix(cells[0], ".. 2") {
		t.Errorf("log level of 2 ev/s: %q", cells[0])
	}
}

func TestRenderFlagsAndEstimatedSums(t *testing.T) {
	// Synthetic Oracle-like buckets: 5 waits in [4,8) ms and one in the open
	// top bucket from 1024 ms.
	h := hist.NewBuckets(hist.Millisecond)
	if err := h.AddBound(hist.UpperBound, 8, 5); err != nil {
		t.Fatal(err)
	}
	if err := h.AddOpenTop(1024, 1); err != nil {
		t.Fatal(err)
	}
	g := stream.NewGrid(0)
	g.Add(stream.Interval{Source: "s", Start: t0, Duration: 3 * time.Second, Series: []stream.SeriesHist{{Key: readKey, Hist: h}}})
	got := screen(t, g, 120, 40, RenderOptions{Plain: true})
	for _, want := range []string{"linear scale  sum estimated from bucket midpoints  top bucket capped", "interval 3s", "Series: db file"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	// (5·6 ms + 1536 ms)/3 s = 0.52 s waited per second, below 1: ms/s.
	if !strings.Contains(got, "(ms/s)") {
		t.Errorf("intensity unit:\n%s", got)
	}
}

func TestRenderSecondsPerSecond(t *testing.T) {
	g := stream.NewGrid(time.Second)
	// 3 waits of 0.5 s in one second: 1.5 s waited per second.
	g.Add(synthetic(t, 0, events{readKey: {500000, 500000, 500000}}))
	got := screen(t, g, 120, 40, RenderOptions{Plain: true, Show: IntensityOnly})
	for _, want := range []string{"(s/s)", "maxΣ 1.5"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Frequency") {
		t.Error("IntensityOnly shows the frequency map")
	}
}

func TestRenderRelativeTimes(t *testing.T) {
	g := stream.NewGrid(time.Second)
	for i := range 3 {
		iv := synthetic(t, i, events{readKey: {100}})
		iv.Start, iv.Relative = stream.RelativeStart.Add(time.Duration(60+i)*time.Second), true
		g.Add(iv)
	}
	got := screen(t, g, 100, 30, RenderOptions{Plain: true, Show: FrequencyOnly})
	for _, want := range []string{"+01:00 - +01:03", "Elapsed +01:03"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Intensity") {
		t.Error("FrequencyOnly shows the intensity map")
	}
}

func TestRenderManyColumnsPutsStartUnderFirstColumn(t *testing.T) {
	g := stream.NewGrid(time.Second)
	for i := range 200 {
		g.Add(synthetic(t, i, events{readKey: {float64(10 + i)}}))
	}
	got := screen(t, g, 80, 40, RenderOptions{Plain: true, Show: FrequencyOnly})
	// 51 columns shown: the newest ends at t0+200s = 03:07:25.
	axis := "        03:06:34" + strings.Repeat(" ", 51-16) + "03:07:25"
	if !strings.Contains(got, axis+"      Σ1") {
		t.Errorf("axis line missing %q:\n%s", axis, got)
	}
}

func TestRenderEmptyFrame(t *testing.T) {
	var b bytes.Buffer
	Render(&b, heatmap.Frame{Label: "waiting for data"}, RenderOptions{Width: 80, Height: 24, Plain: true})
	if got := b.String(); got != "latscope: waiting for data\nno data yet\n" {
		t.Errorf("empty frame %q", got)
	}
	b.Reset()
	Render(&b, heatmap.Frame{}, RenderOptions{Width: 0, Height: 10})
	Render(&b, heatmap.Frame{}, RenderOptions{Width: 10, Height: -1})
	Render(nil, heatmap.Frame{}, RenderOptions{Width: 10, Height: 10})
	if b.Len() != 0 {
		t.Errorf("zero-size screen drew %q", b.String())
	}
}

func TestRenderFitsEverySize(t *testing.T) {
	g := knownGrid(t)
	for i := 4; i < 120; i++ {
		g.Add(synthetic(t, i, events{readKey: {float64(i * i), 3, 40000}, writeKey: {float64(i)}}))
	}
	// Every height up to 16 and every width up to 64, where the layout
	// degrades, then coarser steps. Frames are built once per layout.
	var widths, heights []int
	for w := 1; w <= 160; w += 1 + w/16 {
		widths = append(widths, w)
	}
	for h := 1; h <= 60; h += 1 + h/16 {
		heights = append(heights, h)
	}
	frames := map[[2]int]heatmap.Frame{}
	series := g.Series()[0]
	for _, show := range []Show{Both, FrequencyOnly, IntensityOnly} {
		for _, w := range widths {
			for _, h := range heights {
				cols, rows := Layout(w, h, show)
				f, ok := frames[[2]int{cols, rows}]
				if !ok {
					f = heatmap.Build(g, series, heatmap.Options{Columns: cols, MaxRows: rows, MinRows: min(rows, 10)})
					frames[[2]int{cols, rows}] = f
				}
				for _, plain := range []bool{false, true} {
					var b bytes.Buffer
					Render(&b, f, RenderOptions{Width: w, Height: h, Plain: plain, Show: show, SeriesIndex: 2, SeriesCount: 7, Help: true})
					checkFits(t, b.String(), w, h)
				}
			}
		}
	}
}

func TestRenderClipsFramesBuiltForAnotherSize(t *testing.T) {
	g := knownGrid(t)
	for i := 4; i < 300; i++ {
		g.Add(synthetic(t, i, events{readKey: {math.Ldexp(1, i%25)}}))
	}
	f := heatmap.Build(g, g.Series()[0], heatmap.Options{})
	for _, size := range [][2]int{{40, 12}, {80, 24}, {200, 60}} {
		var b bytes.Buffer
		Render(&b, f, RenderOptions{Width: size[0], Height: size[1]})
		checkFits(t, b.String(), size[0], size[1])
	}
}

func TestLayout(t *testing.T) {
	cases := []struct {
		w, h       int
		show       Show
		cols, rows int
	}{
		{120, 40, Both, 91, 15}, // OraLatencyMap's 90 columns, and then some
		{80, 24, Both, 51, 7},
		{80, 24, FrequencyOnly, 51, 17},
		{229, 50, Both, 200, 20},
		{40, 12, Both, 15, 3}, // narrow legend, one footer line, no blank between maps
		{40, 12, IntensityOnly, 15, 5},
		{20, 6, Both, 12, 3}, // maps only
		{10, 3, Both, 10, 1},
		{1, 1, Both, 1, 1},
		{0, 0, Both, 1, 1},
		{-5, -5, FrequencyOnly, 1, 1},
	}
	for _, c := range cases {
		cols, rows := Layout(c.w, c.h, c.show)
		if cols != c.cols || rows != c.rows {
			t.Errorf("Layout(%d, %d, %v) = %d, %d; want %d, %d", c.w, c.h, c.show, cols, rows, c.cols, c.rows)
		}
	}
	for w := -1; w < 300; w++ {
		for h := -1; h < 100; h++ {
			for _, show := range []Show{Both, FrequencyOnly, IntensityOnly} {
				l := plan(w, h, show)
				if l.mapW < 1 || l.rows < 1 || l.labelW < 0 || l.latestW < 0 || l.legendW < 0 {
					t.Fatalf("%d×%d: %+v", w, h, l)
				}
				if w > 0 && l.labelW+l.mapW+l.latestW+l.legendW > w {
					t.Fatalf("%d×%d: %d cells wide", w, h, l.labelW+l.mapW+l.latestW+l.legendW)
				}
				if h > 0 && l.lines(l.rows) > h {
					t.Fatalf("%d×%d %v: %d lines", w, h, show, l.lines(l.rows))
				}
			}
		}
	}
}

func TestCompact(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {math.NaN(), "-"}, {1, "1"}, {1.5, "1.5"}, {12.34, "12.3"}, {123.4, "123"}, {999.4, "999"},
		{999.6, "1k"}, {1234, "1.23k"}, {12345, "12.3k"}, {1234567, "1.23M"}, {2.5e9, "2.5G"},
		{0.5, "0.5"}, {0.1234, "0.123"}, {0.01234, "0.0123"}, {0.001234, "0.00123"}, {0.0001234, "1.2e-4"},
		{0.0001, "1e-4"}, {-3, "-3"}, {math.Inf(1), "inf"},
	}
	for _, c := range cases {
		if got := compact(c.v); got != c.want {
			t.Errorf("compact(%g) = %q, want %q", c.v, got, c.want)
		}
		if width(compact(c.v)) > latestWidth-1 {
			t.Errorf("compact(%g) = %q is wider than the latest column", c.v, compact(c.v))
		}
	}
}

func TestClock(t *testing.T) {
	if got := clock(t0, false); got != "03:04:05" {
		t.Errorf("wall clock %q", got)
	}
	if got := clock(stream.RelativeStart.Add(125*time.Minute+7*time.Second), true); got != "+125:07" {
		t.Errorf("relative %q", got)
	}
	if got := truncate("64µs wide", 3); got != "64µ" {
		t.Errorf("truncate %q", got)
	}
}

func TestLabelsFromDataCannotDriveTheTerminal(t *testing.T) {
	// A synthetic event name with an escape sequence, a bidi override,
	// invalid UTF-8 and wide characters.
	evil := stream.Key{Event: "read\x1b[2J\x1b]0;owned\x07\u202e 漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字\xff"}
	g := stream.NewGrid(time.Second)
	g.Add(synthetic(t, 0, events{evil: {100}}))
	got := screen(t, g, 60, 30, RenderOptions{Plain: true})
	if strings.ContainsAny(got, "\x1b\x07\u202e") {
		t.Errorf("label printed raw:\n%q", got)
	}
	if !strings.HasPrefix(got, "latscope: read?[2J?]0;owned?? 漢字") {
		t.Errorf("title %q", strings.SplitN(got, "\n", 2)[0])
	}
}

func TestWidthAndTruncate(t *testing.T) {
	cases := []struct {
		s    string
		want int
	}{{"", 0}, {"abc", 3}, {"64µs", 4}, {"maxΣ ≥1", 7}, {"漢字", 4}, {"e\u0301", 1}, {"🙂", 2}}
	for _, c := range cases {
		if got := width(c.s); got != c.want {
			t.Errorf("width(%q) = %d, want %d", c.s, got, c.want)
		}
	}
	if got := truncate("a漢字", 4); got != "a漢" {
		t.Errorf("truncate wide: %q", got)
	}
	if got := sanitize("ok\tx\x1b"); got != "ok?x?" {
		t.Errorf("sanitize %q", got)
	}
}

func TestParseShow(t *testing.T) {
	for _, s := range []Show{Both, FrequencyOnly, IntensityOnly} {
		if got, err := ParseShow(s.String()); err != nil || got != s {
			t.Errorf("ParseShow(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseShow("freq"); err == nil || err.Error() != `show "freq": want both, frequency or intensity` {
		t.Errorf("ParseShow(freq) error %v", err)
	}
}
