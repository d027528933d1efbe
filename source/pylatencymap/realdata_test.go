package pylatencymap

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// example_latency_data.txt: 72 RAC records of gv$event_histogram 'db file
// sequential read' (ms), about 3 s apart, no datasource line.
func TestExampleLatencyData(t *testing.T) {
	res := runShared(t, "pylatencymap/example_latency_data.txt", source.Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := res.Malformed(); len(got) > 0 {
		t.Errorf("malformed lines reported: %q", got)
	}
	if w := res.Diag.Warnings(); len(w) > 0 {
		t.Errorf("warnings: %q (the label names gv$event_histogram, so upper bound is inferred silently)", w)
	}
	ivs := res.Intervals
	if len(ivs) != 71 {
		t.Fatalf("got %d intervals from 72 records, want 71", len(ivs))
	}

	// Wall-clock time from the text dates (+02:00), lengths from the µs field.
	zone := time.FixedZone("", 2*3600)
	firstStart := time.Date(2013, 8, 26, 16, 26, 51, 653754000, zone)
	lastEnd := time.Date(2013, 8, 26, 16, 30, 26, 120610000, zone)
	if !ivs[0].Start.Equal(firstStart) {
		t.Errorf("first interval starts %s, want %s (the first record's date)", ivs[0].Start, firstStart)
	}
	if !ivs[70].End().Equal(lastEnd) {
		t.Errorf("last interval ends %s, want %s (the last record's date)", ivs[70].End(), lastEnd)
	}
	if _, off := ivs[0].Start.Zone(); off != 2*3600 {
		t.Errorf("zone offset %d s, want +02:00", off)
	}
	if got, want := ivs[0].Duration, 3017710*time.Microsecond; got != want {
		t.Errorf("first interval lasts %s, want %s (52014671464 - 52011653754 µs)", got, want)
	}
	for i, iv := range ivs {
		if iv.Relative || iv.Gap {
			t.Errorf("interval %d: relative=%v gap=%v", i, iv.Relative, iv.Gap)
		}
		if iv.Duration < 2900*time.Millisecond || iv.Duration > 3100*time.Millisecond {
			t.Errorf("interval %d lasts %s, want about 3 s", i, iv.Duration)
		}
		if i > 0 && !iv.Start.Equal(ivs[i-1].End()) {
			t.Errorf("interval %d starts %s, previous ended %s", i, iv.Start, ivs[i-1].End())
		}
		for _, s := range iv.Series {
			if s.Key != (stream.Key{Event: "db file sequential read latency data from gv$event_histogram"}) {
				t.Errorf("interval %d: key %+v", i, s.Key)
			}
			if s.Hist.Unit != hist.Millisecond {
				t.Errorf("interval %d: unit %s", i, s.Hist.Unit)
			}
		}
	}

	total := res.total()
	if got := total.Count(); got != 1237243 {
		t.Errorf("total events %.0f, want 1237243 (last record's sum minus the first's)", got)
	}
	// Upper-bound buckets: midpoint 0.75·N. PyLatencyMap prints 23 ms
	// because it weighted this Oracle file as lower bound (×1.5).
	if mean := total.Mean(); math.Abs(mean-11.2) > 0.1 {
		t.Errorf("mean latency %.3f ms, want 11.2 ± 0.1 ms", mean)
	}

	// The workload stops at the end: the last two deltas have no events at
	// all (observed windows, not gaps) and the one before only 72.
	for _, i := range []int{69, 70} {
		if len(ivs[i].Series) != 0 {
			t.Errorf("interval %d has %.0f events, want an idle window", i, eventCount(ivs[i]))
		}
	}
	if got := eventCount(ivs[68]); got != 72 {
		t.Errorf("interval 68 has %.0f events, want 72", got)
	}
	// Two RAC instances are summed: the first delta adds both instances'
	// 1 ms bucket growth (4131014-4129312) + (2681431-2681431).
	if h := ivs[0].Series[0].Hist; h.ZeroCount != 1702 {
		t.Errorf("first interval's [0,1) ms bucket holds %.0f, want 1702", h.ZeroCount)
	}
}

// calibration_data*.txt: every bucket 64..32768 µs grows by one per record,
// records 1 s apart by the µs field although the dates say 00:00:0,
// 00:00:01, 00:00:01.
func TestCalibration(t *testing.T) {
	const bucketSum = 65472.0 // 64 + 128 + ... + 32768
	for _, tc := range []struct {
		file   string
		factor float64 // estimated time per event of bucket value N, in N
		// firstRow is the power of two of the row holding value 64.
		firstRow int
	}{
		{"calibration_data.txt", 1.5, 6},         // systemtap: [N, 2N)
		{"calibration_data_oracle.txt", 0.75, 5}, // oracle: [N/2, N)
	} {
		t.Run(tc.file, func(t *testing.T) {
			res := runShared(t, "pylatencymap/"+tc.file, source.Options{})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if len(res.Diag.Warnings()) > 0 || len(res.Malformed()) > 0 {
				t.Errorf("warnings %q, malformed %q", res.Diag.Warnings(), res.Malformed())
			}
			if len(res.Intervals) != 2 {
				t.Fatalf("got %d intervals, want 2", len(res.Intervals))
			}
			cet := time.FixedZone("CET", 3600)
			for i, iv := range res.Intervals {
				wantStart := time.Date(2015, 3, 14, 0, 0, i, 0, cet)
				if !iv.Start.Equal(wantStart) || iv.Duration != time.Second {
					t.Errorf("interval %d: %s for %s, want %s for 1s", i, iv.Start, iv.Duration, wantStart)
				}
				if len(iv.Series) != 1 {
					t.Fatalf("interval %d: %d series", i, len(iv.Series))
				}
				h := iv.Series[0].Hist
				if h.Unit != hist.Microsecond {
					t.Errorf("unit %s, want us", h.Unit)
				}
				if want := tc.factor * bucketSum; math.Abs(h.Sum-want) > 1e-9 {
					t.Errorf("interval %d: sum %g µs, want %g", i, h.Sum, want)
				}
				rows := h.Rows()
				if rows.First != tc.firstRow || len(rows.Counts) != 10 || rows.ZeroCount != 0 {
					t.Fatalf("rows start at 2^%d with %d rows, zero %g", rows.First, len(rows.Counts), rows.ZeroCount)
				}
				for j, c := range rows.Counts {
					n := math.Ldexp(64, j) // the bucket value the source wrote
					rate := c / iv.Duration.Seconds()
					if rate != 1 {
						t.Errorf("bucket %g: %g events/s, want 1", n, rate)
					}
					if want := tc.factor * n; math.Abs(rows.Times[j]-want) > 1e-9 {
						t.Errorf("bucket %g: time %g µs, want %g", n, rows.Times[j], want)
					}
				}
			}
		})
	}
}

// The raw DTrace quantize() and SystemTap @hist_log records are read as
// PyLatencyMap's connectors read them: lower-bound buckets (no datasource
// line needed for raw rows), the DTrace key line "myhistogram" and the
// "value" headers dropped, no warnings. The first record is the baseline,
// so the events are the last record's counts minus the first's (both read
// from the raw text by awk: 1284306 − 42416 and 77731 − 1611).
func TestRawHistogramRecords(t *testing.T) {
	for _, tc := range []struct {
		file      string
		intervals int
		events    float64
		key       string
		unit      hist.Unit
		start     time.Time
		span      time.Duration // from the first record to the last by the µs field
	}{
		{"test_DTrace_data.txt", 30, 1284306 - 42416, "pread latency measured with DTrace", hist.Nanosecond,
			time.Date(2013, 8, 27, 10, 54, 53, 0, time.UTC), (1006892396393 - 1006592395604) * time.Microsecond},
		{"test_SystemTap_data.txt", 47, 77731 - 1611, "Latency of block I/O 8KB read requests measured with SystemTap", hist.Microsecond,
			time.Date(2015, 3, 14, 19, 40, 7, 0, time.FixedZone("CET", 3600)), (1426358548973407 - 1426358407973575) * time.Microsecond},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res := runShared(t, "pylatencymap/"+tc.file, source.Options{Location: time.UTC})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if m, w := res.Malformed(), res.Diag.Warnings(); len(m) > 0 || len(w) > 0 {
				t.Errorf("malformed %q, warnings %q", m, w)
			}
			if len(res.Intervals) != tc.intervals {
				t.Fatalf("%d intervals, want %d", len(res.Intervals), tc.intervals)
			}
			if got := res.total().Count(); got != tc.events {
				t.Errorf("%g events, want %g", got, tc.events)
			}
			first, last := res.Intervals[0], res.Intervals[len(res.Intervals)-1]
			if !first.Start.Equal(tc.start) || !last.End().Equal(tc.start.Add(tc.span)) {
				t.Errorf("from %s to %s, want %s + %s", first.Start, last.End(), tc.start, tc.span)
			}
			for i, iv := range res.Intervals {
				if iv.Gap || iv.Relative || len(iv.Series) != 1 {
					t.Fatalf("interval %d: gap %v relative %v %d series", i, iv.Gap, iv.Relative, len(iv.Series))
				}
				if s := iv.Series[0]; s.Key != (stream.Key{Event: tc.key}) || s.Hist.Unit != tc.unit {
					t.Errorf("interval %d: %s in %s", i, s.Key, s.Hist.Unit)
				}
			}
		})
	}
	// DTrace's first delta: bucket 65536 0 → 1, 131072 10 → 21 ... read as
	// lower bounds [N, 2N) with 1.5·N midpoints.
	res := runShared(t, "pylatencymap/test_DTrace_data.txt", source.Options{Location: time.UTC})
	h := res.Intervals[0].Series[0].Hist
	wantCounts := map[float64]float64{65536: 1, 131072: 11, 262144: 11702, 524288: 24871, 1048576: 4992, 2097152: 270,
		4194304: 52, 8388608: 15, 16777216: 1, 67108864: 1}
	sum := 0.0
	for _, b := range h.Buckets() {
		if b.Upper != 2*b.Lower || wantCounts[b.Lower] != b.Count {
			t.Errorf("bucket [%g, %g) holds %g, want %g", b.Lower, b.Upper, b.Count, wantCounts[b.Lower])
		}
		sum += 1.5 * b.Lower * b.Count
	}
	if len(h.Buckets()) != len(wantCounts) || h.Sum != sum {
		t.Errorf("%d buckets, sum %g; want %d, %g", len(h.Buckets()), h.Sum, len(wantCounts), sum)
	}
}

func TestDetect(t *testing.T) {
	for _, rel := range []string{
		"pylatencymap/example_latency_data.txt",
		"pylatencymap/calibration_data.txt",
		"pylatencymap/calibration_data_oracle.txt",
		"pylatencymap/test_DTrace_data.txt",
		"pylatencymap/test_SystemTap_data.txt",
	} {
		data, err := os.ReadFile(testenv.DataFile(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		if v := Detect(data[:min(len(data), 4096)]); v != input.Yes {
			t.Errorf("%s: %v, want Yes", rel, v)
		}
		// A prefix cut before the first record line cannot tell yet.
		begin := strings.Index(string(data), beginMarker)
		if v := Detect(data[:begin+5]); v != input.NeedMore {
			t.Errorf("%s cut inside <begin record>: %v, want NeedMore", rel, v)
		}
	}
	trace, err := os.ReadFile(testenv.DataFile(t, "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc"))
	if err != nil {
		t.Fatal(err)
	}
	if v := Detect(trace[:min(len(trace), 2048)]); v != input.No {
		t.Errorf("Oracle 10046 trace: %v, want No", v)
	}
	for _, tc := range []struct {
		prefix string
		want   input.Verdict
	}{
		{"", input.NeedMore},
		{"31 rows selected.\n", input.NeedMore},
		{"  <BEGIN RECORD>  \r\n", input.Yes},
		{"WAIT #1: nam='db file sequential read' ela= 5\n", input.No},
		{strings.Repeat("some other text\n", 300), input.NeedMore}, // records may follow chatter
		{strings.Repeat("some other text\n", input.DetectLimit/16), input.No},
	} {
		if got := Detect([]byte(tc.prefix)); got != tc.want {
			t.Errorf("Detect(%.30q) = %v, want %v", tc.prefix, got, tc.want)
		}
	}
}

// The format is found by detection through the core Opener, as the CLI does.
func TestOpenerDetectsRealFile(t *testing.T) {
	path := testenv.DataFile(t, "pylatencymap/calibration_data_oracle.txt")
	diag := input.NewDiagnostics(nil, 5)
	o := &source.Opener{Formats: []source.Format{Format()}, Diag: diag}
	src, err := o.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if src.Name() != path {
		t.Errorf("Name() = %q, want %q", src.Name(), path)
	}
	n := 0
	err = source.RunAll(context.Background(), []source.Source{src}, false, diag, func(stream.Interval) error { n++; return nil })
	if err != nil || n != 2 {
		t.Errorf("RunAll: %d intervals, err %v; want 2, nil", n, err)
	}
	f := Format()
	if f.Name != "pylatencymap" || f.Description == "" || strings.Contains(f.Description, "\n") {
		t.Errorf("format name %q description %q", f.Name, f.Description)
	}
}
