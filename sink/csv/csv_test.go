package csv

import (
	"bytes"
	stdcsv "encoding/csv"
	"errors"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/recordingtest"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// row is a CSV row by column name.
type row map[string]string

func parseRows(t testing.TB, out []byte) []row {
	t.Helper()
	recs, err := stdcsv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], Header) {
		t.Fatalf("header %q", recs)
	}
	var rows []row
	for _, r := range recs[1:] {
		m := row{}
		for i, name := range Header {
			m[name] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

func (r row) num(t testing.TB, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(r[col], 64)
	if err != nil {
		t.Fatalf("%s = %q: %v", col, r[col], err)
	}
	return v
}

// checkRows reads the rows back into windows, series and buckets and
// compares them with the intervals: every window, key, bucket edge (in µs)
// and count, every series' count and sum.
func checkRows(t *testing.T, ivs []stream.Interval, rows []row) {
	t.Helper()
	i := 0
	var origin *time.Time // the first dated window's start
	next := func() row {
		t.Helper()
		if i >= len(rows) {
			t.Fatalf("rows run out at %d", i)
		}
		i++
		return rows[i-1]
	}
	for k, iv := range ivs {
		if !iv.Relative && origin == nil {
			origin = &iv.Start
		}
		if len(iv.Series) == 0 && len(iv.Means) == 0 {
			r := next()
			checkWindow(t, iv, r, origin)
			if r["event"] != "" || r["lower_us"] != "" || r["count"] != "0" || r["series_count"] != "" || r["unit"] != "" {
				t.Fatalf("interval %d without series: %v", k, r)
			}
			continue
		}

		for _, s := range iv.Series {
			buckets := s.Hist.Buckets()
			toUs := float64(s.Hist.Unit) / 1000
			for j := 0; j < max(len(buckets), 1); j++ {
				r := next()
				checkWindow(t, iv, r, origin)
				if r["event"] != s.Key.Event || r["instance"] != s.Key.Instance || r["source"] != s.Key.Source {
					t.Fatalf("interval %d: key %v, want %+v", k, r, s.Key)
				}
				if r["mean_us"] != "" || r["unit"] != "" {
					t.Fatalf("interval %d %s: a histogram row with a mean: %v", k, s.Key, r)
				}
				if r.num(t, "series_count") != s.Hist.Count() || r.num(t, "series_sum_us") != s.Hist.Sum*toUs ||
					r["sum_exact"] != strconv.FormatBool(s.Hist.SumExact) {
					t.Fatalf("interval %d %s: %v, want count %g sum %g µs", k, s.Key, r, s.Hist.Count(), s.Hist.Sum*toUs)
				}
				if len(buckets) == 0 {
					if r["lower_us"] != "" || r["count"] != "0" {
						t.Fatalf("empty series row %v", r)
					}
					continue
				}
				b := buckets[j]
				if r.num(t, "lower_us") != b.Lower*toUs || r.num(t, "upper_us") != b.Upper*toUs || r.num(t, "count") != b.Count ||
					r["capped"] != strconv.FormatBool(b.Capped) {
					t.Fatalf("interval %d %s bucket %d: %v, want %+v", k, s.Key, j, r, b)
				}
			}
		}
		for _, m := range iv.Means {
			r := next()
			checkWindow(t, iv, r, origin)
			checkMeanRow(t, m, r)
		}
	}
	if i != len(rows) {
		t.Fatalf("%d rows, the intervals need %d", len(rows), i)
	}
}

// checkMeanRow checks a mean series' row: key, no bucket edges, count,
// sum in µs, mean in µs (empty without events) and the source's unit.
func checkMeanRow(t *testing.T, m stream.SeriesMean, r row) {
	t.Helper()
	if r["event"] != m.Key.Event || r["instance"] != m.Key.Instance || r["source"] != m.Key.Source {
		t.Fatalf("mean row key %v, want %+v", r, m.Key)
	}
	toUs := float64(m.Unit) / 1000
	if r["lower_us"] != "" || r["upper_us"] != "" || r["capped"] != "" || r.num(t, "count") != m.Count ||
		r.num(t, "series_count") != m.Count || r.num(t, "series_sum_us") != m.Sum*toUs || r["sum_exact"] != "true" ||
		r["unit"] != m.Unit.String() {
		t.Fatalf("mean row %v, want %+v", r, m)
	}
	if m.Count == 0 && r["mean_us"] != "" || m.Count > 0 && r.num(t, "mean_us") != m.Mean()/1000 {
		t.Fatalf("mean_us %q, want %g", r["mean_us"], m.Mean()/1000)
	}
}

func checkWindow(t *testing.T, iv stream.Interval, r row, origin *time.Time) {
	t.Helper()
	if r["input"] != iv.Source || r["gap"] != strconv.FormatBool(iv.Gap) ||
		time.Duration(math.Round(r.num(t, "seconds")*1e9)) != iv.Duration {
		t.Fatalf("window %v, want %s %s gap %v", r, iv.Source, iv.Duration, iv.Gap)
	}
	if iv.Relative {
		off := time.Duration(math.Round(r.num(t, "offset_s") * 1e9))
		if r["start"] != "" || !stream.RelativeStart.Add(off).Equal(iv.Start) {
			t.Fatalf("relative window %v, want %s", r, iv.Start)
		}
		return
	}
	start, err := time.Parse(time.RFC3339Nano, r["start"])
	_, off := start.Zone()
	_, want := iv.Start.Zone()
	if want%60 != 0 {
		want = 0 // RFC 3339 offsets have no seconds: such starts are in UTC
	}
	if err != nil || !start.Equal(iv.Start) || off != want {
		t.Fatalf("start %q (%v), want %s", r["start"], err, iv.Start)
	}
	if d := iv.Start.Sub(*origin).Seconds(); r.num(t, "offset_s") != d {
		t.Fatalf("offset_s %q, want %g s after the first window", r["offset_s"], d)
	}
}

func TestExampleLatencyData(t *testing.T) {
	ivs := sourcetest.ReadShared(t, pylatencymap.Format(), "pylatencymap/example_latency_data.txt", source.Options{})
	out := sourcetest.WriteAll(t, Format(), ivs)
	rows := parseRows(t, out)
	checkRows(t, ivs, rows)
	total := 0.0
	for _, r := range rows {
		total += r.num(t, "count")
	}
	if total != 1237243 {
		t.Errorf("counts add up to %g, want 1237243 (the input's last record minus its first)", total)
	}
	if first := strings.Split(string(out), "\n")[1]; first != "2013-08-26T16:26:51.653754+02:00,0,3.01771,false,"+
		"db file sequential read latency data from gv$event_histogram,,,pylatencymap/example_latency_data.txt,0,1000,1702,false,18457,197339000,false,," {
		t.Errorf("first row %s", first)
	}
	t.Logf("%d rows, %d bytes", len(rows), len(out))
}

// The totals per event equal an independent count of the trace's WAIT
// lines (the trace's sums are exact).
func TestTraceTotalsEqualTheTrace(t *testing.T) {
	const trace = "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc" // Oracle 12.2: 40 waits of 13 events
	ivs := sourcetest.ReadShared(t, oracle10046.Format(), trace, source.Options{Interval: 100 * time.Millisecond})
	rows := parseRows(t, sourcetest.WriteAll(t, Format(), ivs))
	checkRows(t, ivs, rows)
	count, sum := map[string]float64{}, map[string]float64{}
	seen := map[string]bool{}
	for _, r := range rows {
		if r["event"] == "" {
			continue
		}
		count[r["event"]] += r.num(t, "count")
		// series_sum_us repeats on every bucket row: count it once per
		// window and series.
		if k := r["start"] + r["offset_s"] + "|" + r["event"] + "|" + r["instance"]; !seen[k] {
			seen[k] = true
			sum[r["event"]] += r.num(t, "series_sum_us")
		}
	}
	wantCount, wantSum := waitTotals(t, trace)
	if len(count) != len(wantCount) {
		t.Errorf("%d events, the trace has %d", len(count), len(wantCount))
	}
	for e, n := range wantCount {
		if count[e] != n || math.Abs(sum[e]-wantSum[e]) > 1e-9*wantSum[e] {
			t.Errorf("%q: %g waits %g µs, the trace has %g waits %g µs", e, count[e], sum[e], n, wantSum[e])
		}
	}
}

func waitTotals(t testing.TB, rel string) (count, sum map[string]float64) {
	t.Helper()
	data, err := os.ReadFile(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	count, sum = map[string]float64{}, map[string]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "WAIT #") {
			continue
		}
		_, rest, _ := strings.Cut(line, "nam='")
		name, rest, _ := strings.Cut(rest, "'")
		_, rest, _ = strings.Cut(rest, "ela=")
		ela, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		count[name]++
		sum[name] += ela
	}
	return count, sum
}

// Synthetic: gaps, empty windows and series, relative time, custom edges
// with an open top, keys CSV must quote.
func TestGapsRelativeTimeAndCustomEdges(t *testing.T) {
	netapp, err := hist.NewCustom(hist.Microsecond, []float64{20, 40, 60, math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	_ = netapp.AddCustom(-1, 3)
	_ = netapp.AddCustom(2, 2)
	ns := hist.NewExact(hist.Nanosecond, 0)
	_ = ns.Record(1500)
	ivs := []stream.Interval{
		{Source: "netapp", Start: time.Date(2015, 7, 14, 10, 0, 0, 0, time.FixedZone("CEST", 7200)), Duration: 5 * time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "nfs, \"read\"\nlatency", Instance: "vol1", Source: "netapp"}, Hist: netapp},
				{Key: stream.Key{Event: "idle"}, Hist: hist.NewBuckets(hist.Millisecond)}, {Key: stream.Key{Event: "ns"}, Hist: ns}}},
		{Source: "netapp", Start: time.Date(2015, 7, 14, 8, 0, 5, 0, time.UTC), Duration: 5 * time.Second, Gap: true},
		{Source: "netapp", Start: time.Date(2015, 7, 14, 8, 0, 10, 0, time.UTC), Duration: 5 * time.Second},
		{Source: "rel", Start: stream.RelativeStart.Add(1500 * time.Millisecond), Duration: 250 * time.Millisecond, Relative: true},
	}
	out := sourcetest.WriteAll(t, Format(), ivs)
	checkRows(t, ivs, parseRows(t, out))
	for _, want := range []string{
		"2015-07-14T10:00:00+02:00,0,5,false,\"nfs, \"\"read\"\"\nlatency\",vol1,netapp,netapp,60,120,2,true,5,210,false,,", // open top read as [60, 120): sum 3·10 + 2·90
		"2015-07-14T10:00:00+02:00,0,5,false,idle,,,netapp,,,0,,0,0,false,,",
		// 1500 ns lies in scale-6 bucket 675: [2^(675/64), 2^(676/64)) ns.
		"2015-07-14T10:00:00+02:00,0,5,false,ns,,,netapp,1.4959798212409825,1.5122699734420473,1,false,1,1.5,true,,",
		"2015-07-14T08:00:05Z,5,5,true,,,,netapp,,,0,,,,,,",
		",1.5,0.25,false,,,,rel,,,0,,,,,,",
	} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("no row %q in\n%s", want, out)
		}
	}
	// No interval at all: the header alone.
	if out := sourcetest.WriteAll(t, Format(), nil); string(out) != strings.Join(Header, ",")+"\n" {
		t.Errorf("empty output %q", out)
	}
}

// Python's csv module, what a data-frame user's tools build on, reads the
// rows and adds up the same total.
func TestPythonReadsTheRows(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.SkipOrFail(t, "python3 not installed")
	}
	out := sourcetest.WriteAll(t, Format(), sourcetest.ReadShared(t, pylatencymap.Format(), "pylatencymap/example_latency_data.txt", source.Options{}))
	cmd := exec.Command(py, "-c", "import csv, sys\nprint(int(sum(float(r['count']) for r in csv.DictReader(sys.stdin))))")
	cmd.Stdin = bytes.NewReader(out)
	got, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(got)) != "1237243" {
		t.Errorf("python total %q (%v), want 1237243", got, err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorsAreReported(t *testing.T) {
	w := NewWriter(failingWriter{})
	iv := stream.Interval{Source: "s", Start: time.Unix(1e9, 0), Duration: time.Second}
	for range 1000 {
		if err := w.Write(iv); err != nil {
			break
		}
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close: %v", err)
	}
}

// FuzzWriter writes arbitrary valid streams (fuzzed recording frames seeded
// with real data): the rows must parse and match the intervals.
func FuzzWriter(f *testing.F) {
	f.Add(recordingtest.Chunks(recordingtest.Encode(sourcetest.ReadShared(f, pylatencymap.Format(), "pylatencymap/example_latency_data.txt", source.Options{})[:4])))
	f.Add(recordingtest.Chunks(recordingtest.Encode(sourcetest.ReadShared(f, oracle10046.Format(), "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc",
		source.Options{Interval: 10 * time.Millisecond}))))
	f.Add(recordingtest.Chunks(recordingtest.Encode(meanIntervals())))
	f.Fuzz(func(t *testing.T, chunks []byte) {
		ivs := recordingtest.Intervals(chunks)
		for _, iv := range ivs {
			if iv.Duration >= 1<<51 || iv.Start.Sub(stream.RelativeStart) >= 1<<51 && iv.Relative {
				return // float seconds are exact below 2^51 ns (26 days)
			}
		}
		checkRows(t, ivs, parseRows(t, sourcetest.WriteAll(t, Format(), ivs)))
	})
}

// meanIntervals are SYNTHETIC (no live PostgreSQL recording can be
// shipped): the shape the postgres source emits from pg_stat_statements
// (calls, total_exec_time in ms) beside a histogram, a window without calls,
// and a gap.
func meanIntervals() []stream.Interval {
	start := time.Date(2024, 5, 2, 10, 0, 0, 0, time.UTC)
	stmt := stream.Key{Event: "SELECT 1", Instance: "shop"}
	// 250 µs lies in scale-6 bucket floor(64·log2 250) = 509: [2^(509/64), 2^(510/64)) µs.
	probe := hist.NewExact(hist.Microsecond, -10)
	_ = probe.Record(250)
	return []stream.Interval{
		{Source: "pg", Start: start, Duration: time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "probe"}, Hist: probe}},
			Means: []stream.SeriesMean{{Key: stmt, Count: 40, Sum: 12.5, Unit: hist.Millisecond},
				{Key: stream.Key{Event: "blk read"}, Count: 3, Sum: 0.75, Unit: hist.Millisecond}}},
		{Source: "pg", Start: start.Add(time.Second), Duration: time.Second,
			Means: []stream.SeriesMean{{Key: stmt, Count: 0, Sum: 0, Unit: hist.Millisecond}}},
		{Source: "pg", Start: start.Add(2 * time.Second), Duration: time.Second, Gap: true},
	}
}

func TestMeanSeries(t *testing.T) {
	ivs := meanIntervals()
	out := sourcetest.WriteAll(t, Format(), ivs)
	checkRows(t, ivs, parseRows(t, out))
	want := `start,offset_s,seconds,gap,event,instance,source,input,lower_us,upper_us,count,capped,series_count,series_sum_us,sum_exact,mean_us,unit
2024-05-02T10:00:00Z,0,1,false,probe,,,pg,247.81590956701368,250.51444789445122,1,false,1,250,true,,
2024-05-02T10:00:00Z,0,1,false,SELECT 1,shop,,pg,,,40,,40,12500,true,312.5,ms
2024-05-02T10:00:00Z,0,1,false,blk read,,,pg,,,3,,3,750,true,250,ms
2024-05-02T10:00:01Z,1,1,false,SELECT 1,shop,,pg,,,0,,0,0,true,,ms
2024-05-02T10:00:02Z,2,1,true,,,,pg,,,0,,,,,,
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
