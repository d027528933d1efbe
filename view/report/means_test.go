package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// meanIntervals is SYNTHETIC: what a pg_stat_statements sampler emits, four
// 1 s windows of one statement's calls and total time in milliseconds:
// 10 calls / 25 ms, no calls, a gap (connection lost), 4 calls / 40 ms.
func meanIntervals() []stream.Interval {
	t0 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	key := stream.Key{Event: "select * from t where id = $1", Instance: "db1"}
	mean := func(n, ms float64) []stream.SeriesMean {
		return []stream.SeriesMean{{Key: key, Count: n, Sum: ms, Unit: hist.Millisecond}}
	}
	return []stream.Interval{
		{Source: "pg", Start: t0, Duration: time.Second, Means: mean(10, 25)},
		{Source: "pg", Start: t0.Add(time.Second), Duration: time.Second},
		{Source: "pg", Start: t0.Add(2 * time.Second), Duration: time.Second, Gap: true},
		{Source: "pg", Start: t0.Add(3 * time.Second), Duration: time.Second, Means: mean(4, 40)},
	}
}

func meanRecording(base *stream.Recording) *stream.Recording {
	if base == nil {
		base = &stream.Recording{}
	}
	for _, iv := range meanIntervals() {
		base.Add(iv)
	}
	return base
}

func TestMeanSummary(t *testing.T) {
	r := Build(meanRecording(nil), nil)
	if len(r.Series) != 0 || len(r.Means) != 1 {
		t.Fatalf("%d series, %d means", len(r.Series), len(r.Means))
	}
	m := r.Means[0]
	// Independent arithmetic: 14 calls, 65 ms over 3 observed seconds.
	if m.Count != 14 || m.SumUs != 65000 || m.SourceUnit != "ms" || m.Instance != "db1" || len(m.Sources) != 1 || m.Sources[0] != "pg" {
		t.Fatalf("summary %+v", m)
	}
	if math.Abs(*m.MeanUs-65000.0/14) > 1e-9 || math.Abs(*m.PerS-14.0/3) > 1e-12 {
		t.Errorf("mean %v µs, %v/s", *m.MeanUs, *m.PerS)
	}
	if *m.MinIntervalMeanUs != 2500 || *m.MaxIntervalMeanUs != 10000 {
		t.Errorf("interval means %v – %v µs", *m.MinIntervalMeanUs, *m.MaxIntervalMeanUs)
	}
	if len(m.Intervals) != 4 || !m.Intervals[2].Gap || m.Intervals[1].Count != 0 || m.Intervals[3].SumUs != 40000 ||
		*m.Intervals[3].Start != "2024-03-01T10:00:03Z" || m.Intervals[3].OffsetS != 3 {
		t.Errorf("intervals %+v", m.Intervals)
	}
}

func TestMeanJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Build(meanRecording(nil), nil)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Means []map[string]any `json:"means"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"event": "select * from t where id = $1", "instance": "db1", "count": 14.0, "sum_us": 65000.0,
		"min_interval_mean_us": 2500.0, "max_interval_mean_us": 10000.0, "unit": "us", "source_unit": "ms"}
	for k, v := range want {
		if doc.Means[0][k] != v {
			t.Errorf("%s = %v, want %v", k, doc.Means[0][k], v)
		}
	}
	for _, k := range []string{"per_s", "mean_us", "sources", "intervals"} {
		if _, ok := doc.Means[0][k]; !ok {
			t.Errorf("mean lacks %q", k)
		}
	}
}

// A report without mean series must not change: the means section only
// appends to the table, JSON and CSV of a real trace.
func TestMeansLeaveOtherOutputAlone(t *testing.T) {
	rec, diag := traceRecording(t, realTrace)
	plain := map[string]string{}
	for _, f := range []string{FormatTable, FormatJSON, FormatCSV} {
		var buf bytes.Buffer
		if err := Write(&buf, Build(rec, diag), f, Options{Intervals: true}); err != nil {
			t.Fatal(err)
		}
		plain[f] = buf.String()
	}
	if strings.Contains(plain[FormatJSON], `"means"`) || strings.Contains(plain[FormatTable], meansTitle) {
		t.Fatal("a report without means mentions them")
	}
	meanRecording(rec)
	var buf bytes.Buffer
	if err := Write(&buf, Build(rec, diag), FormatTable, Options{Intervals: true}); err != nil {
		t.Fatal(err)
	}
	table := buf.String()
	if !strings.HasPrefix(table, plain[FormatTable]+"\n"+meansTitle+"\n") {
		t.Errorf("the means section does not follow the unchanged table:\n%s", table[len(plain[FormatTable])-200:])
	}
	for _, want := range []string{"events 14   4.7/s   total 65ms", "mean 4.64ms   interval means 2.5ms – 10ms", "sources pg",
		"2024-03-01T10:00:02Z    1.000  no data", "2024-03-01T10:00:03Z    1.000        4       4.0   10ms"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table[len(plain[FormatTable]):])
		}
	}
	buf.Reset()
	if err := Write(&buf, Build(rec, diag), FormatCSV, Options{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); !strings.HasSuffix(got, ",p99_us,per_s,min_interval_mean_us,max_interval_mean_us") {
		t.Errorf("header %s", got)
	}
	var mean, ivs []string
	for _, r := range rows {
		switch r[0] {
		case "mean":
			mean = r
		case "mean_interval":
			ivs = append(ivs, strings.Join(r, ","))
		}
	}
	if mean == nil || mean[10] != "65000" || mean[9] != "14" || mean[17] != "2500" || mean[18] != "10000" || len(ivs) != 4 {
		t.Errorf("mean row %v, %d interval rows", mean, len(ivs))
	}
	if want := "mean_interval,select * from t where id = $1,db1,,2024-03-01T10:00:00Z,0,1,,,10,25000,,2500,,,,,,"; ivs[0] != want {
		t.Errorf("first interval row\n%s\nwant\n%s", ivs[0], want)
	}
}

func TestMeansOnlyTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, Build(meanRecording(nil), nil), Options{}); err != nil {
		t.Fatal(err)
	}
	want := meansTitle + "\n\nselect * from t where id = $1 @db1\n  events 14   4.7/s   total 65ms\n" +
		"  mean 4.64ms   interval means 2.5ms – 10ms\n  sources pg\n"
	if buf.String() != want {
		t.Errorf("table\n%s\nwant\n%s", buf.String(), want)
	}
}

// TestQuantityReport checks a host figure's summary: value over the
// observed windows, interval values, JSON fields and the table lines.
// SYNTHETIC: two 1 s windows of disk.r/s (412 and 100 reads) and a gap.
func TestQuantityReport(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	key := stream.Key{Event: "disk.r/s", Instance: "sda"}
	rs := func(reads float64) []stream.SeriesMean {
		return []stream.SeriesMean{{Key: key, Count: 1, Sum: reads, Unit: stream.QuantityUnit, Quantity: stream.PerSecond}}
	}
	rec := &stream.Recording{}
	for _, iv := range []stream.Interval{
		{Source: "host:a", Start: t0, Duration: time.Second, Means: rs(412)},
		{Source: "host:a", Start: t0.Add(time.Second), Duration: time.Second, Gap: true},
		{Source: "host:a", Start: t0.Add(2 * time.Second), Duration: time.Second, Means: rs(100)},
	} {
		rec.Add(iv)
	}
	r := Build(rec, nil)
	m := r.Means[0]
	if m.Quantity != stream.PerSecond || *m.Value != 256 || *m.MinIntervalValue != 100 || *m.MaxIntervalValue != 412 ||
		m.MeanUs != nil || m.PerS != nil || m.Unit != "per_second" {
		t.Fatalf("summary %+v", m)
	}
	if len(m.Intervals) != 3 || *m.Intervals[0].Value != 412 || m.Intervals[1].Value != nil || !m.Intervals[1].Gap {
		t.Fatalf("intervals %+v", m.Intervals)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"quantity": "per_second"`, `"value": 256`, `"min_interval_value": 100`, `"sum": 412`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, js.String())
		}
	}
	var tb bytes.Buffer
	if err := WriteTable(&tb, r, Options{Intervals: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"disk.r/s @sda", "value 256.0/s   interval values 100.0/s – 412.0/s", "412.0/s", "no data"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tb.String())
		}
	}
	var cb bytes.Buffer
	if err := WriteCSV(&cb, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if h := rows[0]; h[len(h)-3] != "value" || rows[1][len(h)-3] != "256" || rows[2][len(h)-3] != "412" {
		t.Errorf("csv %v", rows[:3])
	}
}
