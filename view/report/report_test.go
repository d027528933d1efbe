package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/stream"
)

// traceRecording reads a real 10046 trace through its real source.
func traceRecording(t *testing.T, rel string) (*stream.Recording, *input.Diagnostics) {
	t.Helper()
	diag := input.NewDiagnostics(nil, 5)
	op := &source.Opener{Formats: []source.Format{oracle10046.Format()}, Diag: diag,
		Options: source.Options{Location: time.FixedZone("CET", 3600)}}
	src, err := op.Open(context.Background(), testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	rec := &stream.Recording{}
	if err := src.Run(context.Background(), func(iv stream.Interval) error { rec.Add(iv); return nil }); err != nil {
		t.Fatal(err)
	}
	return rec, diag
}

// realTrace is a real Oracle 12.2 trace of instance js122a1. Its raw text
// gives the figures below: 13 events (grep -o "nam='[^']*'" | sort -u), 7
// of them db file sequential read (grep -c), and a first timestamp of
// 09:57:07.7-07:00, in the 3 s window from 09:57:06.
const realTrace = "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc"

func TestBuildFromARealTrace(t *testing.T) {
	rec, diag := traceRecording(t, realTrace)
	r := Build(rec, diag)
	if len(r.Series) != 13 {
		t.Fatalf("%d series, want 13", len(r.Series))
	}
	var seq *Series
	for i := range r.Series {
		if r.Series[i].Event == "db file sequential read" {
			seq = &r.Series[i]
		}
	}
	if seq == nil || seq.Count != 7 || !seq.SumExact || seq.Unit != "us" || seq.SourceUnit != "us" || seq.Instance != "js122a1" {
		t.Fatalf("db file sequential read: %+v", seq)
	}
	// The buckets add up to the totals; the intervals too.
	var n, sum, ivn, ivsum float64
	for _, b := range seq.Buckets {
		n += b.Count
		sum += b.SumUs
		if b.LowerUs != 0 && b.UpperUs != 2*b.LowerUs {
			t.Errorf("bucket [%g, %g) is not a power-of-two bucket", b.LowerUs, b.UpperUs)
		}
	}
	for _, iv := range seq.Intervals {
		ivn += iv.Count
		ivsum += iv.SumUs
	}
	if n != seq.Count || math.Abs(sum-seq.SumUs) > 1e-6*seq.SumUs || ivn != seq.Count || math.Abs(ivsum-seq.SumUs) > 1e-6*seq.SumUs {
		t.Errorf("buckets %g/%g, intervals %g/%g vs %g events %g µs", n, sum, ivn, ivsum, seq.Count, seq.SumUs)
	}
	if *seq.P50Us > *seq.P90Us || *seq.P90Us > *seq.P99Us || *seq.MeanUs*seq.Count-seq.SumUs > 1e-6 {
		t.Errorf("percentiles out of order or mean wrong: %+v", seq)
	}
	if first := seq.Intervals[0].Start; first == nil || *first != "2019-07-09T09:57:06-07:00" {
		t.Errorf("first interval starts %v", first)
	}
	if last := r.Series[len(r.Series)-1]; !last.Idle {
		t.Errorf("last series %q is not the idle one", last.Event)
	}
}

func TestJSONShape(t *testing.T) {
	rec, diag := traceRecording(t, realTrace)
	var buf bytes.Buffer
	if err := Write(&buf, Build(rec, diag), FormatJSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Series []map[string]any `json:"series"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"event", "instance", "unit", "count", "sum_us", "sum_exact", "mean_us", "p50_us", "p90_us", "p99_us", "buckets", "intervals"} {
		if _, ok := doc.Series[0][field]; !ok {
			t.Errorf("series lacks %q", field)
		}
	}
	iv := doc.Series[0]["intervals"].([]any)[0].(map[string]any)
	for _, field := range []string{"start", "seconds", "count", "sum_us"} {
		if _, ok := iv[field]; !ok {
			t.Errorf("interval lacks %q", field)
		}
	}
	b := doc.Series[0]["buckets"].([]any)[0].(map[string]any)
	for _, field := range []string{"lower_us", "upper_us", "count"} {
		if _, ok := b[field]; !ok {
			t.Errorf("bucket lacks %q", field)
		}
	}
}

func TestCSVIsOneLongTable(t *testing.T) {
	rec, diag := traceRecording(t, realTrace)
	var buf bytes.Buffer
	if err := Write(&buf, Build(rec, diag), FormatCSV, Options{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range rows[1:] {
		if len(r) != len(rows[0]) {
			t.Fatalf("ragged row %v", r)
		}
		kinds[r[0]]++
	}
	if kinds["series"] != 13 || kinds["bucket"] == 0 || kinds["interval"] == 0 {
		t.Errorf("row kinds %v", kinds)
	}
}

func TestTableOnEstimatedAndEmptyData(t *testing.T) {
	h := hist.NewBuckets(hist.Millisecond)
	_ = h.AddBound(hist.UpperBound, 8, 1234567)
	_ = h.AddOpenTop(8, 3)
	rec := &stream.Recording{}
	rec.Add(stream.Interval{Source: "x", Start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Duration: time.Second,
		Series: []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}})
	var buf bytes.Buffer
	if err := Write(&buf, Build(rec, nil), FormatTable, Options{Intervals: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"log file sync", "1 234 570", "estimated from bucket midpoints", "≥ 8ms", "4ms – 8ms", "no upper bound", "2024-01-01T00:00:00Z"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := Write(&buf, Build(&stream.Recording{}, nil), FormatTable, Options{}); err != nil || !strings.Contains(buf.String(), "no latency data") {
		t.Errorf("empty table %q %v", buf.String(), err)
	}
	if err := Write(&buf, Report{}, "xml", Options{}); err == nil {
		t.Error("unknown format accepted")
	}
}
