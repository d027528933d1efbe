package loadtest

import (
	"encoding/json"
	"testing"
)

// sweep builds closed-loop steps (synthetic figures) with 10 s each and
// the given concurrency, IOPS and p99.
func sweep(rows ...[3]float64) []Stats {
	var out []Stats
	for _, r := range rows {
		out = append(out, Stats{Concurrency: int(r[0]), Seconds: 10, Ops: int64(r[1] * 10), IOPS: r[1], Latency: Latency{P99US: r[2]}})
	}
	return out
}

// rates builds open-loop steps: intended rate, achieved IOPS, p99.
func rates(rows ...[3]float64) []Stats {
	var out []Stats
	for _, r := range rows {
		out = append(out, Stats{Concurrency: 64, Rate: r[0], Seconds: 10, Ops: int64(r[1] * 10), IOPS: r[1], Latency: Latency{P99US: r[2]}})
	}
	return out
}

func TestFindKnee(t *testing.T) {
	storage := Words{Worker: "reader", Workers: "readers", Throughput: "IOPS"}
	cases := []struct {
		name   string
		steps  []Stats
		words  Words
		index  int // −1: no knee
		reason string
	}{
		{"scales throughout", sweep([3]float64{1, 1000, 200}, [3]float64{2, 1950, 210}, [3]float64{4, 3800, 230}, [3]float64{8, 7000, 300}),
			Words{}, -1, ""},
		{"IOPS gain under 10 %", sweep([3]float64{1, 1000, 200}, [3]float64{2, 1950, 210}, [3]float64{4, 3800, 230}, [3]float64{8, 3952, 390}),
			storage, 3, "8 readers gave only 4 % more IOPS than 4"},
		{"gain of exactly 10 % still scales", sweep([3]float64{1, 1000, 200}, [3]float64{2, 1100, 210}),
			Words{}, -1, ""},
		{"p99 doubles", sweep([3]float64{1, 1000, 180}, [3]float64{2, 1950, 250}, [3]float64{4, 3800, 412}),
			storage, 2, "p99 412µs is 2.3× the p99 of 1 reader (180µs)"},
		{"p99 exactly 2×", sweep([3]float64{1, 1000, 200}, [3]float64{2, 1950, 400}),
			Words{}, 1, "p99 400µs is 2.0× the p99 of 1 worker (200µs)"},
		{"both tests fail", sweep([3]float64{2, 1000, 200}, [3]float64{4, 1050, 500}),
			Words{}, 1, "p99 500µs is 2.5× the p99 of 2 workers (200µs); 4 workers gave only 5 % more ops/s than 2"},
		{"retrograde", sweep([3]float64{1, 1000, 200}, [3]float64{2, 1950, 210}, [3]float64{4, 1800, 300}),
			Words{}, 2, "4 workers gave 8 % less ops/s than 2"},
		// Steps 1,2,3,4: 3→4 gains 5.5 % for 1.33× the load; 10 % per
		// doubling asks for 4.0 %, so this still scales (the default
		// rule, blind to the smaller load step, would call it a knee).
		{"fine sweep still scaling", sweep([3]float64{1, 1000, 200}, [3]float64{2, 1900, 210}, [3]float64{3, 2750, 220}, [3]float64{4, 2900, 240}),
			Words{}, -1, ""},
		{"fine sweep saturating", sweep([3]float64{1, 1000, 200}, [3]float64{2, 1900, 210}, [3]float64{3, 2750, 220}, [3]float64{4, 2780, 240}),
			Words{}, 3, "4 workers gave only 1 % more ops/s than 3 (1.3× the load: at least 4 % more expected, 10 % per doubling)"},
		// ×4 steps: 21 % per ×4 is 10 % per doubling.
		{"quadrupling sweep", sweep([3]float64{1, 1000, 200}, [3]float64{4, 3500, 210}, [3]float64{16, 4200, 250}),
			Words{}, 2, "16 workers gave only 20 % more ops/s than 4 (4.0× the load: at least 21 % more expected, 10 % per doubling)"},
		// The 1-worker step ran too few operations: the 2-worker step is
		// the reference, and its p99 is what later steps are held to.
		{"too few operations", append([]Stats{{Concurrency: 1, Seconds: 1, Ops: 99, IOPS: 99, Latency: Latency{P99US: 50}}},
			sweep([3]float64{2, 1950, 210}, [3]float64{4, 3800, 400})...),
			Words{}, -1, ""},
		{"repeated concurrency judged by p99 only", sweep([3]float64{4, 3800, 200}, [3]float64{4, 3000, 300}, [3]float64{4, 3000, 460}),
			Words{}, 2, "p99 460µs is 2.3× the p99 of 4 workers (200µs)"},
		{"open loop keeps up", rates([3]float64{1000, 1000, 300}, [3]float64{2000, 1995, 320}, [3]float64{4000, 3990, 500}),
			Words{}, -1, ""},
		{"open loop falls short", rates([3]float64{1000, 1000, 300}, [3]float64{2000, 1995, 320}, [3]float64{4000, 3500, 500}),
			storage, 2, "at 4000/s intended only 3500 IOPS were achieved (12 % short)"},
		{"open loop short from the start", rates([3]float64{5000, 4000, 900}, [3]float64{6000, 4100, 900}),
			Words{}, 0, "at 5000/s intended only 4000 ops/s were achieved (20 % short)"},
		{"open loop p99 doubles", rates([3]float64{1000, 1000, 300}, [3]float64{2000, 1995, 650}),
			Words{}, 1, "p99 650µs is 2.2× the p99 at 1000/s (300µs)"},
		{"open steps after closed ones are ignored", append(sweep([3]float64{1, 1000, 200}, [3]float64{2, 1950, 210}), rates([3]float64{4000, 100, 9000})...),
			Words{}, -1, ""},
		{"no steps", nil, Words{}, -1, ""},
	}
	for _, c := range cases {
		k := c.words.FindKnee(c.steps)
		switch {
		case c.index < 0 && k != nil:
			t.Errorf("%s: knee %+v, want none", c.name, *k)
		case c.index >= 0 && k == nil:
			t.Errorf("%s: no knee, want step %d", c.name, c.index)
		case c.index >= 0:
			s := c.steps[c.index]
			want := Knee{Index: c.index, Concurrency: s.Concurrency, Rate: s.Rate, IOPS: s.IOPS, P99US: s.P99US, Reason: c.reason}
			if *k != want {
				t.Errorf("%s:\n got %+v\nwant %+v", c.name, *k, want)
			}
		}
	}
}

// The default rule's results on doubling sweeps: IOPS gains just under and
// at 10 %, p99 just under and at 2×.
func TestFindKneeKeepsDefaultRuleOnDoublingSweeps(t *testing.T) {
	for _, c := range []struct {
		iops, p99 float64
		knee      bool
	}{{1099.99, 100, true}, {1100, 100, false}, {1100, 199.99, false}, {1100, 200, true}} {
		k := FindKnee(sweep([3]float64{4, 1000, 100}, [3]float64{8, c.iops, c.p99}))
		if (k != nil) != c.knee {
			t.Errorf("4→8 readers, 1000→%g IOPS, p99 100→%g µs: knee %v, want %v", c.iops, c.p99, k, c.knee)
		}
	}
}

func TestKneeJSON(t *testing.T) {
	k := FindKnee(sweep([3]float64{1, 1000, 200}, [3]float64{2, 1000, 210}))
	data, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"concurrency":2,"iops":1000,"p99_us":210,"reason":"2 workers gave only 0 % more ops/s than 1"}`
	if string(data) != want {
		t.Errorf("JSON %s, want %s", data, want)
	}
	if data, _ := json.Marshal(FindKnee(nil)); string(data) != "null" {
		t.Errorf("no knee encodes as %s, want null", data)
	}
}
