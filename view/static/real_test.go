package static

import (
	"bytes"
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// readReal reads a real shared test file with one of latscope's sources,
// ordered by time as the driver hands intervals to Write.
func readReal(t *testing.T, open func(source.Input, source.Options) (source.Source, error), rel string) []stream.Interval {
	t.Helper()
	path := testenv.DataFile(t, rel)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := open(source.Input{Name: rel, Reader: f, Diag: input.NewDiagnostics(nil, 0)}, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rec stream.Recording
	if err := src.Run(context.Background(), func(iv stream.Interval) error { rec.Add(iv); return nil }); err != nil {
		t.Fatal(err)
	}
	return rec.Intervals()
}

// TestRealPyLatencyMap draws PyLatencyMap's shipped example: 72 records of
// RAC db file sequential read, ~3 s apart, the last three deltas idle.
func TestRealPyLatencyMap(t *testing.T) {
	ivs := readReal(t, pylatencymap.Open, "pylatencymap/example_latency_data.txt")
	r := buildReport(ivs, Options{})
	if len(r.Frames) != 1 || r.Columns < 65 || r.Columns > 75 {
		t.Fatalf("%d series, %d columns of %s", len(r.Frames), r.Columns, r.Width)
	}
	if r.Width < 2900e6 || r.Width > 3100e6 {
		t.Errorf("inferred column width %s, want about 3s", r.Width)
	}
	// Every event of the recording is in the columns (rates × observed).
	f := r.Frames[0]
	sum := 0.0
	for c, col := range f.Frequency.Values {
		for _, v := range col {
			if !math.IsNaN(v) {
				sum += v * f.Columns[c].Observed
			}
		}
	}
	if total := r.Series[0].Total.Count(); total < 1e6 || math.Abs(sum-total) > 1e-6*total {
		t.Errorf("columns hold %g events, recording %g", sum, total)
	}
	// The quiet tail: the newest columns are observed and empty.
	last := f.Frequency.ColumnSums[len(f.Frequency.ColumnSums)-1]
	if last != 0 {
		t.Errorf("newest column sum %g, want 0 (the sample's last deltas are idle)", last)
	}
	var svg, page, img bytes.Buffer
	if err := WriteSVG(&svg, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	rects, _ := parseSVG(t, svg.Bytes())
	if n := len(plots(rects)); n != 2 {
		t.Errorf("%d maps", n)
	}
	if err := WriteHTML(&page, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	d := embeddedData(t, page.String())
	if d.N != r.Columns || d.Off != 7200 || !d.Ms || !strings.Contains(page.String(), "2013-08-26 16:2") {
		t.Errorf("page data n=%d off=%d ms=%v", d.N, d.Off, d.Ms)
	}
	if err := WritePNG(&img, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	decodePNG(t, img.Bytes())
}

// TestRealTrace10046 draws an Oracle 12.2 trace: several wait events, each
// its own series, summarised and drawn in the grid's order.
func TestRealTrace10046(t *testing.T) {
	ivs := readReal(t, oracle10046.Open, "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc")
	r := buildReport(ivs, Options{})
	if len(r.Series) < 3 {
		t.Fatalf("%d series", len(r.Series))
	}
	page := writeHTMLString(t, ivs, Options{})
	if n := strings.Count(page, ` class="maps" data-series=`); n != len(r.Series) {
		t.Errorf("%d series SVGs, want %d", n, len(r.Series))
	}
	// The summary lists the series in the maps' order, exact sums (traces
	// give every wait's duration).
	at := 0
	for _, s := range r.Series {
		i := strings.Index(page[at:], ">"+escapeText(s.Key.String())+"</a>")
		if i < 0 {
			t.Fatalf("summary lacks %q after offset %d", s.Key, at)
		}
		at += i
	}
	if !strings.Contains(page, `<span class="kind">exact</span>`) {
		t.Error("trace sums not marked exact")
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, ivs, Options{}); err != nil {
		t.Fatal(err)
	}
	rects, _ := parseSVG(t, svg.Bytes())
	if n := len(plots(rects)); n != 2*len(r.Series) {
		t.Errorf("%d maps for %d series", n, len(r.Series))
	}
}
