// Package promnative maps latscope's intervals onto Prometheus histogram
// series: native histograms (sparse exponential buckets, delta-encoded as
// the protobuf exposition and remote write carry them) and classic `le`
// buckets, with the cumulative state Prometheus expects of a histogram
// (its counts are counters). It knows nothing of HTTP: latscope serve's
// /metrics and the remote-write sender both build on it.
//
// The mapping keeps the source's resolution. A grid histogram at scale s
// becomes a native histogram of schema s (exact durations: scale 6, 64
// buckets per octave, each 1.09 % wide); Oracle's power-of-two buckets
// (scale 0) become schema 0; custom edges become schema 3. Native bucket
// edges are powers of two in seconds while latscope's grids are anchored
// in ns, µs or ms (1e-6 is not a power of two), so the counts are rebinned
// (hist.Rebin: a bucket straddling a native edge is split by log-width)
// and then rounded so that every count stays an integer and the total is
// exact. An event can therefore move at most into the neighbouring native
// bucket: the relative error of a quantile is at most one native bucket's
// width (2^(2^-schema) - 1: 1.09 % at schema 6, 100 % at schema 0).
// Classic buckets need no rebinning: their `le` are the source's own
// power-of-two row edges (or custom edges) converted to seconds.
package promnative

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// DefaultMetric is the metric name when Options.Metric is empty.
const DefaultMetric = "latscope_wait_seconds"

// OtherEvent is the event label of the series that merges the events the
// cardinality guard leaves out.
const OtherEvent = "other"

// customSchema is the native schema of custom-edge histograms (NetApp,
// Prometheus le, fio bins): 8 buckets per octave, finer than any of those
// sources' own edges at their widest.
const customSchema = 3

// Label is one label of a series.
type Label struct{ Name, Value string }

// Span is a run of consecutive native buckets: Offset is the index gap from
// the end of the previous span (for the first span: the index of its first
// bucket), Length the number of buckets.
type Span struct {
	Offset int32
	Length uint32
}

// Native is a native histogram's cumulative state. Bucket index i covers
// (2^((i-1)·2^-Schema), 2^(i·2^-Schema)] seconds; Deltas are the counts of
// the buckets the spans cover, each the difference from the previous one
// (the first absolute), as the protobuf exposition and remote write carry
// them. Only positive buckets exist: latencies are never negative.
type Native struct {
	Schema        int32
	ZeroThreshold float64
	ZeroCount     uint64
	Count         uint64
	Sum           float64
	Spans         []Span
	Deltas        []int64
}

// Classic is a classic histogram's cumulative state: Cumulative[i] events
// at or below Bounds[i] seconds; the last bound is +Inf.
type Classic struct {
	Bounds     []float64
	Cumulative []uint64
	Count      uint64
	Sum        float64
}

// Series is one histogram series at Timestamp (the end of the last interval
// that touched it). Labels are sorted by name with __name__ first (the
// metric); as classic series the name takes the suffixes _bucket (with an
// le label per bound), _sum and _count.
type Series struct {
	Labels    []Label
	Native    Native
	Classic   Classic
	Timestamp time.Time
}

// Options configures a Mapper.
type Options struct {
	// Host is the host label (left out when empty).
	Host string
	// MaxEventsPerJob bounds the events of one job that get series of their
	// own (the N with the most time waited); the rest are merged into
	// event="other". 0 or less: no bound.
	MaxEventsPerJob int
	// Metric is the metric name (DefaultMetric when empty).
	Metric string
	// SourceKind returns the source_kind label of a job's series, asked
	// once per job (nil, or an empty answer: SourceKind of the
	// interval's source).
	SourceKind func(job string) string
}

// Mapper holds the cumulative state of every series. It is safe for
// concurrent use.
type Mapper struct {
	opts Options

	mu     sync.Mutex
	jobs   map[string]*jobState
	series map[seriesKey]*seriesState
	means  map[seriesKey]*meanState
}

type seriesKey struct{ job, event, instance string }

// jobState is what the cardinality guard knows of one job.
type jobState struct {
	kind     string             // source_kind label, "" until known
	waited   map[string]float64 // seconds waited per event, over the job's life
	admitted map[string]bool    // events with series of their own
	means    int                // mean series of the job (capped: MaxMeansPerJob)
}

type seriesState struct {
	labels []Label
	active bool // false once the guard merged its event into "other"
	native nativeState
	// Classic state: events per bucket upper edge (seconds, +Inf for an
	// open top) and the union of finite edges seen.
	classic map[float64]uint64
	edges   []float64
	count   uint64
	sum     float64
	at      time.Time
}

type nativeState struct {
	set     bool
	schema  int
	zeroPow int // zero bucket [0, 2^zeroPow) seconds
	zero    uint64
	buckets map[int]uint64 // by hist bucket index at schema (native index - 1)
}

// NewMapper returns a Mapper with no series.
func NewMapper(opts Options) *Mapper {
	if opts.Metric == "" {
		opts.Metric = DefaultMetric
	}
	return &Mapper{opts: opts, jobs: map[string]*jobState{}, series: map[seriesKey]*seriesState{}, means: map[seriesKey]*meanState{}}
}

// SetSourceKind sets the source_kind label of a job's series (the input
// format or probe kind, when the caller knows it better than the source's
// scheme). It applies to series created afterwards.
func (m *Mapper) SetSourceKind(job, kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.job(job).kind = kind
}

// SourceKind derives a source kind from a SOURCE as users write it: the
// scheme of a URL or probe (postgres, mysql, oracle, iotest, nettest,
// https), "stdin" for "-", else "file".
func SourceKind(source string) string {
	if source == "-" {
		return "stdin"
	}
	if i := strings.IndexByte(source, ':'); i > 1 {
		scheme := source[:i]
		if !strings.ContainsAny(scheme, `/\. `) {
			return strings.ToLower(scheme)
		}
	}
	return "file"
}

// kindOf returns a job's state with its source_kind known.
func (m *Mapper) kindOf(job string, iv stream.Interval) *jobState {
	j := m.job(job)
	if j.kind == "" && m.opts.SourceKind != nil {
		j.kind = m.opts.SourceKind(job)
	}
	if j.kind == "" {
		j.kind = SourceKind(iv.Source)
	}
	return j
}

func (m *Mapper) job(name string) *jobState {
	j := m.jobs[name]
	if j == nil {
		j = &jobState{waited: map[string]float64{}, admitted: map[string]bool{}}
		m.jobs[name] = j
	}
	return j
}

// Add counts a job's interval into the series and returns the cumulative
// state, at the interval's end, of every series it touched. A gap touches
// nothing: the counters just go on.
func (m *Mapper) Add(job string, iv stream.Interval) []Series {
	if iv.Gap || len(iv.Series) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.kindOf(job, iv)
	m.guard(j, iv)
	end := iv.End()
	touched := map[seriesKey]*seriesState{}
	for _, sh := range iv.Series {
		if sh.Hist == nil || sh.Hist.Empty() {
			continue
		}
		event := sh.Key.Event
		if m.opts.MaxEventsPerJob > 0 && !j.admitted[event] {
			event = OtherEvent
		}
		k := seriesKey{job: job, event: event, instance: sh.Key.Instance}
		s := m.seriesFor(k, j.kind)
		s.add(sh.Hist)
		s.at = end
		touched[k] = s
	}
	out := make([]Series, 0, len(touched))
	for _, s := range touched {
		out = append(out, s.snapshot())
	}
	sortSeries(out)
	return out
}

// Series returns the cumulative state of every series the guard keeps,
// sorted by labels: what a scrape exposes.
func (m *Mapper) Series() []Series {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Series, 0, len(m.series))
	for _, s := range m.series {
		if s.active {
			out = append(out, s.snapshot())
		}
	}
	sortSeries(out)
	return out
}

func sortSeries(ss []Series) {
	slices.SortFunc(ss, func(a, b Series) int { return compareLabels(a.Labels, b.Labels) })
}

func compareLabels(a, b []Label) int {
	return slices.CompareFunc(a, b, func(x, y Label) int { return cmp.Or(cmp.Compare(x.Name, y.Name), cmp.Compare(x.Value, y.Value)) })
}

// guard updates the time waited per event and the events admitted: while
// fewer than MaxEventsPerJob are admitted every event is; then an event
// whose time waited exceeds the least of the admitted ones takes its place.
// A demoted event's series stops (its counters are kept should it return)
// and its later events go to "other"; no count is ever lost or moved back.
func (m *Mapper) guard(j *jobState, iv stream.Interval) {
	for _, sh := range iv.Series {
		if sh.Hist != nil {
			j.waited[sh.Key.Event] += seconds(sh.Hist.Sum, sh.Hist.Unit)
		}
	}
	limit := m.opts.MaxEventsPerJob
	if limit <= 0 {
		return
	}
	for _, sh := range iv.Series {
		e := sh.Key.Event
		if j.admitted[e] || sh.Hist == nil || sh.Hist.Empty() {
			continue
		}
		if len(j.admitted) < limit {
			j.admitted[e] = true
			m.setActive(j, e, true)
			continue
		}
		weakest := ""
		for a := range j.admitted {
			if weakest == "" || j.waited[a] < j.waited[weakest] || (j.waited[a] == j.waited[weakest] && a > weakest) {
				weakest = a
			}
		}
		if j.waited[e] > j.waited[weakest] {
			delete(j.admitted, weakest)
			m.setActive(j, weakest, false)
			j.admitted[e] = true
			m.setActive(j, e, true)
		}
	}
}

// setActive shows or hides the existing series of one job's event.
func (m *Mapper) setActive(j *jobState, event string, active bool) {
	for k, s := range m.series {
		if k.event == event && m.jobs[k.job] == j {
			s.active = active
		}
	}
}

func (m *Mapper) seriesFor(k seriesKey, kind string) *seriesState {
	s := m.series[k]
	if s == nil {
		s = &seriesState{labels: m.labels(k, kind), classic: map[float64]uint64{}}
		m.series[k] = s
	}
	s.active = true
	return s
}

// labels returns the series' labels, sorted with __name__ first; empty
// ones are left out (Prometheus treats an empty label as absent).
func (m *Mapper) labels(k seriesKey, kind string) []Label {
	ls := []Label{{"__name__", m.opts.Metric}}
	for _, l := range []Label{
		{"event", k.event}, {"host", m.opts.Host}, {"instance", k.instance}, {"job", k.job}, {"source_kind", kind},
	} {
		if l.Value != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

// seconds converts a value in unit to seconds.
func seconds(v float64, unit hist.Unit) float64 {
	return v * float64(unit) / float64(hist.Second)
}

// add counts one interval's histogram into the series.
func (s *seriesState) add(h *hist.Histogram) {
	s.addClassic(h)
	s.native.add(h)
	s.sum += seconds(h.Sum, h.Unit)
}

// addClassic counts h at its own power-of-two row edges (custom edges as
// they are): the source's edges, exact, converted to seconds.
func (s *seriesState) addClassic(h *hist.Histogram) {
	rows := h
	if !h.IsCustom() {
		rows = h.Downscaled(0)
	}
	for _, b := range rows.Buckets() {
		upper := seconds(b.Upper, h.Unit)
		switch {
		case h.IsCustom() && b.Lower == 0:
			// hist flags a custom zero bucket as capped when it alone has
			// counts; its edge is Bounds[0] all the same.
			upper = seconds(h.Bounds[0], h.Unit)
		case b.Capped:
			upper = math.Inf(1)
		}
		if !math.IsInf(upper, 1) {
			if i, found := slices.BinarySearch(s.edges, upper); !found {
				s.edges = slices.Insert(s.edges, i, upper)
			}
		}
		n := uint64(math.Round(b.Count))
		s.classic[upper] += n
		s.count += n
	}
}

// schemaOf is the native schema that keeps h's resolution.
func schemaOf(h *hist.Histogram) int {
	if h.IsCustom() {
		return customSchema
	}
	return min(h.Scale, hist.MaxScale)
}

// add rebins h onto the series' native grid in seconds and counts it, the
// counts rounded along their cumulative sum so that each stays an integer
// and the total is exact.
func (n *nativeState) add(h *hist.Histogram) {
	if !n.set {
		n.set, n.schema, n.buckets = true, schemaOf(h), map[int]uint64{}
	}
	r := hist.Rebin(h, hist.Second, n.schema)
	if r.ZeroPow > n.zeroPow || len(n.buckets) == 0 && n.zero == 0 {
		n.raiseZero(r.ZeroPow)
	}
	zeroEdge := n.zeroPow << n.schema // first bucket index above the zero bucket
	var cum, prev float64
	take := func(c float64) uint64 {
		cum += c
		v := math.Round(cum)
		d := v - prev
		prev = v
		return uint64(max(d, 0))
	}
	zero := r.ZeroCount
	for j, c := range r.Counts {
		if r.Offset+j < zeroEdge {
			zero += c
		}
	}
	n.zero += take(zero)
	for j, c := range r.Counts {
		i := r.Offset + j
		if i < zeroEdge || c == 0 {
			continue
		}
		if d := take(c); d > 0 {
			n.buckets[i] += d
		}
	}
}

// raiseZero widens the zero bucket to [0, 2^pow) seconds, folding the
// buckets below into it (the first call just sets it).
func (n *nativeState) raiseZero(pow int) {
	if len(n.buckets) == 0 && n.zero == 0 {
		n.zeroPow = pow
		return
	}
	n.zeroPow = pow
	edge := pow << n.schema
	for i, c := range n.buckets {
		if i < edge {
			n.zero += c
			delete(n.buckets, i)
		}
	}
}

// snapshot returns the series' state as a Series (copies).
func (s *seriesState) snapshot() Series {
	return Series{
		Labels:    slices.Clone(s.labels),
		Native:    s.native.encode(s.sum),
		Classic:   s.classicState(),
		Timestamp: s.at,
	}
}

func (s *seriesState) classicState() Classic {
	c := Classic{Count: s.count, Sum: s.sum}
	uppers := make([]float64, 0, len(s.classic))
	for u := range s.classic {
		uppers = append(uppers, u)
	}
	slices.Sort(uppers)
	var cum uint64
	j := 0
	for _, e := range s.edges {
		for j < len(uppers) && uppers[j] <= e {
			cum += s.classic[uppers[j]]
			j++
		}
		c.Bounds = append(c.Bounds, e)
		c.Cumulative = append(c.Cumulative, cum)
	}
	c.Bounds = append(c.Bounds, math.Inf(1))
	c.Cumulative = append(c.Cumulative, s.count)
	return c
}

// maxSpanGap is the longest run of empty buckets kept inside a span (as
// zero deltas) rather than starting a new span: two, as client_golang does.
const maxSpanGap = 2

// encode returns the native state with its buckets as spans and deltas.
func (n *nativeState) encode(sum float64) Native {
	out := Native{Schema: int32(n.schema), ZeroThreshold: math.Ldexp(1, n.zeroPow), ZeroCount: n.zero, Sum: sum}
	out.Count = n.zero
	idx := make([]int, 0, len(n.buckets))
	for i, c := range n.buckets {
		if c > 0 {
			idx = append(idx, i)
			out.Count += c
		}
	}
	slices.Sort(idx)
	var prevCount int64
	last := 0 // native index of the last bucket encoded
	for k, i := range idx {
		native := i + 1 // hist's bucket i is [2^(i/2^s), 2^((i+1)/2^s)): native upper index i+1
		gap := native - last - 1
		switch {
		case k == 0:
			out.Spans = append(out.Spans, Span{Offset: int32(native), Length: 1})
		case gap <= maxSpanGap:
			for range gap {
				out.Deltas = append(out.Deltas, -prevCount)
				prevCount = 0
			}
			out.Spans[len(out.Spans)-1].Length += uint32(gap) + 1
		default:
			out.Spans = append(out.Spans, Span{Offset: int32(gap), Length: 1})
		}
		c := int64(n.buckets[i])
		out.Deltas = append(out.Deltas, c-prevCount)
		prevCount = c
		last = native
	}
	if !n.set {
		out.ZeroThreshold = 0
	}
	return out
}

// Buckets decodes the spans and deltas into absolute counts by native
// bucket index (upper edge 2^(index·2^-Schema) seconds).
func (n Native) Buckets() map[int]uint64 {
	out := map[int]uint64{}
	idx, d := 0, 0
	var count int64
	for si, sp := range n.Spans {
		if si == 0 {
			idx = int(sp.Offset)
		} else {
			idx += int(sp.Offset)
		}
		for range sp.Length {
			if d < len(n.Deltas) {
				count += n.Deltas[d]
			}
			d++
			if count > 0 {
				out[idx] = uint64(count)
			}
			idx++
		}
	}
	return out
}
