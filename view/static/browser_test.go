package static

import (
	"fmt"
	"html"
	"image/color"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// runChromium runs headless Chromium on a local page with the flags that keep
// it off the network, returning stdout.
func runChromium(t *testing.T, url string, extra ...string) string {
	t.Helper()
	return testenv.RunChromium(t, url, 60*time.Second, append([]string{"--virtual-time-budget=5000", "--window-size=1300,900"}, extra...)...)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

var selftestResult = regexp.MustCompile(`(?s)<pre id="selftest-result"([^>]*)>(.*?)</pre>`)

// TestBrowserTooltip loads the page in a real browser, moves a real mouse
// event over known cells (the page's #selftest mode) and reads the tooltip
// the script computed from the embedded data.
func TestBrowserTooltip(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "known.html")
	// A second, busier series comes first (more time waited), so the
	// known series is the second SVG, further down the page.
	ivs := knownRecording()
	busy := randomRecording(len(ivs), 1, knownWidth, 4)
	for i := range ivs {
		busy[i].Series[0].Hist.Sum *= 1000
		ivs[i].Series = append(ivs[i].Series, busy[i].Series...)
	}
	if err := Write(page, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	known := buildReport(ivs, Options{})
	si := -1
	for i, s := range known.Series {
		if s.Key.Event == syntheticEvent && s.Key.Instance == "" {
			si = i
		}
	}
	if si != 1 {
		t.Fatalf("known series at %d, want 1", si)
	}
	cases := []struct {
		mapIdx, col, row int
		want             []string
	}{
		{0, 4, 3, []string{syntheticEvent, "2024-03-05 10:00:40 – 10:00:50", "bucket 512µs – 1.02ms", "3 events/s", "3ms waited/s"}},
		{1, 5, 7, []string{syntheticEvent, "2024-03-05 10:00:50 – 10:01:00", "bucket 8.19ms – 16.4ms", "6 events/s", "60ms waited/s"}},
		{0, 0, 0, []string{syntheticEvent, "2024-03-05 10:00:00 – 10:00:10", "bucket 64µs – 128µs", "6 events/s", "600µs waited/s"}},
		{1, 2, 5, []string{syntheticEvent, "2024-03-05 10:00:20 – 10:00:30", "bucket 2.05ms – 4.1ms", "no data"}},
		{0, 3, 1, []string{syntheticEvent, "2024-03-05 10:00:30 – 10:00:40", "bucket 128µs – 256µs", "0 events/s", "0 waited/s"}},
	}
	var specs, wants, targets []string
	for _, c := range cases {
		specs = append(specs, fmt.Sprintf("%d,%d,%d,%d", si, c.mapIdx, c.col, c.row))
		wants = append(wants, strings.Join(c.want, "\n"))
		targets = append(targets, "rect")
	}
	dom := runChromium(t, "file://"+page+"#selftest="+strings.Join(specs, ";"), "--dump-dom")
	if !strings.Contains(dom, `data-latscope="ready 2"`) {
		t.Fatalf("the script did not run or did not find both SVGs:\n%s", tail(dom, 500))
	}
	m := selftestResult.FindStringSubmatch(dom)
	if m == nil || strings.Contains(m[1], "hidden") {
		t.Fatalf("no self-test result in the DOM:\n%s", tail(dom, 800))
	}
	// The events hit the maps' own rects (real hit testing at the cells'
	// screen points), not some other element.
	if want := `data-target="` + strings.Join(targets, " ") + `"`; !strings.Contains(m[1], want) {
		t.Errorf("mouse events went to %q, want %s", m[1], want)
	}
	got := strings.Split(html.UnescapeString(m[2]), "\n\n")
	if len(got) != len(wants) {
		t.Fatalf("%d tooltips, want %d:\n%s", len(got), len(wants), m[2])
	}
	for i, c := range cases {
		if got[i] != wants[i] {
			t.Errorf("map %d col %d row %d: tooltip\n%q\nwant\n%q", c.mapIdx, c.col, c.row, got[i], wants[i])
		}
	}
}

// TestBrowserRelativeTooltip checks relative time in the tooltip.
func TestBrowserRelativeTooltip(t *testing.T) {
	page := filepath.Join(t.TempDir(), "rel.html")
	ivs := knownRecording()
	for i := range ivs {
		ivs[i].Relative = true
		ivs[i].Start = stream.RelativeStart.Add(30*time.Second + time.Duration(i)*knownWidth)
	}
	if err := Write(page, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, "file://"+page+"#selftest=0,0,4,3", "--dump-dom")
	m := selftestResult.FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("no self-test result")
	}
	want := strings.Join([]string{syntheticEvent, "+1m10s – +1m20s", "bucket 512µs – 1.02ms", "3 events/s", "3ms waited/s"}, "\n")
	if got := html.UnescapeString(m[2]); got != want {
		t.Errorf("tooltip %q, want %q", got, want)
	}
}

// TestBrowserScreenshot renders the page and checks the picture shows the
// maps: palette colours and the no-data hatching are on screen.
func TestBrowserScreenshot(t *testing.T) {
	dir := t.TempDir()
	page, shot := filepath.Join(dir, "p.html"), filepath.Join(dir, "shot.png")
	if err := Write(page, knownRecording(), Options{}); err != nil {
		t.Fatal(err)
	}
	runChromium(t, "file://"+page, "--screenshot="+shot, "--hide-scrollbars")
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img := decodePNG(t, data)
	seen := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			seen[rgbAt(img, x, y)]++
		}
	}
	if len(seen) < 20 {
		t.Fatalf("screenshot has %d colours: blank?", len(seen))
	}
	for _, want := range []color.RGBA{
		levelColour(heatmap.Frequency, 6), levelColour(heatmap.Frequency, 3),
		levelColour(heatmap.Intensity, 6), levelColour(heatmap.Intensity, 1), noDataHatch,
	} {
		if seen[want] < 20 {
			t.Errorf("colour %v shows on %d pixels", want, seen[want])
		}
	}
}

// TestBrowserFormats holds the script's number and duration formats to the
// Go ones (formatNumber, hist.FormatDuration) that the legends and footers
// use, so the tooltip and the picture never disagree.
func TestBrowserFormats(t *testing.T) {
	page := filepath.Join(t.TempDir(), "f.html")
	if err := Write(page, knownRecording(), Options{}); err != nil {
		t.Fatal(err)
	}
	values := []float64{0, 1e-7, 1.2e-5, 0.0012, 0.005, 0.0999, 0.25, 0.5, 3.3333, 12.34, 99.96, 456, 999.4, 1001,
		12345, 4.56e6, 7e9, 2.5e11, 150e9, 7260e9, 53264e9}
	var specs, wants []string
	for _, v := range values {
		specs = append(specs, strconv.FormatFloat(v, 'g', -1, 64))
		wants = append(wants, formatNumber(v)+"|"+hist.FormatDuration(v))
	}
	dom := runChromium(t, "file://"+page+"#selftest-format="+strings.Join(specs, ","), "--dump-dom")
	m := selftestResult.FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("no format result")
	}
	got := strings.Split(html.UnescapeString(m[2]), "\n")
	if len(got) != len(values) {
		t.Fatalf("%d results for %d values: %q", len(got), len(values), m[2])
	}
	for i, v := range values {
		if got[i] != wants[i] {
			t.Errorf("%g: script %q, Go %q", v, got[i], wants[i])
		}
	}
}
