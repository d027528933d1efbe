package stream

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/latscope/latscope/hist"
)

// Grid resamples intervals onto columns of equal wall-clock width, the
// columns of a heat map. An interval's events are shared among the columns it
// overlaps in proportion to the overlap, and a column's rate is the events
// attributed to it divided by the time its sources observed, so intervals of
// any length and jitter give steady columns, and windows no source observed
// stay visible as gaps.
type Grid struct {
	// Width is the column width; when zero the first interval's duration,
	// rounded (RoundWidth), is used.
	Width time.Duration
	// RowScale asks for 2^RowScale latency rows per power of two (0: one row
	// per octave). Series whose histograms cannot be split that finely
	// (hist.Histogram.CanSplitRows) keep one row per octave; set it before
	// the first Add.
	RowScale int
	// Origin, when set, is where column 0 starts: a window the caller
	// chose (a server's "from"). Zero: column 0 starts at the first
	// interval. Set it before the first Add.
	Origin time.Time

	origin    time.Time
	relative  bool
	started   bool
	sources   map[string]int
	coverage  map[int][]observed // column → time observed, per source
	series    map[Key]*GridSeries
	minCol    int
	maxCol    int
	skipped   int
	intervals int
	// samples counts the observed (non-gap) intervals per source.
	samples []int
}

// NewGrid returns a grid with the given column width (0: infer it).
func NewGrid(width time.Duration) *Grid {
	return &Grid{Width: width, sources: map[string]int{}, coverage: map[int][]observed{}, series: map[Key]*GridSeries{}}
}

// InferWidth returns the median duration of the non-gap intervals rounded to
// the nearest round width (3.021 s → 3 s), the column width that puts about
// one source interval in each column with readable column times.
func InferWidth(ivs []Interval) time.Duration {
	var ds []time.Duration
	for _, iv := range ivs {
		if !iv.Gap && iv.Duration > 0 {
			ds = append(ds, iv.Duration)
		}
	}
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return RoundWidth(ds[len(ds)/2])
}

// roundWidths are the column widths people choose.
var roundWidths = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 20 * time.Second,
	30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// RoundWidth returns the round width nearest to d in ratio, or d itself when
// no round width is within 2 % (an unusual but deliberate interval).
func RoundWidth(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	best, bestRatio := d, math.Inf(1)
	for _, w := range roundWidths {
		r := math.Abs(math.Log(float64(d) / float64(w)))
		if r < bestRatio {
			best, bestRatio = w, r
		}
	}
	if bestRatio > math.Log(1.02) {
		return d
	}
	return best
}

// GridSeries is one series on the grid.
type GridSeries struct {
	Key  Key
	Unit hist.Unit
	Idle bool
	// Total sums every interval; Latest is the most recent interval's
	// histogram (by end time), LatestDuration its length.
	Total          *hist.Histogram
	Latest         *hist.Histogram
	LatestEnd      time.Time
	LatestDuration time.Duration

	sources []int
	cells   map[int][]cellPart
	minRow  int
	maxRow  int
	hasRows bool
	// rowScale is the series' rows per power of two, log2: the grid's
	// RowScale until a histogram that cannot be split arrives.
	rowScale int
}

// cellPart is what one source contributed to one column of a series: rows
// of the series' row scale s (row r covers [2^(r/2^s), 2^((r+1)/2^s))
// units; the zero row is stored at r = ZeroPow·2^s − 1) with events and
// latency in units.
type cellPart struct {
	src    int
	first  int
	counts []float64
	times  []float64
}

// Add places an interval on the grid. Intervals whose clock kind (wall or
// relative) differs from the first interval's are skipped and counted.
func (g *Grid) Add(iv Interval) {
	if iv.Duration <= 0 {
		g.skipped++
		return
	}
	if !g.started {
		g.started = true
		g.origin, g.relative = iv.Start, iv.Relative
		if !g.Origin.IsZero() {
			g.origin = g.Origin
		}
		if g.Width <= 0 {
			g.Width = RoundWidth(iv.Duration)
		}
		g.minCol, g.maxCol = 0, 0
	} else if iv.Relative != g.relative {
		g.skipped++
		return
	}
	g.intervals++
	src, ok := g.sources[iv.Source]
	if !ok {
		src = len(g.sources)
		g.sources[iv.Source] = src
	}
	for _, s := range iv.Series {
		g.seriesFor(s.Key, s.Hist.Unit, src).record(iv, s.Hist)
	}
	if iv.Gap {
		return
	}
	for len(g.samples) <= src {
		g.samples = append(g.samples, 0)
	}
	g.samples[src]++
	for _, s := range g.series {
		if !slices.Contains(s.sources, src) {
			continue
		}
		s.extendTime(iv)
	}
	g.spread(iv, func(c int, from, to time.Duration, frac float64) {
		cov := g.coverage[c]
		for len(cov) <= src {
			cov = append(cov, observed{})
		}
		cov[src].add(from, to)
		g.coverage[c] = cov
		g.minCol, g.maxCol = min(g.minCol, c), max(g.maxCol, c)
		for _, s := range iv.Series {
			g.series[s.Key].addToCell(c, src, s.Hist, frac)
		}
	})
}

// spread calls f for each column iv overlaps, with the overlap as offsets
// [from, to) within the column and as the fraction of iv it holds.
func (g *Grid) spread(iv Interval, f func(c int, from, to time.Duration, frac float64)) {
	start := iv.Start.Sub(g.origin)
	end := start + iv.Duration
	first := floorDiv(start, g.Width)
	last := floorDiv(end-1, g.Width)
	for c := first; c <= last; c++ {
		cs := time.Duration(c) * g.Width
		overlap := min(end, cs+g.Width) - max(start, cs)
		if overlap <= 0 {
			continue
		}
		f(c, max(start, cs)-cs, min(end, cs+g.Width)-cs, float64(overlap)/float64(iv.Duration))
	}
}

// Shares calls f for each column an interval already added overlaps, with
// the fraction of its events the grid gave that column: what a caller
// needs to put the interval's other data (a merged histogram, a mean
// series) on the same columns.
func (g *Grid) Shares(iv Interval, f func(c int, frac float64)) {
	if !g.started || iv.Duration <= 0 {
		return
	}
	g.spread(iv, func(c int, _, _ time.Duration, frac float64) { f(c, frac) })
}

func floorDiv(a, b time.Duration) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return int(q)
}

func (g *Grid) seriesFor(k Key, unit hist.Unit, src int) *GridSeries {
	s := g.series[k]
	if s == nil {
		s = &GridSeries{Key: k, Unit: unit, Idle: IsIdleEvent(k.Event), Total: &hist.Histogram{Unit: unit}, cells: map[int][]cellPart{}, rowScale: g.RowScale}
		g.series[k] = s
	}
	if !slices.Contains(s.sources, src) {
		s.sources = append(s.sources, src)
	}
	return s
}

// record updates totals and the latest histogram.
func (s *GridSeries) record(iv Interval, h *hist.Histogram) {
	if iv.Gap {
		return
	}
	s.Total.Merge(h)
	s.extendTime(iv)
	if iv.End().Equal(s.LatestEnd) && s.Latest != nil {
		s.Latest.Merge(h)
	} else if iv.End().After(s.LatestEnd) || s.Latest == nil {
		s.Latest = h.Clone()
	}
}

// extendTime moves the latest window forward when a source observed a
// newer window, so that a quiet latest interval shows as zero.
func (s *GridSeries) extendTime(iv Interval) {
	if iv.End().After(s.LatestEnd) {
		s.LatestEnd = iv.End()
		s.LatestDuration = iv.Duration
		s.Latest = &hist.Histogram{Unit: s.Unit}
	}
}

func (s *GridSeries) addToCell(c, src int, h *hist.Histogram, frac float64) {
	if h.Unit != s.Unit {
		h = hist.Rebin(h, s.Unit, 0)
	}
	if !h.CanSplitRows(s.rowScale) {
		s.coarsen()
	}
	rows := h.RowsAt(s.rowScale)
	parts := s.cells[c]
	idx := slices.IndexFunc(parts, func(p cellPart) bool { return p.src == src })
	if idx < 0 {
		parts = append(parts, cellPart{src: src})
		idx = len(parts) - 1
	}
	p := &parts[idx]
	if rows.ZeroCount > 0 {
		zeroRow := rows.ZeroPow<<rows.Scale - 1
		p.add(zeroRow, rows.ZeroCount*frac, rows.ZeroTime*frac)
		s.noteRow(zeroRow)
	}
	for j, n := range rows.Counts {
		if n > 0 {
			p.add(rows.First+j, n*frac, rows.Times[j]*frac)
			s.noteRow(rows.First + j)
		}
	}
	s.cells[c] = parts
}

// coarsen folds the series' finer rows into one row per octave, for a
// histogram whose buckets span whole octaves. Row r of scale k lies in
// octave r>>k (an arithmetic shift floors negative rows too), and the zero
// row ZeroPow·2^k−1 lands on ZeroPow−1, the octave zero row.
func (s *GridSeries) coarsen() {
	shift := s.rowScale
	if shift == 0 {
		return
	}
	s.rowScale = 0
	s.minRow, s.maxRow = s.minRow>>shift, s.maxRow>>shift
	for c, parts := range s.cells {
		for i, p := range parts {
			folded := cellPart{src: p.src}
			for j := range p.counts {
				folded.add((p.first+j)>>shift, p.counts[j], p.times[j])
			}
			parts[i] = folded
		}
		s.cells[c] = parts
	}
}

// RowScale returns the series' rows per power of two, log2: the grid's
// RowScale, or 0 when some of its histograms could not be split.
func (s *GridSeries) RowScale() int { return s.rowScale }

func (s *GridSeries) noteRow(r int) {
	if !s.hasRows {
		s.minRow, s.maxRow, s.hasRows = r, r, true
		return
	}
	s.minRow, s.maxRow = min(s.minRow, r), max(s.maxRow, r)
}

func (p *cellPart) add(row int, n, t float64) {
	if len(p.counts) == 0 {
		p.first = row
	}
	if row < p.first {
		grow := p.first - row
		p.counts = append(make([]float64, grow), p.counts...)
		p.times = append(make([]float64, grow), p.times...)
		p.first = row
	}
	for row-p.first >= len(p.counts) {
		p.counts = append(p.counts, 0)
		p.times = append(p.times, 0)
	}
	p.counts[row-p.first] += n
	p.times[row-p.first] += t
}

// Columns returns the first and last column index holding data; ok is false
// for an empty grid.
func (g *Grid) Columns() (first, last int, ok bool) {
	return g.minCol, g.maxCol, g.intervals > 0
}

// ColumnStart returns the start time of column c.
func (g *Grid) ColumnStart(c int) time.Time {
	origin := g.origin
	if !g.started {
		origin = g.Origin
	}
	return origin.Add(time.Duration(c) * g.Width)
}

// Relative reports whether the grid's times are relative (no wall clock).
func (g *Grid) Relative() bool { return g.relative }

// Skipped returns the number of intervals the grid could not place.
func (g *Grid) Skipped() int { return g.skipped }

// Series returns the series ordered by time waited, idle events last.
func (g *Grid) Series() []*GridSeries {
	out := make([]*GridSeries, 0, len(g.series))
	for _, s := range g.series {
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Idle != b.Idle {
			return !a.Idle
		}
		ta, tb := a.Total.Unit.Nanos(a.Total.Sum), b.Total.Unit.Nanos(b.Total.Sum)
		if ta != tb {
			return ta > tb
		}
		return a.Key.String() < b.Key.String()
	})
	return out
}

// RowRange returns the lowest and highest row holding events at the series'
// row scale s (row r covers [2^(r/2^s), 2^((r+1)/2^s)) units; row
// ZeroPow·2^s−1 is the zero bucket).
func (s *GridSeries) RowRange() (lo, hi int, ok bool) {
	return s.minRow, s.maxRow, s.hasRows
}

// Rates fills freq (events/s) and inten (seconds waited per second) for rows
// lo..lo+len(freq)−1 of column c. Rows below lo fold into the first row and
// rows above into the last, as OraLatencyMap's edge rows do. covered is false
// when none of the series' sources observed the column (a gap).
func (g *Grid) Rates(s *GridSeries, c, lo int, freq, inten []float64) (covered bool) {
	clear(freq)
	clear(inten)
	n := len(freq)
	if n == 0 {
		return false
	}
	if g.Observed(s, c) <= 0 {
		return false
	}
	cov := g.coverage[c]
	unitSeconds := float64(s.Unit) / 1e9
	for _, p := range s.cells[c] {
		secs := cov[p.src].seconds()
		if secs <= 0 {
			continue
		}
		for j, cnt := range p.counts {
			r := min(max(p.first+j-lo, 0), n-1)
			freq[r] += cnt / secs
			inten[r] += p.times[j] * unitSeconds / secs
		}
	}
	return true
}

// Samples returns how many intervals the series' sources have reported (the
// "sample number" of OraLatencyMap's footer).
func (g *Grid) Samples(s *GridSeries) int {
	n := 0
	for _, src := range s.sources {
		if src < len(g.samples) {
			n += g.samples[src]
		}
	}
	return n
}

// Observed returns the seconds the series' sources observed in column c.
func (g *Grid) Observed(s *GridSeries, c int) float64 {
	cov := g.coverage[c]
	total := 0.0
	for _, src := range s.sources {
		if src < len(cov) {
			total = math.Max(total, cov[src].seconds())
		}
	}
	return total
}

// SourceObserved returns the seconds the named source observed in column
// c, whether or not any of its series had events there.
func (g *Grid) SourceObserved(source string, c int) float64 {
	src, ok := g.sources[source]
	if cov := g.coverage[c]; ok && src < len(cov) {
		return cov[src].seconds()
	}
	return 0
}

// observed is the part of a column one source observed: the union of the
// windows it reported there, so that a source reporting the same window
// twice (a trace concatenated with another session's) sums the events
// instead of averaging them.
type observed struct {
	spans [][2]time.Duration // disjoint, sorted offsets within the column
	total time.Duration
}

// add marks [from, to) of the column as observed.
func (o *observed) add(from, to time.Duration) {
	merged := [2]time.Duration{from, to}
	kept := o.spans[:0:0]
	for _, sp := range o.spans {
		if sp[1] < merged[0] || sp[0] > merged[1] {
			kept = append(kept, sp)
			continue
		}
		merged[0], merged[1] = min(merged[0], sp[0]), max(merged[1], sp[1])
	}
	kept = append(kept, merged)
	slices.SortFunc(kept, func(a, b [2]time.Duration) int { return cmp.Compare(a[0], b[0]) })
	o.spans, o.total = kept, 0
	for _, sp := range kept {
		o.total += sp[1] - sp[0]
	}
}

func (o observed) seconds() float64 { return o.total.Seconds() }
