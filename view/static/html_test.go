package static

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

func writeHTMLString(t testing.TB, ivs []stream.Interval, o Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, ivs, o); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// embeddedData extracts and decodes the page's JSON.
func embeddedData(t *testing.T, page string) pageData {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="latscope-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no embedded data")
	}
	var d pageData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	return d
}

var externalRef = regexp.MustCompile(`(?i)(src|href|action|xlink:href)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?\s*(https?:)?//|@import`)

func TestHTMLSelfContained(t *testing.T) {
	page := writeHTMLString(t, randomRecording(200, 3, 3*time.Second, 11), Options{})
	if m := externalRef.FindString(page); m != "" {
		t.Errorf("page references an external resource: %q", m)
	}
	for _, scheme := range []string{"http://", "https://"} {
		if strings.Contains(page, scheme) {
			t.Errorf("page contains %q", scheme)
		}
	}
	csp := `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">`
	if !strings.Contains(page, csp) {
		t.Error("page lacks the Content-Security-Policy meta")
	}
	for _, tag := range []string{"<link", "<img", "<iframe", "<object", "<embed", "<script src"} {
		if strings.Contains(page, tag) {
			t.Errorf("page has %s", tag)
		}
	}
	if n := strings.Count(page, ` class="maps" data-series=`); n != 3 {
		t.Errorf("%d series SVGs, want 3", n)
	}
	if n := strings.Count(page, `class="plot `); n != 6 {
		t.Errorf("%d maps, want 6", n)
	}
}

func TestHTMLSummaryTable(t *testing.T) {
	ivs := randomRecording(120, 3, 3*time.Second, 2)
	page := writeHTMLString(t, ivs, Options{Title: "my title"})
	if !strings.Contains(page, "<title>my title</title>") {
		t.Error("title not used")
	}
	r := buildReport(ivs, Options{})
	rows := regexp.MustCompile(`<tr><td>(\d+)</td><td><a href="#(series-\d+)">([^<]*)</a>`).FindAllStringSubmatch(page, -1)
	if len(rows) != len(r.Series) {
		t.Fatalf("%d summary rows, want %d", len(rows), len(r.Series))
	}
	for i, row := range rows {
		if row[1] != strconv.Itoa(i+1) || row[3] != r.Series[i].Key.String() {
			t.Errorf("row %d = %q, want series %q", i, row[1:], r.Series[i].Key)
		}
		if !strings.Contains(page, `id="`+row[2]+`"`) {
			t.Errorf("anchor %s has no target", row[2])
		}
	}
	// Sorted as grid.Series: by time waited, largest first.
	first := r.Series[0]
	want := formatLatency(first.Unit.Nanos(first.Total.Sum)) + ` <span class="kind">estimated</span>`
	if !strings.Contains(page, want) {
		t.Errorf("summary lacks the first series' time waited %q", want)
	}
	for _, h := range []string{"Events", "Time waited", "Mean", "p50", "p90", "p99", "How to read the maps"} {
		if !strings.Contains(page, h) {
			t.Errorf("page lacks %q", h)
		}
	}
}

func TestHTMLEmbeddedValues(t *testing.T) {
	ivs := knownRecording()
	d := embeddedData(t, writeHTMLString(t, ivs, Options{}))
	r := buildReport(ivs, Options{})
	if d.N != 7 || d.W != 10000 || d.Off != 7200 || d.Rel || d.Ms {
		t.Errorf("data header %+v", d)
	}
	if want := float64(syntheticStart.UnixMilli()); d.T0 != want {
		t.Errorf("t0 %g, want %g", d.T0, want)
	}
	s := d.Series[0]
	if len(s.Gaps) != 1 || s.Gaps[0] != 2 || len(s.Maps) != 2 || len(s.Rows) != 8 {
		t.Fatalf("series data %+v", s)
	}
	if s.Rows[3] != "512µs – 1.02ms" {
		t.Errorf("row 3 range %q", s.Rows[3])
	}
	f := r.Frames[0]
	for name, enc := range map[string]string{"frequency": s.F, "intensity": s.I} {
		vals := strings.Split(enc, ",")
		if len(vals) != 7*8 {
			t.Fatalf("%s: %d values", name, len(vals))
		}
		for col := range 7 {
			for row := range 8 {
				want := f.Frequency.Values[col][row]
				if name == "intensity" {
					want = f.Intensity.Values[col][row]
				}
				got := 0.0
				if v := vals[col*8+row]; v != "" {
					got, _ = strconv.ParseFloat(v, 64)
				}
				if math.IsNaN(want) {
					want = 0
				}
				if math.Abs(got-want) > 1e-3*math.Abs(want) {
					t.Errorf("%s col %d row %d: %g, want %g", name, col, row, got, want)
				}
			}
		}
	}
}

func TestHTMLEmptyRecording(t *testing.T) {
	for _, ivs := range [][]stream.Interval{nil, {{Source: "s", Start: syntheticStart}}} {
		page := writeHTMLString(t, ivs, Options{})
		if !strings.Contains(page, "No data") {
			t.Error("empty page does not say so")
		}
		var svg, pngBuf bytes.Buffer
		if err := WriteSVG(&svg, ivs, Options{}); err != nil {
			t.Fatal(err)
		}
		parseSVG(t, svg.Bytes())
		if err := WritePNG(&pngBuf, ivs, Options{}); err != nil {
			t.Fatal(err)
		}
		decodePNG(t, pngBuf.Bytes())
	}
}

func TestHTMLLargeRecording(t *testing.T) {
	// SYNTHETIC: 20 000 one-second intervals of 3 series need 20 000
	// columns; the image widens them to 17 s so that 1177 columns fit.
	ivs := randomRecording(20000, 3, time.Second, 9)
	page := writeHTMLString(t, ivs, Options{})
	d := embeddedData(t, page)
	if d.N > DefaultMaxColumns || d.N < DefaultMaxColumns*9/10 {
		t.Errorf("%d columns, want at most (and close to) %d", d.N, DefaultMaxColumns)
	}
	if d.W != 17000 {
		t.Errorf("column width %g ms, want 17000", d.W)
	}
	if !strings.Contains(page, "Columns widened from 1s to 17s") {
		t.Error("page does not say the columns were widened")
	}
	t.Logf("20000 intervals × 3 series: %d columns, HTML %d bytes", d.N, len(page))
	if len(page) > 4<<20 {
		t.Errorf("HTML is %d bytes", len(page))
	}
	// Rates survive the resampling: the grid's events per column times
	// the width add up to the recording's events.
	r := buildReport(ivs, Options{})
	for i, f := range r.Frames {
		sum := 0.0
		for c, col := range f.Frequency.Values {
			for _, v := range col {
				if !math.IsNaN(v) {
					sum += v * f.Columns[c].Observed
				}
			}
		}
		if total := r.Series[i].Total.Count(); math.Abs(sum-total) > 1e-6*total {
			t.Errorf("series %d: columns hold %g events, recording %g", i, sum, total)
		}
	}
}
