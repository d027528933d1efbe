package loadtest

import (
	"math"

	"github.com/latscope/latscope/hist"
)

// Mode is one peak of a latency distribution: a group of operations served
// the same way (a cache, the media, a retry).
type Mode struct {
	// CenterUS is the median of the mode's own operations, µs. For a
	// symmetric peak on the log axis (a lognormal cluster) it is also the
	// density peak.
	CenterUS float64 `json:"center_us"`
	// LowUS and HighUS bound the central 90 % of the mode's operations
	// (their 5th and 95th percentiles), µs.
	LowUS  float64 `json:"low_us"`
	HighUS float64 `json:"high_us"`
	// Fraction is the share of all operations assigned to the mode.
	Fraction float64 `json:"fraction"`
	// Label names what served the mode; FindModes leaves it empty.
	Label string `json:"label"`
}

// ModeOptions tune FindModes; zero (or invalid) fields take the defaults.
type ModeOptions struct {
	// MinFraction is the smallest share of operations a reported mode
	// holds (default 0.05).
	MinFraction float64
	// MinRatio is the smallest ratio between the latencies of two density
	// peaks reported apart (default 4, at most 2^32): closer peaks are one
	// mode.
	MinRatio float64
}

// Defaults of ModeOptions and the fixed parameters of the peak finder.
const (
	DefaultMinFraction = 0.05
	DefaultMinRatio    = 4

	// modeScale is the working grid: 16 buckets per power of two (4.4 %).
	modeScale   = 4
	modeBuckets = 1 << modeScale
	// smoothShare: the Gaussian smoothing kernel's standard deviation is
	// this share of the smallest peak separation, log2(MinRatio) octaves
	// (half an octave by default). Two clusters MinRatio apart stay two
	// peaks after smoothing, and as much noise as possible is averaged
	// out: peaks closer than MinRatio would merge anyway.
	smoothShare = 0.25
	// maxRatio caps MinRatio (32 octaves) to bound the kernel's size.
	maxRatio = 1 << 32
	// minDip: two peaks are apart only if the density between them falls
	// at least 20 % below the lower peak; a shoulder is not a mode.
	minDip = 0.2
	// dipSigmas: that fall must also exceed 3 standard deviations of the
	// Poisson noise of the smoothed counts, so that sparse data (a long
	// tail, a few hundred operations) does not make peaks of noise.
	dipSigmas = 3
	// modeCentralTail is the share cut from each end for LowUS/HighUS.
	modeCentralTail = 0.05
)

func (o ModeOptions) withDefaults() ModeOptions {
	if !(o.MinFraction > 0 && o.MinFraction <= 1) {
		o.MinFraction = DefaultMinFraction
	}
	if !(o.MinRatio >= 1) || math.IsInf(o.MinRatio, 0) {
		o.MinRatio = DefaultMinRatio
	}
	o.MinRatio = math.Min(o.MinRatio, maxRatio)
	return o
}

// FindModes finds the density peaks of a latency distribution on a log
// axis and returns them as modes in ascending latency, or nil for an
// empty or invalid histogram. Counts are read as event counts: the noise
// test assumes Poisson counts, so a histogram of fractions looks like very
// few events and shows fewer modes.
//
// Method:
//  1. The histogram is moved onto a grid of 16 buckets per octave in µs:
//     exactly for µs grids of scale ≥ 4 such as Step's, else spreading
//     each bucket by log-width overlap (as hist.Rebin does). A zero
//     bucket [0, e) is read as the octave [e/2, e): a histogram cannot say
//     where below e its events lie.
//  2. The counts are smoothed by a Gaussian whose standard deviation is a
//     quarter of log2(MinRatio) octaves (half an octave by default): two
//     clusters MinRatio apart remain two peaks, and noise is averaged over
//     as wide a window as that allows.
//  3. Every local maximum of the smoothed density is a candidate peak; the
//     axis is split at the density minimum between neighbouring peaks, and
//     each operation belongs to the peak on its side.
//  4. Peaks that are not distinct merge into a higher neighbour, the
//     lowest first. Distinct means that where the two basins meet the
//     density is at least 20 % below the lower peak, by more than z
//     standard deviations of the Poisson noise of the smoothed counts,
//     z² = 9 + 2·ln(distance between the peaks in kernel widths): a
//     minimum found over a wider stretch had more chances to dip by
//     chance. This removes noise bumps (in sparse data, long tails) and
//     shoulders.
//  5. Then peaks less than MinRatio apart merge the same way. A peak that
//     must merge on both sides joins the side where the density between
//     stays higher. A merged mode keeps the higher peak and both basins.
//  6. Modes holding less than MinFraction of all operations are dropped,
//     and so is their mass: it is not given to a neighbour, whose centre
//     and extent it would distort (a 3 % cluster far out would stretch a
//     big mode's range). Reported fractions may therefore sum below 1.
func FindModes(h *hist.Histogram, o ModeOptions) []Mode {
	o = o.withDefaults()
	sd := kernelSD(o.MinRatio)
	w := smoothingKernel(sd)
	g := newLogGrid(h, len(w)/2)
	if g == nil {
		return nil
	}
	d := g.smooth(w)
	sep := separation{d: d, noise: g.noise(w), sd: sd, minRatio: o.MinRatio}
	groups := sep.merge(basins(findPeaks(d), d))
	return g.modes(groups, o.MinFraction)
}

// logGrid holds counts on the working grid, scaled so the largest is 1
// (sums of fuzzed or huge counts stay finite).
type logGrid struct {
	first  int       // grid index of counts[0]
	counts []float64 // scaled counts, padded with zeros on both ends
	scale  float64   // the largest raw count: raw = scaled · scale
	total  float64   // sum of the scaled counts
}

// newLogGrid moves h onto the working grid with pad zero buckets at each
// end (the smoothing kernel's reach), or returns nil when h is nil,
// invalid or empty. A zero bucket [0, e) is read as the octave [e/2, e).
func newLogGrid(h *hist.Histogram, pad int) *logGrid {
	if h == nil || h.Validate() != nil || !(h.Count() > 0) {
		return nil
	}
	var cells map[int]float64
	if exactGrid(h) {
		cells = downscaledCells(h)
	} else {
		cells = spreadCells(h)
	}
	if len(cells) == 0 {
		return nil
	}
	lo, hi := math.MaxInt, math.MinInt
	for i := range cells {
		lo, hi = min(lo, i), max(hi, i)
	}
	g := &logGrid{first: lo - pad, counts: make([]float64, hi-lo+1+2*pad)}
	for i, c := range cells {
		g.counts[i-g.first] = c
	}
	return g.normalise()
}

// gridLimit bounds grid indices: 2^±1100 µs is beyond float64 anyway.
const gridLimit = 1100 * modeBuckets

// exactGrid reports whether h's buckets are unions of working-grid
// buckets (a µs grid at scale ≥ 4) within float range, so that
// downscaling moves counts exactly.
func exactGrid(h *hist.Histogram) bool {
	if h.IsCustom() || h.Unit != hist.Microsecond || h.Scale < modeScale {
		return false
	}
	shift := h.Scale - modeScale
	lo := min(h.Offset>>shift, (h.ZeroPow-1)*modeBuckets)
	hi := (h.Offset + len(h.Counts)) >> shift
	return lo > -gridLimit && hi < gridLimit
}

// downscaledCells coarsens a µs grid histogram to the working grid
// exactly; the zero bucket is spread evenly over the octave below its edge.
func downscaledCells(h *hist.Histogram) map[int]float64 {
	w := h.Downscaled(modeScale)
	cells := map[int]float64{}
	for j, c := range w.Counts {
		if c := usable(c); c > 0 {
			cells[w.Offset+j] += c
		}
	}
	if z := usable(w.ZeroCount); z > 0 {
		for k := range modeBuckets {
			cells[(w.ZeroPow-1)*modeBuckets+k] += z / modeBuckets
		}
	}
	return cells
}

// spreadCells moves any other histogram (unit, scale, custom edges) onto
// the working grid, spreading each bucket by the log-width of its overlap
// with grid buckets: latencies spread evenly in log space, as hist.Rebin
// assumes. A bucket starting at 0 is read as the octave below its upper
// edge. Buckets beyond float range or of zero width hold nothing usable.
func spreadCells(h *hist.Histogram) map[int]float64 {
	cells := map[int]float64{}
	toUS := usPerUnit(h.Unit)
	for _, b := range h.Buckets() {
		lo, hi, c := b.Lower*toUS, b.Upper*toUS, usable(b.Count)
		if lo <= 0 {
			lo = hi / 2
		}
		if !(lo > 0 && hi > lo && c > 0) || math.IsInf(hi, 0) {
			continue
		}
		spreadLog(cells, math.Log2(lo)*modeBuckets, math.Log2(hi)*modeBuckets, c)
	}
	return cells
}

// spreadLog adds c over grid positions [a, b) in proportion to overlap.
func spreadLog(cells map[int]float64, a, b, c float64) {
	first, last := int(math.Floor(a)), int(math.Ceil(b))-1
	if last <= first {
		cells[first] += c
		return
	}
	for j := first; j <= last; j++ {
		overlap := math.Min(b, float64(j+1)) - math.Max(a, float64(j))
		if overlap > 0 {
			cells[j] += c * overlap / (b - a)
		}
	}
}

// usable maps counts that are not positive and finite to 0.
func usable(c float64) float64 {
	if c > 0 && !math.IsInf(c, 0) {
		return c
	}
	return 0
}

// normalise scales the counts to a maximum of 1.
func (g *logGrid) normalise() *logGrid {
	for _, c := range g.counts {
		g.scale = math.Max(g.scale, c)
	}
	if !(g.scale > 0) {
		return nil
	}
	for i := range g.counts {
		g.counts[i] /= g.scale
		g.total += g.counts[i]
	}
	return g
}

// smoothingKernel returns the Gaussian smoothing weights (summing to 1)
// for minRatio: a standard deviation of smoothShare·log2(minRatio) octaves,
// at least one bucket, truncated at 3 standard deviations.
func smoothingKernel(sd float64) []float64 {
	r := int(math.Ceil(3 * sd))
	w := make([]float64, 2*r+1)
	sum := 0.0
	for i := range w {
		x := float64(i-r) / sd
		w[i] = math.Exp(-x * x / 2)
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// kernelSD is the smoothing kernel's standard deviation in buckets.
func kernelSD(minRatio float64) float64 {
	return math.Max(1, smoothShare*math.Log2(minRatio)*modeBuckets)
}

// smooth convolves the counts with the kernel w. The result is rounded
// to multiples of 2^−40 (counts are scaled to at most 1), so that float
// rounding on a plateau (a coarse bucket spread over the grid) makes no
// peaks.
func (g *logGrid) smooth(w []float64) []float64 {
	r := len(w) / 2
	d := make([]float64, len(g.counts))
	for i, c := range g.counts {
		if c == 0 {
			continue
		}
		for k, wk := range w {
			if j := i + k - r; j >= 0 && j < len(d) {
				d[j] += c * wk
			}
		}
	}
	for i := range d {
		d[i] = math.Round(math.Ldexp(d[i], 40)) / (1 << 40)
	}
	return d
}

// noise returns ν such that the Poisson variance of a smoothed value d is
// d·ν on the scaled axis: Var(Σ w·c) = Σ w²·c for raw counts c, divided by
// scale² (and d carries one 1/scale).
func (g *logGrid) noise(kernel []float64) float64 {
	s := 0.0
	for _, w := range kernel {
		s += w * w
	}
	return s / g.scale
}

// peak is a candidate mode: the grid position (in the smoothed array) of
// its density maximum and that density.
type peak struct {
	at     int
	height float64
}

// findPeaks returns the local maxima of d in ascending order; a plateau
// counts once, at its middle.
func findPeaks(d []float64) []peak {
	var out []peak
	for a := 0; a < len(d); {
		b := a
		for b+1 < len(d) && d[b+1] == d[a] {
			b++
		}
		up := a == 0 || d[a-1] < d[a]
		down := b == len(d)-1 || d[b+1] < d[b]
		if up && down && d[a] > 0 {
			out = append(out, peak{at: (a + b) / 2, height: d[a]})
		}
		a = b + 1
	}
	return out
}

// valley returns the position of the density minimum between two peaks
// (the first one when several are equal).
func valley(d []float64, a, b peak) int {
	at := a.at
	for i := a.at; i <= b.at; i++ {
		if d[i] < d[at] {
			at = i
		}
	}
	return at
}

// group is a candidate mode: its highest peak and its basin, the grid
// positions [from, to) whose operations belong to it.
type group struct {
	peak     peak
	from, to int
}

// basins gives each peak the grid positions up to the density minima
// between it and its neighbours.
func basins(peaks []peak, d []float64) []group {
	out := make([]group, len(peaks))
	from := 0
	for i, p := range peaks {
		to := len(d)
		if i+1 < len(peaks) {
			to = valley(d, p, peaks[i+1])
		}
		out[i] = group{peak: p, from: from, to: to}
		from = to
	}
	return out
}

// separation tests whether neighbouring groups are distinct modes.
type separation struct {
	d        []float64 // smoothed density
	noise    float64   // Poisson variance of d per unit of d
	sd       float64   // the smoothing kernel's standard deviation, buckets
	minRatio float64
}

// distinct reports whether the density dips enough between neighbouring
// groups a < b, at the point where their basins meet, to make them two
// peaks rather than one peak and noise or a shoulder. The noise threshold
// grows with the distance between the peaks in kernel widths
// (z² = 3² + 2·ln(distance/sd)): a valley found as the minimum over a
// wider stretch has had more chances to dip by chance.
func (s separation) distinct(a, b group) bool {
	v := s.d[b.from]
	low := math.Min(a.peak.height, b.peak.height)
	if v > (1-minDip)*low {
		return false
	}
	dist := float64(b.peak.at - a.peak.at)
	z2 := dipSigmas*dipSigmas + 2*math.Log(math.Max(1, dist/s.sd))
	diff := low - v
	return diff > 0 && diff*diff > z2*(low+v)*s.noise
}

// far reports whether the peaks of neighbouring groups a < b are at least
// MinRatio apart.
func (s separation) far(a, b group) bool {
	return math.Exp2(float64(b.peak.at-a.peak.at)/modeBuckets) >= s.minRatio
}

// merge first merges the groups that are not distinct peaks, then those
// closer than MinRatio: a shoulder next to a peak must not decide which
// real peaks are too close.
func (s separation) merge(gs []group) []group {
	return mergeWhile(mergeWhile(gs, s.d, s.distinct), s.d, s.far)
}

// mergeWhile merges neighbouring groups for which keep is false, the group
// with the lowest peak first, into its higher neighbour.
func mergeWhile(gs []group, d []float64, keep func(a, b group) bool) []group {
	for {
		victim, into := -1, -1
		for i, g := range gs {
			if victim >= 0 && g.peak.height >= gs[victim].peak.height {
				continue
			}
			if t := mergeTarget(gs, i, d, keep); t >= 0 {
				victim, into = i, t
			}
		}
		if victim < 0 {
			return gs
		}
		gs[into].from = min(gs[into].from, gs[victim].from)
		gs[into].to = max(gs[into].to, gs[victim].to)
		gs = append(gs[:victim], gs[victim+1:]...)
	}
}

// mergeTarget returns the neighbour that gs[i] must merge into, or −1: of
// the neighbours with a peak at least as high that keep rejects, the one
// it meets at the higher density.
func mergeTarget(gs []group, i int, d []float64, keep func(a, b group) bool) int {
	best, bestValley := -1, -1.0
	for _, j := range []int{i - 1, i + 1} {
		if j < 0 || j >= len(gs) || gs[j].peak.height < gs[i].peak.height {
			continue
		}
		a, b := gs[min(i, j)], gs[max(i, j)]
		if keep(a, b) {
			continue
		}
		if v := d[b.from]; v > bestValley {
			best, bestValley = j, v
		}
	}
	return best
}

// modes turns the groups into reported modes, dropping the small ones.
func (g *logGrid) modes(gs []group, minFraction float64) []Mode {
	var out []Mode
	for _, gr := range gs {
		m := g.mode(gr.from, gr.to)
		if m.Fraction >= minFraction && allFinite(m.CenterUS, m.LowUS, m.HighUS, m.Fraction) {
			out = append(out, m)
		}
	}
	capFractions(out)
	return out
}

// mode describes the operations in grid positions [from, to).
func (g *logGrid) mode(from, to int) Mode {
	c := g.counts[from:to]
	mass := 0.0
	for _, v := range c {
		mass += v
	}
	if !(mass > 0) {
		return Mode{}
	}
	at := func(q float64) float64 { return g.value(from, c, q*mass) }
	return Mode{
		CenterUS: at(0.5),
		LowUS:    at(modeCentralTail),
		HighUS:   at(1 - modeCentralTail),
		Fraction: math.Min(1, mass/g.total),
	}
}

// value returns the latency in µs below which target of the counts c
// (starting at grid position from) lie, interpolating on the log axis
// inside the bucket that holds it.
func (g *logGrid) value(from int, c []float64, target float64) float64 {
	cum := 0.0
	last := 0
	for j, v := range c {
		if v <= 0 {
			continue
		}
		last = j
		if cum+v >= target {
			return g.latency(from+j, (target-cum)/v)
		}
		cum += v
	}
	return g.latency(from+last, 1)
}

// latency returns the µs at fraction f of the log width of grid position p.
func (g *logGrid) latency(p int, f float64) float64 {
	return math.Exp2((float64(g.first+p) + math.Max(0, math.Min(1, f))) / modeBuckets)
}

// capFractions makes sure rounding never lets the reported fractions sum
// above 1, taking any excess from the largest.
func capFractions(m []Mode) {
	if len(m) == 0 {
		return
	}
	sum := 0.0
	for _, x := range m {
		sum += x.Fraction
	}
	if sum <= 1 {
		return
	}
	big := 0
	for i := range m {
		if m[i].Fraction > m[big].Fraction {
			big = i
		}
	}
	m[big].Fraction = math.Max(0, m[big].Fraction-(sum-1))
	for s := sumFractions(m); s > 1; s = sumFractions(m) {
		m[big].Fraction = math.Nextafter(m[big].Fraction, 0)
	}
}

func sumFractions(m []Mode) float64 {
	s := 0.0
	for _, x := range m {
		s += x.Fraction
	}
	return s
}
