package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/driver"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// heatmapJSON is the route's answer.
type heatmapJSON struct {
	Series struct {
		ID   int64  `json:"id"`
		Kind string `json:"kind"`
	} `json:"series"`
	Window struct {
		From, To   time.Time
		Resolution string
	} `json:"window"`
	ColumnSeconds float64 `json:"column_seconds"`
	Columns       int     `json:"columns"`
	RowsPerOctave int     `json:"rows_per_octave"`
	RowsNote      string  `json:"rows_note"`
	Rows          []struct {
		Low   float64  `json:"low"`
		High  *float64 `json:"high"`
		Label string   `json:"label"`
	} `json:"rows"`
	Frequency [][]float64 `json:"frequency"`
	Intensity [][]float64 `json:"intensity"`
	Events    []float64   `json:"events"`
	Observed  []float64   `json:"observed"`
	P50       []*float64  `json:"p50"`
	P99       []*float64  `json:"p99"`
	Mean      []*float64  `json:"mean"`
	Means     []struct {
		SeriesID int64      `json:"series_id"`
		Event    string     `json:"event"`
		Unit     string     `json:"unit"`
		Values   []*float64 `json:"values"`
	} `json:"means"`
	Totals *struct {
		Events     float64  `json:"events"`
		TimeWaited float64  `json:"time_waited"`
		P50        *float64 `json:"p50"`
	} `json:"totals"`
}

// cliMatrix is `latscope heatmap --format json` (view/heatmap WriteJSON).
type cliMatrix struct {
	Series []cliSeries `json:"series"`
}

type cliSeries struct {
	Event         string  `json:"event"`
	Instance      string  `json:"instance"`
	ColumnSeconds float64 `json:"column_seconds"`
	Rows          []struct {
		LowerUs float64 `json:"lower_us"`
		Label   string  `json:"label"`
	} `json:"rows"`
	Columns []struct {
		Start     string  `json:"start"`
		ObservedS float64 `json:"observed_s"`
		Gap       bool    `json:"gap"`
	} `json:"columns"`
	Frequency [][]float64 `json:"events_per_s"`
	Intensity [][]float64 `json:"seconds_waited_per_s"`
}

// recordArchive archives a file of testdata as `latscope record FILE
// --archive DIR` does and opens the archive.
func recordArchive(t *testing.T, file string) (dir string, a *archive.Archive) {
	t.Helper()
	dir = t.TempDir()
	err := driver.Record(context.Background(), driver.RecordConfig{Archive: dir,
		Config: driver.Config{Sources: []string{testenv.DataFile(t, file)}, Stdout: io.Discard, Stderr: io.Discard}})
	if err != nil {
		t.Fatal(err)
	}
	a, err = archive.Open(dir, archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return dir, a
}

// firstWindow returns the archive's first histogram series and the start
// of its first window.
func firstWindow(t *testing.T, a *archive.Archive) (archive.SeriesInfo, time.Time) {
	t.Helper()
	infos, err := a.Series(context.Background())
	if err != nil || len(infos) == 0 {
		t.Fatalf("series %v, %v", infos, err)
	}
	var start time.Time
	err = a.Read(context.Background(), archive.Query{}, func(iv stream.Interval) error {
		if start.IsZero() {
			start = iv.Start
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return infos[0], start.UTC()
}

// cliHeatmap runs `latscope heatmap DIR --from --until --interval
// --rows-per-octave --format json` in process and keeps the series of key.
func cliHeatmap(t *testing.T, dir string, key stream.Key, from, to time.Time, width time.Duration, rowScale int) cliMatrix {
	t.Helper()
	var out bytes.Buffer
	err := driver.Heatmap(context.Background(), driver.HeatmapConfig{Format: "json", ColumnWidth: width,
		MapStyle: driver.MapStyle{RowScale: rowScale},
		Config:   driver.Config{Sources: []string{dir}, Read: source.Options{From: from, To: to}, Stdout: &out, Stderr: io.Discard}})
	if err != nil {
		t.Fatal(err)
	}
	var m cliMatrix
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Series {
		if s.Event == key.Event && s.Instance == key.Instance {
			m.Series = []cliSeries{s}
			return m
		}
	}
	t.Fatalf("latscope heatmap: no series %s", key)
	return m
}

func getHeatmap(t *testing.T, base, token string, id int64, params url.Values) heatmapJSON {
	t.Helper()
	resp, body := get(t, fmt.Sprintf("%s/api/v1/series/%d/heatmap?%s", base, id, params.Encode()), token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("heatmap %v: %d %s", params, resp.StatusCode, body)
	}
	var hm heatmapJSON
	if err := json.Unmarshal(body, &hm); err != nil {
		t.Fatal(err)
	}
	return hm
}

func window(from, to time.Time, columns int, more ...string) url.Values {
	v := url.Values{"from": {from.Format(time.RFC3339Nano)}, "to": {to.Format(time.RFC3339Nano)}, "columns": {fmt.Sprint(columns)}}
	for i := 0; i+1 < len(more); i += 2 {
		v.Set(more[i], more[i+1])
	}
	return v
}

// sameMatrix checks the route's rows and cells against the CLI's matrix
// number for number. The CLI's column 0 starts at the first window, the
// route's at from: the test puts both at the same time.
func sameMatrix(t *testing.T, got heatmapJSON, want cliMatrix) {
	t.Helper()
	w := want.Series[0]
	if got.ColumnSeconds != w.ColumnSeconds {
		t.Errorf("column_seconds %v, latscope heatmap %v", got.ColumnSeconds, w.ColumnSeconds)
	}
	if len(got.Rows) != len(w.Rows) {
		t.Fatalf("%d rows, latscope heatmap %d", len(got.Rows), len(w.Rows))
	}
	for i, r := range got.Rows {
		if r.Label != w.Rows[i].Label || math.Abs(r.Low*1e6-w.Rows[i].LowerUs) > 1e-9*w.Rows[i].LowerUs {
			t.Errorf("row %d: %s from %vs, latscope heatmap %s from %vµs", i, r.Label, r.Low, w.Rows[i].Label, w.Rows[i].LowerUs)
		}
	}
	if len(w.Columns) > got.Columns {
		t.Fatalf("latscope heatmap has %d columns, the route %d", len(w.Columns), got.Columns)
	}
	for c := range got.Columns {
		if c >= len(w.Columns) {
			if got.Frequency[c] != nil || got.Observed[c] != 0 {
				t.Errorf("column %d after the data: %v observed %v, want null", c, got.Frequency[c], got.Observed[c])
			}
			continue
		}
		wc := w.Columns[c]
		if got.Observed[c] != wc.ObservedS || (got.Frequency[c] == nil) != wc.Gap {
			t.Errorf("column %d (%s): observed %v, gap %v; latscope heatmap %v, %v", c, wc.Start, got.Observed[c], got.Frequency[c] == nil, wc.ObservedS, wc.Gap)
		}
		if fmt.Sprint(got.Frequency[c]) != fmt.Sprint(w.Frequency[c]) || fmt.Sprint(got.Intensity[c]) != fmt.Sprint(w.Intensity[c]) {
			t.Errorf("column %d (%s):\n  frequency %v intensity %v\n  latscope heatmap %v %v", c, wc.Start, got.Frequency[c], got.Intensity[c], w.Frequency[c], w.Intensity[c])
		}
	}
}

// TestHeatmapEqualsCLI reads PyLatencyMap's example (71 windows of about
// 3 s) through the route and through `latscope heatmap --format json` on
// the same archive and grid; then a window wider than the data, whose
// columns before and after it are null.
func TestHeatmapEqualsCLI(t *testing.T) {
	dir, a := recordArchive(t, "pylatencymap/example_latency_data.txt")
	info, start := firstWindow(t, a)
	base, token := viewerServer(t, a, 0)
	const columns = 40
	width := 6 * time.Second
	to := start.Add(columns * width)
	got := getHeatmap(t, base, token, info.ID, window(start, to, columns))
	if got.Window.Resolution != "raw" || got.Columns != columns || len(got.Frequency) != columns {
		t.Fatalf("resolution %s, %d columns, %d in frequency", got.Window.Resolution, got.Columns, len(got.Frequency))
	}
	sameMatrix(t, got, cliHeatmap(t, dir, info.Key, start, to, width, 0))

	// The columns hold every event of the histogram route's window.
	var summary struct {
		Histogram struct {
			Count float64 `json:"count"`
			SumUs float64 `json:"sum_us"`
			P50Us float64 `json:"p50_us"`
		} `json:"histogram"`
	}
	resp, body := get(t, fmt.Sprintf("%s/api/v1/series/%d/histogram?%s", base, info.ID, window(start, to, columns, "resolution", "raw").Encode()), token)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &summary) != nil {
		t.Fatalf("histogram: %d %s", resp.StatusCode, body)
	}
	events := 0.0
	for _, e := range got.Events {
		events += e
	}
	h := summary.Histogram
	if !near(events, h.Count) || !near(got.Totals.Events, h.Count) || !near(got.Totals.TimeWaited*1e6, h.SumUs) || !near(*got.Totals.P50*1e6, h.P50Us) {
		t.Errorf("columns hold %v events, totals %+v; the histogram route %+v", events, got.Totals, h)
	}
	for c, e := range got.Events {
		if e > 0 && (got.P50[c] == nil || got.P99[c] == nil || *got.P50[c] > *got.P99[c] || got.Mean[c] == nil) {
			t.Errorf("column %d: %v events, p50 %v p99 %v mean %v", c, e, got.P50[c], got.P99[c], got.Mean[c])
		}
	}

	// A wider window: a minute of columns before the data are gaps.
	wide := getHeatmap(t, base, token, info.ID, window(start.Add(-time.Minute), to, columns+10))
	for c := range 10 {
		if wide.Frequency[c] != nil || wide.Intensity[c] != nil || wide.Observed[c] != 0 || wide.Events[c] != 0 || wide.P50[c] != nil {
			t.Errorf("column %d before the data: %v %v %v %v", c, wide.Frequency[c], wide.Observed[c], wide.Events[c], wide.P50[c])
		}
	}
	if fmt.Sprint(wide.Frequency[10:]) != fmt.Sprint(got.Frequency) {
		t.Errorf("the same columns shifted by ten differ")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestHeatmapRowsPerOctave reads a 10046 trace (exact durations) with
// four rows per octave: each column's quarter rows add up to its octave
// rows, and the matrix is the CLI's --rows-per-octave 4. Power-of-two
// buckets stay per octave, and the answer says so.
func TestHeatmapRowsPerOctave(t *testing.T) {
	dir, a := recordArchive(t, "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc")
	info, start := firstWindow(t, a)
	base, token := viewerServer(t, a, 0)
	const columns = 30
	width := 3 * time.Second
	to := start.Add(columns * width)
	octave := getHeatmap(t, base, token, info.ID, window(start, to, columns))
	quarter := getHeatmap(t, base, token, info.ID, window(start, to, columns, "rows_per_octave", "4"))
	if quarter.RowsPerOctave != 4 || octave.RowsPerOctave != 1 || quarter.RowsNote != "" {
		t.Fatalf("rows per octave %d and %d, note %q", octave.RowsPerOctave, quarter.RowsPerOctave, quarter.RowsNote)
	}
	sameMatrix(t, quarter, cliHeatmap(t, dir, info.Key, start, to, width, 2))
	if len(quarter.Rows) <= len(octave.Rows) {
		t.Errorf("%d quarter rows, %d octave rows", len(quarter.Rows), len(octave.Rows))
	}
	events := 0.0
	for c := range columns {
		events += octave.Events[c]
		if (octave.Frequency[c] == nil) != (quarter.Frequency[c] == nil) {
			t.Fatalf("column %d: a gap in one map only", c)
		}
		if octave.Frequency[c] == nil {
			continue
		}
		sums := make([]float64, len(octave.Rows))
		for q, r := range quarter.Rows {
			o := 0
			for o+1 < len(octave.Rows) && octave.Rows[o+1].Low <= r.Low {
				o++
			}
			sums[o] += quarter.Frequency[c][q]
		}
		for o, s := range sums {
			if want := octave.Frequency[c][o]; math.Abs(s-want) > 1e-9*math.Max(want, 1) {
				t.Errorf("column %d, row %s: quarter rows add up to %v events/s, the octave row has %v", c, octave.Rows[o].Label, s, want)
			}
		}
	}
	if events == 0 {
		t.Fatal("no event in the window")
	}

	_, bucketed := recordArchive(t, "pylatencymap/example_latency_data.txt")
	binfo, bstart := firstWindow(t, bucketed)
	bbase, btoken := viewerServer(t, bucketed, 0)
	b := getHeatmap(t, bbase, btoken, binfo.ID, window(bstart, bstart.Add(time.Minute), 10, "rows_per_octave", "8"))
	if b.RowsPerOctave != 1 || !strings.Contains(b.RowsNote, "power-of-two buckets") {
		t.Errorf("bucketed series at 8 rows per octave: %d rows per octave, note %q", b.RowsPerOctave, b.RowsNote)
	}
}

// TestHeatmapMeans puts a source's mean series on the map's columns (sum
// over count of each column's windows) and answers a mean series alone.
func TestHeatmapMeans(t *testing.T) {
	ctx := context.Background()
	a := tempArchive(t)
	start := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	mean := stream.Key{Event: "db file scattered read"}
	for i := range 6 {
		h := hist.NewExact(hist.Microsecond, 0)
		_ = h.Record(float64(100 * (i + 1)))
		iv := stream.Interval{Source: "db01", Start: start.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}}
		if i != 4 { // no mean reported: an empty column of the mean
			iv.Means = []stream.SeriesMean{{Key: mean, Count: float64(i + 1), Sum: float64(1000 * (i + 1) * (i + 1)), Unit: hist.Microsecond}}
		}
		if err := a.Write(ctx, iv); err != nil {
			t.Fatal(err)
		}
	}
	base, token := viewerServer(t, a, 0)
	infos, _ := a.Series(ctx)
	var histID, meanID int64
	for _, s := range infos {
		if s.Mean {
			meanID = s.ID
		} else {
			histID = s.ID
		}
	}
	to := start.Add(8 * time.Second)
	hm := getHeatmap(t, base, token, histID, window(start, to, 4))
	// Columns of 2 s: windows 0+1, 2+3, 4+5, none.
	want := []any{(1000.0 + 4000) / 3 / 1e6, (9000.0 + 16000) / 7 / 1e6, 36000.0 / 6 / 1e6, nil}
	if len(hm.Means) != 1 || hm.Means[0].SeriesID != meanID || hm.Means[0].Event != mean.Event {
		t.Fatalf("means %+v", hm.Means)
	}
	for c, v := range hm.Means[0].Values {
		if want[c] == nil && v != nil || want[c] != nil && (v == nil || !near(*v, want[c].(float64))) {
			t.Errorf("mean column %d: %v, want %v", c, deref(v), want[c])
		}
	}
	if hm.Events[0] != 2 || hm.Frequency[3] != nil || hm.Totals.Events != 6 {
		t.Errorf("events %v, last column %v, totals %+v", hm.Events, hm.Frequency[3], hm.Totals)
	}

	only := getHeatmap(t, base, token, meanID, window(start, to, 4))
	if only.Series.Kind != "mean" || only.Rows != nil || only.Totals != nil || len(only.Means) != 1 || fmt.Sprint(deref(only.Means[0].Values[1])) != fmt.Sprint(want[1]) {
		t.Errorf("a mean series' heat map: %+v", only)
	}

	// No from or to: the hour up to the last window's end.
	last := getHeatmap(t, base, token, histID, url.Values{"columns": {"3600"}})
	if !last.Window.To.Equal(start.Add(6*time.Second)) || !last.Window.From.Equal(start.Add(6*time.Second-time.Hour)) ||
		last.ColumnSeconds != 1 || last.Events[3600-6] != 1 {
		t.Errorf("default window %v to %v, column %vs, last events %v", last.Window.From, last.Window.To, last.ColumnSeconds, last.Events[3594:])
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// TestHeatmapBadParams answers 400 naming the parameter.
func TestHeatmapBadParams(t *testing.T) {
	base, token, _ := exportServer(t, 0)
	for params, name := range map[string]string{
		"columns=0":                     "columns",
		"columns=4001":                  "columns",
		"columns=wide":                  "columns",
		"rows_per_octave=3":             "rows_per_octave",
		"rows_per_octave=16":            "rows_per_octave",
		"from=yesterday":                "from",
		"to=-1x":                        "to",
		"resolution=7m":                 "resolution",
		"from=-1h&to=-2h":               "from",
		"from=2030-01-01T00:00:00Z":     "from",
		"resolution=raw&columns=-1":     "columns",
		"rows_per_octave=1&columns=1.5": "columns",
	} {
		resp, body := get(t, base+"/api/v1/series/1/heatmap?"+params, token)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), name) {
			t.Errorf("%s: %d %s; want 400 naming %s", params, resp.StatusCode, body, name)
		}
	}
	if resp, _ := get(t, base+"/api/v1/series/99/heatmap", token); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown series: %d", resp.StatusCode)
	}
	if resp, _ := get(t, base+"/api/v1/series/1/heatmap", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous: %d", resp.StatusCode)
	}
}

// TestHeatmapAutoResolution reads the minute tier where it covers the
// window and its columns are wider than a minute, and raw data where the
// tier has not been built (an archive recorded from a file).
func TestHeatmapAutoResolution(t *testing.T) {
	ctx := context.Background()
	a := tempArchive(t)
	start := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	var ivs []stream.Interval
	for i := range 7200 {
		h := hist.NewExact(hist.Microsecond, 0)
		_ = h.Record(float64(100 + i%50))
		ivs = append(ivs, stream.Interval{Source: "db01", Start: start.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}})
	}
	if err := a.WriteBatch(ctx, ivs); err != nil {
		t.Fatal(err)
	}
	base, token := viewerServer(t, a, 0)
	end := start.Add(2 * time.Hour)
	if hm := getHeatmap(t, base, token, 1, window(start, end, 40)); hm.Window.Resolution != "raw" || hm.Totals.Events != 7200 {
		t.Errorf("no minute tier yet: resolution %s, %v events", hm.Window.Resolution, hm.Totals.Events)
	}
	if err := a.Maintain(ctx, end.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for columns, want := range map[int]string{40: "1m0s", 120: "1m0s", 121: "raw", 4000: "raw"} {
		hm := getHeatmap(t, base, token, 1, window(start, end, columns))
		if hm.Window.Resolution != want || hm.Totals.Events != 7200 {
			t.Errorf("%d columns of %vs: resolution %s (want %s), %v events", columns, hm.ColumnSeconds, hm.Window.Resolution, want, hm.Totals.Events)
		}
	}
	if hm := getHeatmap(t, base, token, 1, window(start, end, 40, "resolution", "raw")); hm.Window.Resolution != "raw" {
		t.Errorf("resolution=raw read %s", hm.Window.Resolution)
	}
}

// TestHeatmapHostFigure answers a host figure's map (a mean series with a
// quantity) in its quantity: %util as busy ms × 100 over elapsed ms of
// each column's windows, not seconds. SYNTHETIC windows of host:disk.
func TestHeatmapHostFigure(t *testing.T) {
	ctx := context.Background()
	a := tempArchive(t)
	start := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	for i, busy := range []float64{100, 300, 500, 700} {
		iv := stream.Interval{Source: "host", Start: start.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Means: []stream.SeriesMean{{Key: stream.Key{Event: "disk.%util", Instance: "sda"}, Count: 1000, Sum: busy * 100,
				Unit: stream.QuantityUnit, Quantity: stream.Percent}}}
		if err := a.Write(ctx, iv); err != nil {
			t.Fatal(err)
		}
	}
	base, token := viewerServer(t, a, 0)
	infos, _ := a.Series(ctx)
	hm := getHeatmap(t, base, token, infos[0].ID, window(start, start.Add(4*time.Second), 2))
	if len(hm.Means) != 1 || hm.Means[0].Unit != "percent" || deref(hm.Means[0].Values[0]) != 20.0 || deref(hm.Means[0].Values[1]) != 60.0 {
		t.Errorf("%%util columns %+v, want 20 and 60 percent", hm.Means)
	}
}
