package prometheus

import (
	"math"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Limits that keep sums of bucket midpoints finite.
const (
	maxCount = 1 << 53 // counts stay exact integers below it
	maxEdge  = 1e15
)

// raw is one scrape of one classic histogram: cumulative counts at each
// finite positive `le` edge, the +Inf count, and the sum when given.
type raw struct {
	edges  []float64 // ascending, > 0
	cums   []float64
	inf    float64
	sum    float64
	hasSum bool
}

// cumAt returns the cumulative count at edge e: the count of the largest
// edge ≤ e (0 below the first). It is exact at the scrape's own edges and,
// for edges a writer added later (latscope's sink adds the edges of buckets
// as they fill), exact too, because no events lay between the old edges
// around them.
func (r *raw) cumAt(e float64) float64 {
	if math.IsInf(e, 1) {
		return r.inf
	}
	i := sort.SearchFloat64s(r.edges, e) // first edge ≥ e
	if i < len(r.edges) && r.edges[i] == e {
		return r.cums[i]
	}
	if i == 0 {
		return 0
	}
	return r.cums[i-1]
}

// rawOf reads a parsed histogram; reason says why it is unusable.
func rawOf(h *dto.Histogram) (r raw, reason string) {
	type bucket struct{ le, cum float64 }
	var bs []bucket
	hasInf := false
	for _, b := range h.GetBucket() {
		le := b.GetUpperBound()
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		if math.IsNaN(le) || bad(c) || c > maxCount {
			return raw{}, "bucket with a NaN edge or a negative, NaN, infinite or absurd count"
		}
		if le > maxEdge && !math.IsInf(le, 1) {
			return raw{}, "bucket edge le beyond 1e15"
		}
		if math.IsInf(le, 1) {
			hasInf, r.inf = true, c
			continue
		}
		bs = append(bs, bucket{le, c})
	}
	slices.SortFunc(bs, func(a, b bucket) int { return cmpFloat(a.le, b.le) })
	prev := 0.0
	for i, b := range bs {
		if i > 0 && b.le == bs[i-1].le {
			return raw{}, "two buckets with the same le"
		}
		if b.cum < prev {
			if !roundingBelow(b.cum, prev) {
				return raw{}, "cumulative bucket counts decrease as le grows"
			}
			b.cum = prev
		}
		prev = b.cum
		if b.le > 0 {
			r.edges = append(r.edges, b.le)
			r.cums = append(r.cums, b.cum)
		}
	}
	if len(r.edges) == 0 {
		return raw{}, "no bucket with a finite le above 0"
	}
	count := float64(h.GetSampleCount())
	if h.SampleCountFloat != nil {
		count = h.GetSampleCountFloat()
	}
	if !hasInf {
		r.inf = max(count, prev) // _count stands for the missing +Inf bucket
	}
	if roundingBelow(r.inf, prev) {
		r.inf = prev
	}
	if bad(r.inf) || r.inf > maxCount || r.inf < prev {
		return raw{}, "the +Inf bucket holds fewer events than a finite one"
	}
	if h.SampleSum != nil {
		r.sum, r.hasSum = h.GetSampleSum(), true
		if math.IsNaN(r.sum) || math.IsInf(r.sum, 0) || r.sum < 0 {
			r.hasSum = false
		}
	}
	return r, ""
}

// noise is the relative difference of fractional counts taken as rounding
// (the same tolerance hist.Sub applies between snapshots).
const noise = 1e-9

// roundingBelow says fractional count c is below p by rounding only.
func roundingBelow(c, p float64) bool {
	return c < p && p-c <= noise*max(1, p) && (c != math.Trunc(c) || p != math.Trunc(p))
}

func bad(c float64) bool { return c < 0 || math.IsNaN(c) || math.IsInf(c, 0) }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// layout is the bucket edges a series is read on: the union of every
// finite edge it has had, plus +Inf once an event lay above them all (so
// that a histogram whose top bucket stays empty is not flagged as capped).
type layout struct {
	bounds []float64 // never modified once built: histograms share it
	hasInf bool
}

// grow widens the layout to hold r; changed says the bounds are new.
func (l *layout) grow(r *raw) (changed bool) {
	finite := l.bounds
	if l.hasInf {
		finite = finite[:len(finite)-1]
	}
	merged := finite
	for _, e := range r.edges {
		if _, found := slices.BinarySearch(merged, e); !found {
			if !changed {
				merged = slices.Clone(merged)
			}
			merged = insertSorted(merged, e)
			changed = true
		}
	}
	top := 0.0
	if len(r.edges) > 0 {
		top = r.cums[len(r.cums)-1]
	}
	hasInf := l.hasInf || r.inf > top || len(merged) < 2
	if !changed && hasInf == l.hasInf {
		return false
	}
	bounds := slices.Clip(slices.Clone(merged))
	if hasInf {
		bounds = append(bounds, math.Inf(1))
	}
	l.bounds, l.hasInf = bounds, hasInf
	return true
}

func insertSorted(s []float64, e float64) []float64 {
	i, _ := slices.BinarySearch(s, e)
	return slices.Insert(s, i, e)
}

// histogram returns r's counts on the layout's edges, in unit. The sum is
// the scrape's _sum when given (exact), else bucket midpoints.
func (l *layout) histogram(r *raw, unit hist.Unit) (*hist.Histogram, error) {
	h, err := hist.NewCustom(unit, l.bounds)
	if err != nil {
		return nil, err
	}
	prev := r.cumAt(l.bounds[0])
	if err := h.AddCustom(-1, prev); err != nil {
		return nil, err
	}
	for i := 1; i < len(l.bounds); i++ {
		c := r.cumAt(l.bounds[i])
		if err := h.AddCustom(i-1, max(c-prev, 0)); err != nil {
			return nil, err
		}
		prev = max(c, prev)
	}
	if r.hasSum {
		h.Sum, h.SumExact = r.sum, true
	}
	return h, nil
}

// instanceOf renders a series' labels (le aside) as sorted "k=v,k=v".
func instanceOf(m *dto.Metric) string {
	pairs := make([]string, 0, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		if lp.GetName() == "le" {
			continue
		}
		pairs = append(pairs, lp.GetName()+"="+lp.GetValue())
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

// unitSuffixes map metric name suffixes to the unit their values are in.
var unitSuffixes = []struct {
	suffix string
	unit   hist.Unit
}{
	{"_seconds", hist.Second}, {"_milliseconds", hist.Millisecond}, {"_ms", hist.Millisecond},
	{"_microseconds", hist.Microsecond}, {"_us", hist.Microsecond},
	{"_nanoseconds", hist.Nanosecond}, {"_ns", hist.Nanosecond},
}

// nonTimeSuffixes are base units of histograms that do not hold latencies.
var nonTimeSuffixes = []string{"_bytes", "_ratio", "_celsius", "_meters", "_volts", "_amperes", "_joules", "_grams", "_percent", "_size"}

// familyUnit returns the unit of a family's values: its name's suffix, else
// fallback. latency is false for a name in a non-time unit (_bytes...).
func familyUnit(name string, fallback hist.Unit) (unit hist.Unit, latency bool) {
	for _, s := range unitSuffixes {
		if strings.HasSuffix(name, s.suffix) {
			return s.unit, true
		}
	}
	for _, s := range nonTimeSuffixes {
		if strings.HasSuffix(name, s) {
			return fallback, false
		}
	}
	return fallback, true
}

// latscopeMetric is the metric latscope's prometheus output writes, with
// the series key in its event, instance and source labels.
const latscopeMetric = "latscope_latency_seconds"

// seriesKey is the key of one histogram series: the family and its labels,
// except for latscope's own output, whose labels give back the key it was
// written from.
func seriesKey(family string, m *dto.Metric) stream.Key {
	if family == latscopeMetric {
		var k stream.Key
		own := true
		for _, lp := range m.GetLabel() {
			switch lp.GetName() {
			case "event":
				k.Event = lp.GetValue()
			case "instance":
				k.Instance = lp.GetValue()
			case "source":
				k.Source = lp.GetValue()
			case "le":
			default:
				own = false
			}
		}
		if own && k.Event != "" {
			return k
		}
	}
	return stream.Key{Event: family, Instance: instanceOf(m)}
}
