package loadtest

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
)

// exactStep is a synthetic step whose figures are known in closed form:
// 1000 operations of 1, 2, …, 1000 µs in 2 s, 8 KiB each, 50 ms of CPU.
func exactStep(t *testing.T) Step {
	t.Helper()
	h := hist.NewExact(hist.Microsecond, -10)
	for v := 1; v <= 1000; v++ {
		if err := h.Record(float64(v)); err != nil {
			t.Fatal(err)
		}
	}
	return Step{
		Concurrency: 4, Elapsed: 2 * time.Second, Bytes: 1000 * 8192, Latency: h,
		Max: 1000 * time.Microsecond, CPU: 50 * time.Millisecond, Errors: 3,
	}
}

func TestSummarizeExactFigures(t *testing.T) {
	st := Summarize(exactStep(t))
	want := Stats{
		Concurrency: 4, Seconds: 2, Ops: 1000, IOPS: 500, MBs: 4.096, Latency: Latency{MeanUS: 500.5,
			MaxUS: 1000}, CPUPerOpUS: 50, LittleConcurrency: 500 * 500.5e-6, Errors: 3,
	}
	got := st
	got.P50US, got.P90US, got.P99US, got.P999US = 0, 0, 0, 0
	if got != want {
		t.Errorf("Summarize:\n got %+v\nwant %+v", got, want)
	}
	// Percentiles of 1..1000: the q-th is q·1000 µs, to the 1.1 % bucket
	// width of the scale-6 grid.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", st.P50US, 500}, {"p90", st.P90US, 900}, {"p99", st.P99US, 990}, {"p99.9", st.P999US, 999}} {
		if math.Abs(c.got/c.want-1) > 0.011 {
			t.Errorf("%s = %g, want %g ± 1.1 %%", c.name, c.got, c.want)
		}
	}
}

// A percentile interpolated inside the top bucket never exceeds the exact
// maximum: 10 reads of exactly 1000 µs report p99 = p99.9 = 1000 µs, not
// the bucket's upper edge (1004 µs).
func TestPercentilesNeverExceedMax(t *testing.T) {
	h := hist.NewExact(hist.Microsecond, -10)
	_ = h.RecordN(1000, 10)
	st := Summarize(Step{Concurrency: 1, Elapsed: time.Second, Latency: h, Max: time.Millisecond})
	if st.P99US != 1000 || st.P999US != 1000 || st.MaxUS != 1000 {
		t.Errorf("p99 %g p99.9 %g max %g, want 1000", st.P99US, st.P999US, st.MaxUS)
	}
	if st.P50US < 1000*math.Exp2(-1.0/64) {
		t.Errorf("p50 %g below the bucket holding 1000", st.P50US)
	}
}

// Without a recorded maximum, MaxUS is the top bucket's upper edge.
func TestMaxFallsBackToTopBucketEdge(t *testing.T) {
	h := hist.NewExact(hist.Microsecond, -10)
	_ = h.Record(1000)
	st := Summarize(Step{Elapsed: time.Second, Latency: h})
	b := h.Buckets()
	if st.MaxUS != b[0].Upper || st.MaxUS < 1000 || st.MaxUS > 1000*math.Exp2(1.0/64) {
		t.Errorf("MaxUS %g, want the upper edge %g of the bucket holding 1000", st.MaxUS, b[0].Upper)
	}
}

// A histogram in another unit is converted to µs.
func TestSummarizeConvertsUnits(t *testing.T) {
	h := hist.NewExact(hist.Nanosecond, 0)
	_ = h.RecordN(250_000, 4) // 250 µs
	st := Summarize(Step{Concurrency: 1, Elapsed: time.Second, Latency: h, Max: 250 * time.Microsecond})
	if st.MeanUS != 250 || st.MaxUS != 250 || math.Abs(st.P50US/250-1) > 0.011 {
		t.Errorf("mean %g max %g p50 %g, want 250 µs", st.MeanUS, st.MaxUS, st.P50US)
	}
}

// Steps without operations or time give zeros, never NaN or Inf, and
// their JSON encodes.
func TestEmptyStepsGiveZeros(t *testing.T) {
	bad := hist.NewExact(hist.Microsecond, 0)
	bad.Counts, bad.Offset = []float64{math.NaN()}, 0
	for name, s := range map[string]Step{
		"nil histogram":   {Concurrency: 2, Elapsed: time.Second},
		"empty histogram": {Concurrency: 2, Elapsed: time.Second, Latency: hist.NewExact(hist.Microsecond, -10), Errors: 7},
		"invalid counts":  {Concurrency: 2, Elapsed: time.Second, Latency: bad},
		"no elapsed time": {Concurrency: 2, Latency: exactStep(t).Latency},
		"negative inputs": {Concurrency: 2, Rate: math.NaN(), Elapsed: -time.Second, Bytes: -5, CPU: -time.Second, Latency: exactStep(t).Latency},
	} {
		st := Summarize(s)
		if !allFinite(statsFields(st)...) {
			t.Errorf("%s: non-finite figure in %+v", name, st)
		}
		for _, v := range statsFields(st) {
			if v < 0 {
				t.Errorf("%s: negative figure in %+v", name, st)
			}
		}
		if _, err := json.Marshal(st); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	st := Summarize(Step{Concurrency: 2, Elapsed: time.Second, Errors: 7})
	if want := (Stats{Concurrency: 2, Seconds: 1, Errors: 7}); st != want {
		t.Errorf("nil histogram: %+v, want %+v", st, want)
	}
	if st := Summarize(Step{Concurrency: 2, Latency: exactStep(t).Latency}); st.Ops != 1000 || st.IOPS != 0 || st.LittleConcurrency != 0 {
		t.Errorf("no elapsed time: %+v, want 1000 ops at 0 IOPS", st)
	}
}

// statsFields lists every float figure of st.
func statsFields(st Stats) []float64 {
	return []float64{st.Rate, st.Seconds, st.IOPS, st.MBs, st.MeanUS, st.P50US, st.P90US, st.P99US, st.P999US,
		st.MaxUS, st.CPUPerOpUS, st.LittleConcurrency}
}

// The JSON keys are the ones the report promises; rate only in open loops.
func TestStatsJSONKeys(t *testing.T) {
	keys := func(v any) []string {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	closed := Summarize(exactStep(t))
	want := []string{"concurrency", "cpu_per_op_us", "errors", "iops", "little_concurrency", "max_us", "mb_s",
		"mean_us", "ops", "p50_us", "p90_us", "p999_us", "p99_us", "seconds"}
	if got := keys(closed); !reflect.DeepEqual(got, want) {
		t.Errorf("closed-loop keys %q, want %q", got, want)
	}
	closed.Rate = 500
	if got := keys(closed); !slices.Contains(got, "rate") || len(got) != len(want)+1 {
		t.Errorf("open-loop keys %q, want rate as well", got)
	}
}

func TestLittleCheck(t *testing.T) {
	full := Stats{Concurrency: 8, Seconds: 10, Ops: 80000, IOPS: 8000, Latency: Latency{MeanUS: 1000}} // L = 8
	cases := []struct {
		name      string
		s         Stats
		ratio     float64
		noteHas   string
		noteLacks string
	}{
		{"busy workers", full, 1, "Little's law holds", "think time"},
		{"think time", with(full, func(s *Stats) { s.MeanUS = 500 }), 0.5, "only 4.00 of 8 workers", ""},
		{"think time wording", with(full, func(s *Stats) { s.MeanUS = 500 }), 0.5, "think time, load-generator overhead or CPU starvation", ""},
		{"edge 0.9 holds", with(full, func(s *Stats) { s.MeanUS = 900 }), 0.9, "holds", ""},
		{"mis-measured", with(full, func(s *Stats) { s.MeanUS = 1200 }), 1.2, "mis-measured", ""},
		{"unknown workers", with(full, func(s *Stats) { s.Concurrency = 0 }), 0, "8.00 operations in flight", ""},
		{"no operations", Stats{Concurrency: 8, Seconds: 10}, 0, "no operations", ""},
		{"open loop", Stats{Concurrency: 64, Rate: 5000, Seconds: 10, Ops: 49800, IOPS: 4980, Latency: Latency{MeanUS: 2000}}, 9.96 / 64, "9.96 operations in flight on average (X·R) at 4980/s achieved of 5000/s intended", "pool"},
		{"open loop full pool", Stats{Concurrency: 8, Rate: 5000, Seconds: 10, Ops: 49800, IOPS: 4980, Latency: Latency{MeanUS: 2000}}, 9.96 / 8, "fills the pool of 8 workers", ""},
	}
	for _, c := range cases {
		ratio, note := LittleCheck(c.s)
		if math.Abs(ratio-c.ratio) > 1e-12 || !strings.Contains(note, c.noteHas) || (c.noteLacks != "" && strings.Contains(note, c.noteLacks)) {
			t.Errorf("%s: ratio %g note %q; want ratio %g, note with %q", c.name, ratio, note, c.ratio, c.noteHas)
		}
	}
	if l := Little(full); l != 8 {
		t.Errorf("Little = %g, want 8", l)
	}
}

func with(s Stats, f func(*Stats)) Stats {
	f(&s)
	return s
}

// Latency embedded in a report keeps Stats' JSON names, flat.
func TestLatencyIsFlatInJSON(t *testing.T) {
	b, err := json.Marshal(struct {
		Ops int64 `json:"ops"`
		Latency
	}{1, Latency{MeanUS: 1, P50US: 2, P90US: 3, P99US: 4, P999US: 5, MaxUS: 6}})
	want := `{"ops":1,"mean_us":1,"p50_us":2,"p90_us":3,"p99_us":4,"p999_us":5,"max_us":6}`
	if err != nil || string(b) != want {
		t.Errorf("JSON %s, %v; want %s", b, err, want)
	}
}
