package benchkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

type figs struct{ A, B float64 }

func (f *figs) Figures() []*float64 { return []*float64{&f.A, &f.B} }

func TestMedians(t *testing.T) {
	type run struct {
		tool string
		a, b float64
	}
	runs := []run{{"x", 3, 10}, {"y", 100, 100}, {"x", 1, 30}, {"x", 2, 20}}
	xs := Select(runs, func(r run) bool { return r.tool == "x" })
	// Each figure's own median: not the figures of a median run.
	got := Medians(xs, func(r run) figs { return figs{A: r.a, B: r.b} })
	if got != (figs{A: 2, B: 20}) || len(xs) != 3 {
		t.Errorf("medians %+v of %v", got, xs)
	}
	if got := Medians([]run(nil), func(r run) figs { return figs{A: r.a} }); got != (figs{}) {
		t.Errorf("no runs: %+v", got)
	}
}

func TestRunOrder(t *testing.T) {
	tools := []string{"a", "b", "c"}
	if got := RunOrder(tools, 0); !slices.Equal(got, tools) {
		t.Errorf("run 0: %v", got)
	}
	if got := RunOrder(tools, 3); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Errorf("run 3: %v", got)
	}
	if !slices.Equal(tools, []string{"a", "b", "c"}) {
		t.Errorf("RunOrder reordered its input: %v", tools)
	}
}

func TestVerdict(t *testing.T) {
	above := func(r float64) bool { return r >= 1 }
	info := map[string]float64{"p90": 1.2, "max": math.NaN()}
	v := NewVerdict(true, info, NewCheck("p50", "≥ 1", 1.5, above), NewCheck("p99", "≥ 1", math.NaN(), func(float64) bool { return true }))
	if v.Pass || v.Passed() || v.Checks[0].Pass != true || v.Checks[1].Pass || v.Checks[1].Ratio != 0 || v.Info["max"] != 0 {
		t.Errorf("%+v", v)
	}
	if _, err := json.Marshal(v); err != nil {
		t.Errorf("JSON: %v", err)
	}
	if c := v.Check("p99"); c == nil || c.Name != "p99" || v.Check("p90") != nil {
		t.Errorf("Check: %v", c)
	}
	if got := v.Failures("64 B"); !slices.Equal(got, []string{"p99 at 64 B (0.000, want ≥ 1)"}) {
		t.Errorf("failures %q", got)
	}
	ok := NewVerdict(true, nil, NewCheck("p50", "≥ 1", 1, above))
	if !ok.Pass || NewVerdict(false, nil, NewCheck("p50", "≥ 1", 1, above)).Pass {
		t.Error("a verdict passes when the tools ran and its checks passed")
	}
	if !AllPass([]Verdict{ok}) || AllPass([]Verdict{ok, v}) || AllPass([]Verdict(nil)) {
		t.Error("AllPass")
	}
}

func TestTable(t *testing.T) {
	var b strings.Builder
	check := NewCheck("p50", "0.90–1.10", 1.2, func(r float64) bool { return Within(r, 0.1) })
	tab := Table{W: &b, LabelWidth: 20, FigureWidth: 8}
	tab.Heading("size 64", "peer", "latscope")
	tab.Row("p50 µs", "%.1f", &check, 50, 60)
	tab.Row("max µs", "%.0f", nil, 0, 70)
	tab.End(false, "3 peer, 3 latscope")
	if err := tab.Overall(check.failures(), "fine"); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"size 64                  peer latscope   ratio  required   verdict\n" +
		"  p50 µs                 50.0     60.0   1.200  0.90–1.10  FAIL\n" +
		"  max µs                    0       70     NaN             \n" +
		"  verdict            FAIL (3 peer, 3 latscope runs)\n\n" +
		"overall: FAIL — p50 at 64 B (1.200, want 0.90–1.10)\n"
	if b.String() != want {
		t.Errorf("table\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	tab.Blank = true
	tab.Row("max µs", "%.0f", nil, 0, 70, math.NaN())
	if err := tab.Overall(nil, "fine"); err != nil {
		t.Fatal(err)
	}
	if want := "  max µs                    -       70        -       -             \noverall: PASS — fine\n"; b.String() != want {
		t.Errorf("blank figures\n%q\nwant\n%q", b.String(), want)
	}
}

func (c Check) failures() []string { return Verdict{Checks: []Check{c}}.Failures("64 B") }

func TestSweep(t *testing.T) {
	var got []string
	steps, err := Sweep(t.Context(), []int{1, 4}, 2, []string{"a", "b"}, func(s Step[int]) (Step[int], error) {
		got = append(got, fmt.Sprintf("%s@%d run %d", s.Tool, s.Key, s.Run))
		return s, nil
	})
	want := []string{"a@1 run 1", "b@1 run 1", "b@1 run 2", "a@1 run 2", "a@4 run 1", "b@4 run 1", "b@4 run 2", "a@4 run 2"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("%q, %v", got, err)
	}
	if last := steps[len(steps)-1]; last.Seq != 8 || last.Total != 8 || steps[0].Seq != 1 {
		t.Errorf("sequence %+v", steps)
	}
	steps, err = Sweep(t.Context(), []int{1}, 3, []string{"a"}, func(s Step[int]) (Step[int], error) {
		if s.Run == 2 {
			return s, errors.New("boom")
		}
		return s, nil
	})
	if len(steps) != 1 || err == nil {
		t.Errorf("stops at the first error: %v, %v", steps, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if steps, err := Sweep(ctx, []int{1}, 1, []string{"a"}, func(s Step[int]) (Step[int], error) { return s, nil }); len(steps) != 0 || err == nil {
		t.Errorf("cancelled: %v, %v", steps, err)
	}
}

func TestJudge(t *testing.T) {
	runs := []float64{1, 2, 3}
	compare := func(k float64, rs []float64) Verdict { return Verdict{Pass: slices.Contains(rs, k)} }
	if cs, pass := Judge([]float64{1, 3}, runs, compare); len(cs) != 2 || !pass {
		t.Errorf("%v %v", cs, pass)
	}
	if _, pass := Judge([]float64{1, 5}, runs, compare); pass {
		t.Error("a failed comparison passed")
	}
	if _, pass := Judge(nil, runs, compare); pass {
		t.Error("no comparison passed")
	}
}
