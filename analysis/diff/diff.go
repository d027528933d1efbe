// Package diff compares the latency of two sides, two sources or two
// windows of one (`latscope diff`): per series, the change of count, rate
// and time waited, percentile shifts with confidence intervals, and a
// two-sample test on the buckets both sides share, corrected for the
// extra-multinomial variation real windows have and for multiple tests.
package diff

import (
	"math"
	"sort"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Quantiles are the percentiles every series' shift is reported at.
var Quantiles = []float64{0.5, 0.9, 0.99, 0.999}

// Multiple-test corrections.
const (
	CorrectHolm       = "holm"
	CorrectBonferroni = "bonferroni"
	CorrectNone       = "none"
)

// Options set the statistics.
type Options struct {
	// Level of the percentiles' confidence intervals (0.95).
	Level float64
	// Alpha is the significance level of the test, after Correction.
	Alpha float64
	// Correction for testing many series: holm, bonferroni or none.
	Correction string
	// Columns of the difference heat map over aligned time (0: 48).
	Columns int
}

// DefaultOptions: 95 % intervals, α = 1 % with Holm's correction.
func DefaultOptions() Options {
	return Options{Level: 0.95, Alpha: 0.01, Correction: CorrectHolm}
}

// SeriesKey matches series between the sides: event and instance (the
// source file is not part of it: the sides are different files).
type SeriesKey struct{ Event, Instance string }

// String returns "event" or "event @instance".
func (k SeriesKey) String() string {
	return stream.Key{Event: k.Event, Instance: k.Instance}.String()
}

// Side gathers the intervals of one side of the comparison.
type Side struct {
	Name string
	// EventOnly matches series by event alone, summing its instances
	// (two traces of different databases); set it before Add.
	EventOnly bool
	spans     [][2]time.Time
	relative  bool
	windows   int
	series    map[SeriesKey]*sideSeries
	seen      *observation // observed's answer until the next Add
}

// observation is when and how long a side was observed.
type observation struct {
	first, last time.Time
	seconds     float64
}

type sideSeries struct {
	total   *hist.Histogram
	windows []window
}

// window is one interval's histogram of a series.
type window struct {
	start, end time.Time
	h          *hist.Histogram
}

// NewSide returns an empty side called name.
func NewSide(name string) *Side {
	return &Side{Name: name, series: map[SeriesKey]*sideSeries{}}
}

// Add takes one interval: gaps are not observed time and hold nothing.
func (s *Side) Add(iv stream.Interval) {
	if iv.Gap {
		return
	}
	s.spans = append(s.spans, [2]time.Time{iv.Start, iv.End()})
	s.seen = nil
	s.relative = s.relative || iv.Relative
	s.windows++
	for _, sh := range iv.Series {
		if sh.Hist == nil || sh.Hist.Count() == 0 {
			continue
		}
		k := SeriesKey{sh.Key.Event, sh.Key.Instance}
		if s.EventOnly {
			k.Instance = ""
		}
		ss := s.series[k]
		if ss == nil {
			ss = &sideSeries{total: &hist.Histogram{}}
			s.series[k] = ss
		}
		ss.total.Merge(sh.Hist)
		if n := len(ss.windows); n > 0 && ss.windows[n-1].start.Equal(iv.Start) && ss.windows[n-1].end.Equal(iv.End()) {
			// Another instance of the event in the same window.
			merged := ss.windows[n-1].h.Clone()
			merged.Merge(sh.Hist)
			ss.windows[n-1].h = merged
			continue
		}
		ss.windows = append(ss.windows, window{iv.Start, iv.End(), sh.Hist})
	}
}

// Windows returns the number of observed windows the side holds.
func (s *Side) Windows() int { return s.windows }

// observed returns the side's first start, last end and the time its
// windows cover (overlapping windows of several sources counted once).
func (s *Side) observed() observation {
	if s.seen == nil {
		s.seen = observe(s.spans)
	}
	return *s.seen
}

func observe(spans [][2]time.Time) *observation {
	o := &observation{}
	if len(spans) == 0 {
		return o
	}
	spans = append([][2]time.Time(nil), spans...)
	sort.Slice(spans, func(i, j int) bool { return spans[i][0].Before(spans[j][0]) })
	o.first, o.last = spans[0][0], spans[0][1]
	cur := spans[0]
	var total time.Duration
	for _, sp := range spans[1:] {
		if sp[0].After(cur[1]) {
			total += cur[1].Sub(cur[0])
			cur = sp
		} else if sp[1].After(cur[1]) {
			cur[1] = sp[1]
		}
		if sp[1].After(o.last) {
			o.last = sp[1]
		}
	}
	o.seconds = (total + cur[1].Sub(cur[0])).Seconds()
	return o
}

// Result is the comparison of two sides.
type Result struct {
	A          SideSummary `json:"a"`
	B          SideSummary `json:"b"`
	Level      float64     `json:"level"`
	Alpha      float64     `json:"alpha"`
	Correction string      `json:"correction"`
	// Tests is how many series were tested (the correction's m).
	Tests  int      `json:"tests"`
	Method string   `json:"method"`
	Series []Series `json:"series"`
}

// SideSummary describes one side.
type SideSummary struct {
	Name     string     `json:"name"`
	Start    *time.Time `json:"start,omitempty"`
	End      *time.Time `json:"end,omitempty"`
	Relative bool       `json:"relative_time,omitempty"`
	Seconds  float64    `json:"seconds"`
	Windows  int        `json:"windows"`
	Series   int        `json:"series"`
}

// Where a series was found.
const (
	InBoth  = "both"
	OnlyInA = "only A"
	OnlyInB = "only B"
)

// Series is one series' comparison.
type Series struct {
	Event    string `json:"event"`
	Instance string `json:"instance,omitempty"`
	In       string `json:"in"`
	CountA   Num    `json:"count_a"`
	CountB   Num    `json:"count_b"`
	// Rates are events per second of each side's observed time.
	RateA      Num     `json:"rate_a_per_s"`
	RateB      Num     `json:"rate_b_per_s"`
	RateRatio  Num     `json:"rate_ratio"`
	TimeA      Num     `json:"time_waited_a_s"`
	TimeB      Num     `json:"time_waited_b_s"`
	TimeRatio  Num     `json:"time_waited_ratio"`
	TimeExact  bool    `json:"time_exact"`
	Percentile []Shift `json:"percentiles"`
	// Factor is the latency factor B/A the percentiles agree on: the
	// geometric mean of the p50, p90 and p99 ratios.
	Factor      Num       `json:"factor"`
	Grid        string    `json:"grid,omitempty"`
	GridExact   bool      `json:"grid_exact"`
	Test        *Test     `json:"test,omitempty"`
	Significant bool      `json:"significant"`
	Cells       []Cell    `json:"cells,omitempty"`
	Timeline    *Timeline `json:"-"`
}

// Shift is one percentile on both sides, in µs, with its confidence
// interval, and their ratio B/A with the interval the two give.
type Shift struct {
	Q       float64 `json:"q"`
	A       Num     `json:"a_us"`
	ALow    Num     `json:"a_low_us"`
	AHigh   Num     `json:"a_high_us"`
	B       Num     `json:"b_us"`
	BLow    Num     `json:"b_low_us"`
	BHigh   Num     `json:"b_high_us"`
	Ratio   Num     `json:"ratio"`
	RatioLo Num     `json:"ratio_low"`
	RatioHi Num     `json:"ratio_high"`
}

// Test is the two-sample test of one series.
type Test struct {
	// ChiSquare is Pearson's statistic of the 2 × Cells table.
	ChiSquare Num `json:"chi_square"`
	DF        int `json:"df"`
	Cells     int `json:"cells"`
	// Dispersion is the variance the windows of each side show beyond
	// the multinomial's (their own homogeneity χ² per degree of freedom,
	// at least 1), estimated on DispersionDF degrees of freedom (0: no
	// windows to estimate it from, taken as 1).
	Dispersion   Num `json:"dispersion"`
	DispersionDF int `json:"dispersion_df"`
	// F is ChiSquare / DF / Dispersion, the quasi-likelihood statistic.
	F         Num `json:"f"`
	P         Num `json:"p"`
	PAdjusted Num `json:"p_adjusted"`
}

// Cell is one bucket of the common grid: edges in µs, counts and shares.
type Cell struct {
	Index   int `json:"-"` // in the grid
	LowerUS Num `json:"lower_us"`
	UpperUS Num `json:"upper_us"`
	A       Num `json:"a"`
	B       Num `json:"b"`
	ShareA  Num `json:"share_a"`
	ShareB  Num `json:"share_b"`
}

// Timeline is the difference heat map over aligned relative time: per
// column (time since each side's start) and cell, B's rate − A's rate.
type Timeline struct {
	ColumnSeconds float64
	// Diff[c][i]: events/s; NaN where a side observed nothing.
	Diff [][]float64
}

// Method names the test for the outputs.
const Method = "chi-square homogeneity on the common buckets (adjacent cells merged until every expected count is ≥ 5, and to at most 16 cells of about equal counts when there are more), " +
	"divided by the dispersion of each side's windows (quasi-likelihood F test: real windows vary more than independent events would); " +
	"percentile intervals: order statistics at the binomial ranks, with n divided by the side's dispersion"

// Compare compares every series of a and b.
func Compare(a, b *Side, o Options) *Result {
	if o.Level <= 0 || o.Level >= 1 {
		o.Level = 0.95
	}
	if o.Columns <= 0 {
		o.Columns = 48
	}
	r := &Result{A: summary(a), B: summary(b), Level: o.Level, Alpha: o.Alpha, Correction: o.Correction, Method: Method}
	for _, k := range unionKeys(a, b) {
		r.Series = append(r.Series, compareSeries(k, a, b, o))
	}
	r.adjust()
	return r
}

func summary(s *Side) SideSummary {
	obs := s.observed()
	first, last := obs.first, obs.last
	out := SideSummary{Name: s.Name, Seconds: obs.seconds, Windows: s.windows, Series: len(s.series), Relative: s.relative}
	if !first.IsZero() {
		out.Start, out.End = &first, &last
	}
	return out
}

// unionKeys lists every series of either side, by event then instance.
func unionKeys(a, b *Side) []SeriesKey {
	seen := map[SeriesKey]bool{}
	var keys []SeriesKey
	for _, s := range []*Side{a, b} {
		for k := range s.series {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Event != keys[j].Event {
			return keys[i].Event < keys[j].Event
		}
		return keys[i].Instance < keys[j].Instance
	})
	return keys
}

func compareSeries(k SeriesKey, a, b *Side, o Options) Series {
	sa, sb := a.series[k], b.series[k]
	s := Series{Event: k.Event, Instance: k.Instance, In: InBoth}
	switch {
	case sb == nil:
		s.In = OnlyInA
	case sa == nil:
		s.In = OnlyInB
	}
	secA, secB := a.observed().seconds, b.observed().seconds
	ha, hb := totalOf(sa), totalOf(sb)
	s.CountA, s.CountB = Num(count(ha)), Num(count(hb))
	s.RateA, s.RateB = Num(rate(count(ha), secA)), Num(rate(count(hb), secB))
	s.RateRatio = Num(ratio(float64(s.RateA), float64(s.RateB)))
	s.TimeA, s.TimeB = Num(waited(ha)), Num(waited(hb))
	s.TimeRatio = Num(ratio(float64(s.TimeA), float64(s.TimeB)))
	s.TimeExact = (ha == nil || ha.SumExact) && (hb == nil || hb.SumExact)
	if s.In != InBoth {
		// Nothing to compare; the side's own windows still say how far
		// its percentiles can be trusted.
		s.Factor = Num(math.NaN())
		s.Percentile = shifts(ha, hb, ownDispersion(sa), ownDispersion(sb), o.Level)
		return s
	}
	g := commonGrid(ha, hb)
	s.Grid, s.GridExact = g.Description, g.Exact
	// Percentiles too are read on the common grid: the same data in a
	// finer layout would otherwise interpolate differently and show a
	// shift that is only the buckets' (7 % between fio's bins and
	// powers of two in ms).
	ga, gb := g.On(ha), g.On(hb)
	ca, cb := cellsOfGridded(ga), cellsOfGridded(gb)
	s.Cells = cellsOf(g, ca, cb)
	wa, wb := windowCells(g, sa), windowCells(g, sb)
	t, phiA, phiB := homogeneity(ca, cb, wa, wb)
	s.Test = t
	s.Percentile = shifts(ga, gb, phiA, phiB, o.Level)
	s.Factor = Num(factor(s.Percentile))
	s.Timeline = timeline(len(ca), sa, sb, wa, wb, a, b, o.Columns)
	return s
}

// ownDispersion is the dispersion of a series' windows on its own buckets
// (1 for a series absent or in one window).
func ownDispersion(ss *sideSeries) float64 {
	if ss == nil {
		return 1
	}
	g := commonGrid(ss.total, ss.total)
	c := g.Cells(ss.total)
	x, df := within(windowCells(g, ss), mergeCells(c, c))
	return dispersion(x, df)
}

// windowCells returns each window of a series on the grid.
func windowCells(g Grid, ss *sideSeries) [][]float64 {
	if ss == nil {
		return nil
	}
	out := make([][]float64, len(ss.windows))
	for i, w := range ss.windows {
		out[i] = g.Cells(w.h)
	}
	return out
}

func totalOf(ss *sideSeries) *hist.Histogram {
	if ss == nil {
		return nil
	}
	return ss.total
}

func count(h *hist.Histogram) float64 {
	if h == nil {
		return 0
	}
	return h.Count()
}

func rate(n, seconds float64) float64 {
	if seconds <= 0 {
		return math.NaN()
	}
	return n / seconds
}

// waited returns the time waited in seconds.
func waited(h *hist.Histogram) float64 {
	if h == nil {
		return 0
	}
	return h.Unit.Nanos(h.Sum) / 1e9
}

// ratio returns b/a, NaN when a is 0.
func ratio(a, b float64) float64 {
	if a == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return b / a
}

// cellsOf lists the grid's non-empty cells with counts and shares.
func cellsOf(g Grid, ca, cb []float64) []Cell {
	na, nb := sum(ca), sum(cb)
	var out []Cell
	for i := range ca {
		if ca[i] == 0 && cb[i] == 0 {
			continue
		}
		lo, hi := g.CellEdges(i)
		out = append(out, Cell{Index: i, LowerUS: Num(lo / 1e3), UpperUS: Num(hi / 1e3), A: Num(ca[i]), B: Num(cb[i]),
			ShareA: Num(ratio(na, ca[i])), ShareB: Num(ratio(nb, cb[i]))})
	}
	return out
}

func sum(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t
}

// adjust corrects the p-values for the number of series tested and marks
// the significant ones.
func (r *Result) adjust() {
	p := make([]float64, len(r.Series))
	for i, s := range r.Series {
		p[i] = math.NaN()
		if s.Test != nil {
			p[i] = float64(s.Test.P)
			if !math.IsNaN(p[i]) {
				r.Tests++
			}
		}
	}
	var adj []float64
	switch r.Correction {
	case CorrectBonferroni:
		adj = bonferroni(p)
	case CorrectNone:
		adj = p
	default:
		adj = holm(p)
	}
	for i := range r.Series {
		if t := r.Series[i].Test; t != nil {
			t.PAdjusted = Num(adj[i])
			r.Series[i].Significant = !math.IsNaN(adj[i]) && adj[i] < r.Alpha
		}
	}
}
