package static

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// meanKey is the SYNTHETIC mean series of these tests: what a
// pg_stat_statements sampler reports, calls and total time per window.
var meanKey = stream.Key{Event: "select * from t where id = $1", Instance: "db1"}

// meanOnlyRecording is SYNTHETIC: four 1 s windows of one statement, 10
// calls / 25 ms, no calls, a gap, 4 calls / 40 ms.
func meanOnlyRecording() []stream.Interval {
	t0 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	mean := func(n, ms float64) []stream.SeriesMean {
		return []stream.SeriesMean{{Key: meanKey, Count: n, Sum: ms, Unit: hist.Millisecond}}
	}
	return []stream.Interval{
		{Source: "pg", Start: t0, Duration: time.Second, Means: mean(10, 25)},
		{Source: "pg", Start: t0.Add(time.Second), Duration: time.Second},
		{Source: "pg", Start: t0.Add(2 * time.Second), Duration: time.Second, Gap: true},
		{Source: "pg", Start: t0.Add(3 * time.Second), Duration: time.Second, Means: mean(4, 40)},
	}
}

// meanPoints returns the chart's segments and its plot background.
func meanPoints(t *testing.T, c *canvas) (points []shape, plot shape) {
	t.Helper()
	for _, s := range c.shapes {
		switch s.class {
		case "mean-point":
			points = append(points, s)
		case "mean-plot":
			plot = s
		}
	}
	if plot.w == 0 {
		t.Fatal("no mean chart drawn")
	}
	return points, plot
}

func TestMeanOnlyChart(t *testing.T) {
	r := buildReport(meanOnlyRecording(), Options{})
	if r.Empty() || r.Columns != 4 || r.Width != time.Second || len(r.Means) != 1 {
		t.Fatalf("%d columns of %s, %d means", r.Columns, r.Width, len(r.Means))
	}
	g := vectorGeometry(r.Columns)
	c := layoutDocument(r, g)
	points, plot := meanPoints(t, c)
	// Two windows with calls; the empty one and the gap break the line.
	if len(points) != 2 {
		t.Fatalf("%d segments, want 2", len(points))
	}
	// Linear axis 0 – 10ms (means 2.5 and 10 ms span 4×): y from the bottom
	// is mean/10ms of the plot height.
	bottom := plot.y + meanChartH
	for i, want := range []struct{ col, meanMs float64 }{{0, 2.5}, {3, 10}} {
		x := plot.x + want.col*g.cellW
		y := bottom - want.meanMs/10*meanChartH - 1
		if p := points[i]; p.x != x || p.w != g.cellW || math.Abs(p.y-y) > 1e-9 || p.h != 2 {
			t.Errorf("segment %d at (%g, %g) %g wide, want (%g, %g) %g", i, p.x, p.y, p.w, x, y, g.cellW)
		}
	}
	if want := "2024-03-01 10:00:03 – 10:00:04\nmean 10ms\ncount 4 (4/s)"; points[1].title != want {
		t.Errorf("hover %q, want %q", points[1].title, want)
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, meanOnlyRecording(), Options{}); err != nil {
		t.Fatal(err)
	}
	out := svg.String()
	for _, want := range []string{
		"mean per interval (no distribution)", "Mean latency per interval (linear scale)", "1 mean series",
		fmt.Sprintf(`<rect x="%s" y="%s" width="%s" height="2" class="mean-point" fill="#1f5fbf"`, num(points[1].x), num(points[1].y), num(g.cellW)),
		"<title>2024-03-01 10:00:00 – 10:00:01&#xA;mean 2.5ms&#xA;count 10 (10/s)</title>",
		"Total: 14 events (4.67/s) · mean 4.64ms · interval means 2.5ms – 10ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	var png bytes.Buffer
	if err := WritePNG(&png, meanOnlyRecording(), Options{}); err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, png.Bytes())
	if got := rgbAt(img, int(points[0].x)+5, int(points[0].y)+1); got != meanColour {
		t.Errorf("PNG pixel on the first segment is %v", got)
	}
}

// TestMeansBesideRealHeatMap adds SYNTHETIC mean points (1 call of 1µs,
// 10µs, 100µs, 1ms in turn) to the windows of PyLatencyMap's real example,
// and checks each segment sits under its window's heat-map columns, on a log
// axis 1µs – 1ms.
func TestMeansBesideRealHeatMap(t *testing.T) {
	ivs := readReal(t, pylatencymap.Open, "pylatencymap/example_latency_data.txt")
	var want []stream.Interval
	for i := range ivs {
		if ivs[i].Gap {
			continue
		}
		us := math.Pow(10, float64(len(want)%4))
		ivs[i].Means = []stream.SeriesMean{{Key: meanKey, Count: 1, Sum: us, Unit: hist.Microsecond}}
		want = append(want, ivs[i])
	}
	r := buildReport(ivs, Options{})
	if len(r.Frames) != 1 || len(r.Means) != 1 {
		t.Fatalf("%d frames, %d means", len(r.Frames), len(r.Means))
	}
	g := vectorGeometry(r.Columns)
	c := layoutDocument(r, g)
	points, plot := meanPoints(t, c)
	heat := c.maps[0]
	if plot.x != heat.X || plot.w != float64(heat.Cols)*heat.CellW {
		t.Fatalf("chart [%g, +%g] not aligned with the map [%g, +%g]", plot.x, plot.w, heat.X, float64(heat.Cols)*heat.CellW)
	}
	if len(points) != len(want) {
		t.Fatalf("%d segments for %d windows", len(points), len(want))
	}
	bottom := plot.y + meanChartH
	for i, iv := range want {
		x := heat.X + float64(iv.Start.Sub(r.Start))/float64(r.Width)*heat.CellW
		y := bottom - float64(i%4)/3*meanChartH - 1
		if p := points[i]; math.Abs(p.x-x) > 1e-9 || math.Abs(p.y-y) > 1e-9 {
			t.Fatalf("segment %d at (%g, %g), want (%g, %g)", i, p.x, p.y, x, y)
		}
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section class="card means" id="mean-1">`, `class="mean-chart" data-mean="0"`,
		"Mean latency per interval (log scale)", `<a href="#mean-1">select * from t where id = $1 @db1</a> <span class="kind">(mean only)</span>`,
		`<rect x="` + num(points[1].x) + `" y="`, `class="mean-point"`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// TestNoMeansNoChange: without mean series nothing of the chart appears.
func TestNoMeansNoChange(t *testing.T) {
	var svg bytes.Buffer
	if err := WriteSVG(&svg, knownRecording(), Options{}); err != nil {
		t.Fatal(err)
	}
	if out := svg.String(); strings.Contains(out, "mean per interval") || strings.Contains(out, "mean-") || strings.Contains(out, "mean series") {
		t.Error("an SVG without mean series mentions means")
	}
}

// TestBrowserMeanChart loads a page with heat maps and a mean chart in
// Chromium: the script still runs (it finds the map and answers the
// self-test) and the chart with its hover titles is in the DOM.
func TestBrowserMeanChart(t *testing.T) {
	page := filepath.Join(t.TempDir(), "means.html")
	ivs := knownRecording()
	for i := range ivs {
		if !ivs[i].Gap {
			ivs[i].Means = []stream.SeriesMean{{Key: meanKey, Count: float64(i + 1), Sum: float64(i+1) * 2, Unit: hist.Millisecond}}
		}
	}
	if err := Write(page, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(page); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, "file://"+page+"#selftest=0,0,4,3", "--dump-dom")
	if !strings.Contains(dom, `data-latscope="ready 1"`) {
		t.Fatalf("the script did not run:\n%s", tail(dom, 500))
	}
	m := selftestResult.FindStringSubmatch(dom)
	if m == nil || !strings.Contains(m[2], "3 events/s") {
		t.Fatalf("no self-test result beside the mean chart:\n%s", tail(dom, 800))
	}
	if !strings.Contains(dom, `class="mean-chart"`) || !strings.Contains(dom, "mean 2ms") {
		t.Error("the mean chart or its hover titles are missing from the DOM")
	}
}

// TestHostPanels checks the charts of host figures: one chart per event
// and quantity with a line and a legend entry per instance, the axis in
// the quantity, the host latencies grouped as well. SYNTHETIC windows of
// what host:disk emits.
func TestHostPanels(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	var ivs []stream.Interval
	for i := range 4 {
		var ms []stream.SeriesMean
		for j, dev := range []string{"sda", "sdb"} {
			busy := float64(100 * (i + j + 1)) // ms of 1000
			ms = append(ms,
				stream.SeriesMean{Key: stream.Key{Event: "disk.%util", Instance: dev}, Count: 1000, Sum: busy * 100, Unit: stream.QuantityUnit, Quantity: stream.Percent},
				stream.SeriesMean{Key: stream.Key{Event: "disk.r_await", Instance: dev}, Count: 10, Sum: busy / 100, Unit: hist.Millisecond})
		}
		ivs = append(ivs, stream.Interval{Source: "host:db1", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second, Means: ms})
	}
	r := buildReport(ivs, Options{})
	if len(r.Means) != 4 || len(r.Panels) != 2 {
		t.Fatalf("%d means in %d charts, want 4 in 2", len(r.Means), len(r.Panels))
	}
	g := vectorGeometry(r.Columns)
	c := layoutDocument(r, g)
	points, _ := meanPoints(t, c)
	if len(points) != 16 {
		t.Errorf("%d segments, want 16 (4 windows × 2 devices × 2 charts)", len(points))
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"disk.%util — percent per interval", "disk.%util (percent) per interval (linear scale)",
		"disk.r_await — mean latency per interval", ">sdb<", "sda: 25%", "sdb: 35%", "40%",
		`<a href="#mean-2">disk.%util @sdb</a> <span class="kind">(percent)</span>`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
