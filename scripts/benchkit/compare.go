package benchkit

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Figures is a pointer to a struct of figures that lists their addresses,
// always in the same order.
type Figures[T any] interface {
	*T
	Figures() []*float64
}

// Medians returns the figures of runs (as figures takes them from a run)
// each the median of that figure over the runs, not the figures of a
// median run.
func Medians[R, T any, P Figures[T]](runs []R, figures func(R) T) T {
	all := make([][]*float64, len(runs))
	for i, r := range runs {
		f := figures(r)
		all[i] = P(&f).Figures()
	}
	var out T
	vs := make([]float64, len(runs))
	for k, dst := range P(&out).Figures() {
		for i := range all {
			vs[i] = *all[i][k]
		}
		*dst = Median(vs)
	}
	return out
}

// Select returns the items keep keeps, in order.
func Select[T any](items []T, keep func(T) bool) []T {
	var out []T
	for _, it := range items {
		if keep(it) {
			out = append(out, it)
		}
	}
	return out
}

// RunOrder returns the tools in the order of run i (from 0): as given on
// even runs, reversed on odd ones, so that a drift in the machine's load
// favours no tool.
func RunOrder(tools []string, i int) []string {
	order := slices.Clone(tools)
	if i%2 == 1 {
		slices.Reverse(order)
	}
	return order
}

// Step is one run of a sweep: a tool at a key (a concurrency, a message
// size, a thread count), its Run for that tool and key (from 1) and its
// place Seq among the Total runs (from 1).
type Step[K any] struct {
	Tool            string
	Key             K
	Run, Seq, Total int
}

// Sweep measures every tool runs times at each key, in the order RunOrder
// gives from run to run, and returns the results in the order measured.
// It stops at the first error or when ctx is cancelled.
func Sweep[K, R any](ctx context.Context, keys []K, runs int, tools []string, measure func(Step[K]) (R, error)) ([]R, error) {
	var out []R
	total := len(keys) * runs * len(tools)
	for _, k := range keys {
		for i := range runs {
			for _, tool := range RunOrder(tools, i) {
				if err := ctx.Err(); err != nil {
					return out, err
				}
				r, err := measure(Step[K]{Tool: tool, Key: k, Run: i + 1, Seq: len(out) + 1, Total: total})
				if err != nil {
					return out, err
				}
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// Judge compares the runs at each key and reports whether there are
// comparisons and all passed.
func Judge[K, R any, C interface{ Passed() bool }](keys []K, runs []R, compare func(K, []R) C) ([]C, bool) {
	cs := make([]C, len(keys))
	for i, k := range keys {
		cs[i] = compare(k, runs)
	}
	return cs, AllPass(cs)
}

// Check is one requirement, judged on a ratio latscope / peer tool.
type Check struct {
	Name  string  `json:"name"`
	Ratio float64 `json:"ratio"` // latscope / peer
	Want  string  `json:"want"`
	Pass  bool    `json:"pass"`
}

// NewCheck judges ratio with ok. An undefined ratio (NaN) fails, and is
// kept as 0 for the JSON.
func NewCheck(name, want string, ratio float64, ok func(float64) bool) Check {
	return Check{Name: name, Ratio: JSONRatio(ratio), Want: want, Pass: !math.IsNaN(ratio) && ok(ratio)}
}

// Verdict ends a comparison of latscope with peer tools: ratios reported
// for information, the requirements checked and whether all passed.
type Verdict struct {
	Info   map[string]float64 `json:"info_ratios"`
	Checks []Check            `json:"checks"`
	Pass   bool               `json:"pass"`
}

// NewVerdict passes when the tools compared ran and every check passed.
// Undefined info ratios are kept as 0 for the JSON.
func NewVerdict(ran bool, info map[string]float64, checks ...Check) Verdict {
	v := Verdict{Info: info, Checks: checks, Pass: ran}
	for k, r := range info {
		info[k] = JSONRatio(r)
	}
	for _, c := range checks {
		v.Pass = v.Pass && c.Pass
	}
	return v
}

// Passed says whether the comparison passed.
func (v Verdict) Passed() bool { return v.Pass }

// Check returns the check named name, nil when there is none.
func (v Verdict) Check(name string) *Check {
	for i := range v.Checks {
		if v.Checks[i].Name == name {
			return &v.Checks[i]
		}
	}
	return nil
}

// Failures describes the failed checks of a comparison at where ("p50 at
// 64 B (1.200, want 0.85–1.15)").
func (v Verdict) Failures(where string) []string {
	var out []string
	for _, c := range v.Checks {
		if !c.Pass {
			out = append(out, fmt.Sprintf("%s at %s (%.3f, want %s)", c.Name, where, c.Ratio, c.Want))
		}
	}
	return out
}

// AllPass reports whether there are comparisons and every one passed.
func AllPass[T interface{ Passed() bool }](cs []T) bool {
	for _, c := range cs {
		if !c.Passed() {
			return false
		}
	}
	return len(cs) > 0
}

// Table prints comparisons for people: under a heading naming the tools,
// a row a figure with a column a tool, the ratio of latscope's figure (the
// second column) to the reference's (the first), and on the rows a
// requirement judges, what it wants and the verdict.
type Table struct {
	W io.Writer
	// LabelWidth is the first column's width, FigureWidth each tool's.
	LabelWidth, FigureWidth int
	// Blank prints figures and ratios that are 0 or NaN as "-" (see
	// Figure), for tools that do not report every figure.
	Blank bool
}

// Figure formats a figure, "-" for one a tool does not report (0 or NaN).
func Figure(format string, v float64) string {
	if v == 0 || math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func (t Table) figure(format string, v float64) string {
	if t.Blank {
		return Figure(format, v)
	}
	return fmt.Sprintf(format, v)
}

// Heading starts a comparison.
func (t Table) Heading(title string, tools ...string) {
	fmt.Fprintf(t.W, "%-*s", t.LabelWidth, title)
	for _, tool := range tools {
		fmt.Fprintf(t.W, " %*s", t.FigureWidth, tool)
	}
	fmt.Fprintf(t.W, " %7s  %-10s %s\n", "ratio", "required", "verdict")
}

// Row prints one figure of every tool, formatted with format; check, when
// not nil, is the requirement on the row.
func (t Table) Row(label, format string, check *Check, figures ...float64) {
	want, verdict := "", ""
	if check != nil {
		want, verdict = check.Want, "ok"
		if !check.Pass {
			verdict = "FAIL"
		}
	}
	fmt.Fprintf(t.W, "  %-*s", t.LabelWidth-2, label)
	for _, v := range figures {
		fmt.Fprintf(t.W, " %*s", t.FigureWidth, t.figure(format, v))
	}
	fmt.Fprintf(t.W, " %7s  %-10s %s\n", t.figure("%.3f", Ratio(figures[1], figures[0])), want, verdict)
}

// End ends a comparison with its verdict and the runs of each tool ("3
// fio, 3 latscope").
func (t Table) End(pass bool, runs string) {
	fmt.Fprintf(t.W, "  %-*s %s (%s runs)\n\n", t.LabelWidth-2, "verdict", PassWord(pass), runs)
}

// Overall prints the overall verdict: PASS with passNote, or FAIL with
// what failed.
func (t Table) Overall(failed []string, passNote string) error {
	if len(failed) == 0 {
		_, err := fmt.Fprintf(t.W, "overall: PASS — %s\n", passNote)
		return err
	}
	_, err := fmt.Fprintf(t.W, "overall: FAIL — %s\n", strings.Join(failed, "; "))
	return err
}
