package static

import (
	"bytes"
	"strings"
	"testing"
)

// TestMarksAndReportHTML: a mark inside the recording is drawn on both
// maps of the series, a mark outside is not, and the report markup shows
// in the HTML page only.
func TestMarksAndReportHTML(t *testing.T) {
	ivs := knownRecording()
	start := ivs[0].Start
	o := Options{
		ReportHTML: `<section id="report">the report</section>`,
		Marks: []Mark{
			{At: start.Add(2 * knownWidth), Label: "2 readers"},
			{At: start.Add(-knownWidth), Label: "before"},
		},
	}
	var page, svg bytes.Buffer
	if err := WriteHTML(&page, ivs, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteSVG(&svg, ivs, o); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"html": page.String(), "svg": svg.String()} {
		if n := strings.Count(out, ">2 readers</text>"); n != 2 {
			t.Errorf("%s: the mark is drawn %d times, want once per map (2)", name, n)
		}
		if strings.Contains(out, ">before</text>") {
			t.Errorf("%s: a mark before the recording is drawn", name)
		}
	}
	if h := page.String(); !strings.Contains(h, `<section id="report">the report</section>`) ||
		strings.Index(h, `id="report"`) > strings.Index(h, `id="summary"`) {
		t.Error("the HTML page does not show the report before the maps")
	}
	if strings.Contains(svg.String(), "the report") {
		t.Error("the SVG carries the report markup")
	}
}
