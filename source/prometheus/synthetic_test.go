package prometheus

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
)

// The inputs in this file are SYNTHETIC exposition text, written by the
// format's rules, for cases a live client does not produce: bad lines,
// bucket edges that change, other units.

// TestMalformedLines: bad lines are reported with their line numbers and
// dropped; the rest of their scrape is kept.
func TestMalformedLines(t *testing.T) {
	in := `# TYPE rpc_seconds histogram
rpc_seconds_bucket{le="0.1"} 1
rpc_seconds_bucket{le="1"} 2
rpc_seconds_bucket{le="+Inf"} 2
rpc_seconds_count 2
this is not a metric
rpc_seconds_bucket{le="0.1"} 3
rpc_seconds_bucket{le="1"} 7 notatime
rpc_seconds_bucket{le="1"} seven
rpc_seconds_bucket{le="1",} 8
rpc_seconds_bucket{le="+Inf"} 9
rpc_seconds_bucket{le="0.1"
rpc_seconds_count 9
`
	res := runString(t, in, source.Options{Interval: time.Second})
	want := []string{
		"6: want NAME{LABELS} VALUE [TIMESTAMP]",
		`8: timestamp "notatime" is not milliseconds between 1970 and 3000`,
		`12: unterminated label set`,
		`9: expected float as value, got "seven"`,
	}
	if got := res.Malformed(); !slices.Equal(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Intervals) != 1 {
		t.Fatalf("%d intervals, want 1", len(res.Intervals))
	}
	h := find(res.Intervals[0], "rpc_seconds", "")
	// [0, 0.1): 2, [0.1, 1): 4, [1, +Inf): 1.
	if got := bucketCounts(t, h, []float64{0.1, 1}); !slices.Equal(got, []float64{2, 4, 1}) {
		t.Errorf("buckets %v, want [2 4 1]", got)
	}
	if h.SumExact {
		t.Errorf("no _sum lines: the sum must be an estimate")
	}
}

// TestBadSeries: a series whose cumulative counts fall as le grows is left
// out with a report; the others stay.
func TestBadSeries(t *testing.T) {
	in := `# TYPE q_seconds histogram
q_seconds_bucket{a="x",le="1"} 5
q_seconds_bucket{a="x",le="+Inf"} 3
q_seconds_bucket{a="y",le="1"} 1
q_seconds_bucket{a="y",le="+Inf"} 1
`
	res := runString(t, in+in, source.Options{Interval: time.Second})
	if got := res.Malformed(); len(got) != 2 || !strings.Contains(got[0], "series q_seconds @a=x: the +Inf bucket holds fewer events than a finite one; left out") {
		t.Errorf("problems %q", got)
	}
	if len(res.Intervals) != 1 || len(res.Intervals[0].Series) != 0 {
		t.Errorf("intervals %+v", res.Intervals)
	}
}

// TestEdgesGrow: a writer that adds edges as buckets fill (latscope's own
// prometheus output does) is read exactly: the earlier scrape is
// re-expressed on the wider edges.
func TestEdgesGrow(t *testing.T) {
	in := `# TYPE w_seconds histogram
w_seconds_bucket{le="1"} 0
w_seconds_bucket{le="2"} 3
w_seconds_bucket{le="+Inf"} 3
w_seconds_sum 4.5
w_seconds_count 3
# TYPE w_seconds histogram
w_seconds_bucket{le="0.25"} 0
w_seconds_bucket{le="0.5"} 2
w_seconds_bucket{le="1"} 2
w_seconds_bucket{le="2"} 6
w_seconds_bucket{le="8"} 6
w_seconds_bucket{le="16"} 7
w_seconds_bucket{le="+Inf"} 7
w_seconds_sum 16.5
w_seconds_count 7
`
	res := runString(t, in, source.Options{})
	if len(res.Intervals) != 1 || len(res.Malformed()) != 0 {
		t.Fatalf("%d intervals, problems %q", len(res.Intervals), res.Malformed())
	}
	h := find(res.Intervals[0], "w_seconds", "")
	want := []hist.Bucket{{Lower: 0.25, Upper: 0.5, Count: 2}, {Lower: 1, Upper: 2, Count: 1}, {Lower: 8, Upper: 16, Count: 1}}
	if got := h.Buckets(); !slices.Equal(got, want) || h.Sum != 12 || !h.SumExact || h.TopOpen {
		t.Errorf("buckets %+v sum %g exact %v open %v, want %+v sum 12", got, h.Sum, h.SumExact, h.TopOpen, want)
	}
}

// TestUnits: the unit comes from the name's suffix, else --unit, else
// seconds; a histogram in bytes is read only when --event names it.
func TestUnits(t *testing.T) {
	block := func(name string) string {
		return "# TYPE " + name + " histogram\n" + name + `_bucket{le="10"} 0` + "\n" + name + `_bucket{le="+Inf"} 0` + "\n"
	}
	grown := func(name string) string {
		return name + `_bucket{le="10"} 1` + "\n" + name + `_bucket{le="+Inf"} 1` + "\n"
	}
	names := []string{"a_milliseconds", "b_microseconds", "c_nanoseconds", "d_latency", "e_bytes"}
	var in strings.Builder
	for _, n := range names {
		in.WriteString(block(n))
	}
	for _, n := range names {
		in.WriteString(grown(n))
	}
	units := func(opts source.Options) map[string]hist.Unit {
		res := runString(t, in.String(), opts)
		out := map[string]hist.Unit{}
		for _, s := range res.Intervals[0].Series {
			out[s.Key.Event] = s.Hist.Unit
		}
		return out
	}
	got := units(source.Options{})
	want := map[string]hist.Unit{"a_milliseconds": hist.Millisecond, "b_microseconds": hist.Microsecond,
		"c_nanoseconds": hist.Nanosecond, "d_latency": hist.Second}
	if len(got) != len(want) {
		t.Errorf("units %v, want %v", got, want)
	}
	for k, u := range want {
		if got[k] != u {
			t.Errorf("%s in %s, want %s", k, got[k], u)
		}
	}
	got = units(source.Options{Unit: hist.Millisecond, Events: []string{"d_latency", "e_bytes"}})
	if len(got) != 2 || got["d_latency"] != hist.Millisecond || got["e_bytes"] != hist.Millisecond {
		t.Errorf("with --unit ms --event d_latency,e_bytes: %v", got)
	}
}

// TestTimestampsBackwards: a scrape not later than the previous one starts
// a new baseline instead of a negative interval.
func TestTimestampsBackwards(t *testing.T) {
	scrape := func(n, ts string) string {
		return `z_seconds_bucket{le="1"} ` + n + " " + ts + "\n" + `z_seconds_bucket{le="+Inf"} ` + n + " " + ts + "\n"
	}
	in := "# TYPE z_seconds histogram\n" + scrape("1", "1700000000000") + scrape("3", "1700000010000") +
		scrape("4", "1700000005000") + scrape("9", "1700000015000")
	res := runString(t, in, source.Options{Location: time.UTC})
	var got []string
	for _, iv := range res.Intervals {
		got = append(got, iv.Start.Format("15:04:05")+"+"+iv.Duration.String())
	}
	if want := []string{"22:13:20+10s", "22:13:25+10s"}; !slices.Equal(got, want) {
		t.Errorf("intervals %v, want %v", got, want)
	}
	if w := res.Diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "scrape at line 6 is not later than the previous one") {
		t.Errorf("warnings %q", w)
	}
}

func TestEmptyAndOthers(t *testing.T) {
	for _, in := range []string{"", "# HELP x y\n", "# TYPE g gauge\ng 1\ng 2\n# TYPE s summary\ns{quantile=\"0.5\"} 1\n"} {
		if res := runString(t, in, source.Options{}); len(res.Intervals) != 0 || len(res.Malformed()) != 0 {
			t.Errorf("%q: %d intervals, problems %q", in, len(res.Intervals), res.Malformed())
		}
	}
}

func TestDetect(t *testing.T) {
	if got := Detect([]byte("# HELP x_seconds Latency.\n# TYPE x_seconds histogram\n")); got != input.Yes {
		t.Errorf("Detect(TYPE line) = %v", got)
	}
	if got := Detect([]byte("# HELP x_seconds Latency.\n# TYPE x_seconds hist")); got != input.NeedMore {
		t.Errorf("Detect(cut TYPE line) = %v", got)
	}
	if got := Detect([]byte("# TYPE x_seconds nonsense\n" + strings.Repeat("x 1\n", 1100))); got != input.No {
		t.Errorf("Detect(4 KiB without a real TYPE line) = %v", got)
	}
	testenv.WalkData(t, func(p string) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if Detect(data[:min(len(data), 64<<10)]) == input.Yes {
			t.Errorf("Detect(%s) = Yes", p)
		}
	})
}

// TestLatscopeOwnMetric: latscope's own output reads back into the series
// it was written from (event, instance, source labels), which --event
// selects; other labels make it an ordinary series.
func TestLatscopeOwnMetric(t *testing.T) {
	scrape := func(ts string, n int) string {
		var b strings.Builder
		for _, labels := range []string{`event="log file sync",instance="db1"`, `event="x",job="y"`} {
			for _, le := range []string{"0.001", "+Inf"} {
				b.WriteString("latscope_latency_seconds_bucket{" + labels + `,le="` + le + `"} ` + strconv.Itoa(n) + " " + ts + "\n")
			}
		}
		return b.String()
	}
	in := "# TYPE latscope_latency_seconds histogram\n" + scrape("1700000000000", 1) + scrape("1700000001000", 3)
	res := runString(t, in, source.Options{})
	var keys []string
	for _, s := range res.Intervals[0].Series {
		keys = append(keys, fmt.Sprintf("%q", []string{s.Key.Event, s.Key.Instance, s.Key.Source}))
	}
	want := []string{`["log file sync" "db1" ""]`, `["latscope_latency_seconds" "event=x,job=y" ""]`}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	res = runString(t, in, source.Options{Events: []string{"log file sync"}})
	if len(res.Intervals[0].Series) != 1 || res.Intervals[0].Series[0].Key.Event != "log file sync" {
		t.Errorf("--event kept %+v", res.Intervals[0].Series)
	}
}
