package prometheus

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/remote"
	"github.com/latscope/latscope/stream"
)

// A Prometheus-compatible store as a SOURCE: `latscope report
// promql+http://prom:9090?host=db01 --from -1h`. The histograms that
// latscope serve exports (GET /metrics or remote write) are read back
// through the query API, native ones where the store keeps them, classic
// `le` buckets otherwise, and differenced step by step into intervals, so
// one latscope reads any host of a fleet.

// StoreScheme prefixes the store's own http:// or https:// URL.
const StoreScheme = "promql+"

// DefaultMetric is the histogram latscope serve exports.
const DefaultMetric = "latscope_wait_seconds"

// Step bounds: a store answers at most 11 000 points per series
// (Prometheus' limit), and the default step leaves a window ~720 columns.
const (
	maxPoints      = 11000
	minAutoStep    = 15 * time.Second
	autoColumns    = 720
	defaultWindow  = time.Hour
	reservedParams = "metric, match, step"
)

// Store returns the query-API store.
func Store() source.Store {
	return source.Store{
		Name: "promql",
		Description: "a Prometheus-compatible store (Prometheus, VictoriaMetrics, Mimir, Thanos) read through its query API: " +
			"latscope serve's exported histograms (native where the store keeps them, classic le buckets otherwise) or any histogram metric (?metric=), " +
			"selected by labels (?host=db01&job=waits, ?match=host=~\"db.*\"), --from and --until (default the last hour), --event and --series (a glob on host/job); " +
			"differenced per step (?step= or --interval; default the window / 720, at least 15s), a counter reset counted from zero as Prometheus' increase() does; " +
			"a bearer token from --token-file, sent only over https:// or to loopback",
		Detection: "a promql+http:// or promql+https:// URL",
		Example:   "latscope report 'promql+http://prometheus:9090?host=db01' --from -6h",
		Match:     IsStoreURL,
		Open:      openStore,
	}
}

// IsStoreURL reports whether spec names a store: promql+http(s)://.
func IsStoreURL(spec string) bool {
	scheme, _, ok := strings.Cut(spec, "://")
	scheme = strings.ToLower(scheme)
	return ok && (scheme == StoreScheme+"http" || scheme == StoreScheme+"https")
}

// Selection is what a read takes from a store.
type Selection struct {
	// Metric is the histogram's name (DefaultMetric when empty).
	Metric string
	// Matchers are PromQL label matchers, e.g. host="db01".
	Matchers []string
	From, To time.Time
	// Step is the time between evaluations (0: automatic).
	Step time.Duration
	// Events keeps only these events (exact names); Series is a glob on
	// the series' host/job (Key.Source).
	Events []string
	Series string
}

// Target is a store SOURCE resolved: the API's base URL and the selection.
type Target struct {
	Base *url.URL
	Sel  Selection
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// ParseTarget reads promql+http(s)://HOST[:PORT][/prefix]?label=value&...
// and adds --from, --until, --interval, --event and --series.
func ParseTarget(spec string, opts source.Options) (Target, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return Target{}, fmt.Errorf("store URL: %w", err)
	}
	if !IsStoreURL(spec) || u.Host == "" {
		return Target{}, fmt.Errorf("store URL %q: want promql+http://HOST:PORT or promql+https://HOST:PORT", spec)
	}
	if u.User != nil {
		return Target{}, fmt.Errorf("store URL: no user or password in the URL: give a bearer token with --token-file")
	}
	base := &url.URL{Scheme: strings.TrimPrefix(strings.ToLower(u.Scheme), StoreScheme), Host: u.Host, Path: strings.TrimSuffix(u.Path, "/")}
	sel := Selection{From: opts.From, To: opts.To, Step: opts.Interval, Events: opts.Events, Series: opts.Series}
	if err := sel.addParams(u.Query()); err != nil {
		return Target{}, fmt.Errorf("%s: %w", base, err)
	}
	return Target{Base: base, Sel: sel}, nil
}

// addParams reads the URL's parameters: metric, match, step, and label
// equalities.
func (s *Selection) addParams(q url.Values) error {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vs := q[k]
		if len(vs) != 1 {
			return fmt.Errorf("parameter %q given %d times", k, len(vs))
		}
		v := vs[0]
		switch {
		case k == "metric":
			if !regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`).MatchString(v) {
				return fmt.Errorf("metric=%q is not a metric name", v)
			}
			s.Metric = v
		case k == "match":
			s.Matchers = append(s.Matchers, strings.Trim(v, "{}"))
		case k == "step":
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Second {
				return fmt.Errorf("step=%q: want a duration of at least 1s", v)
			}
			if s.Step != 0 && s.Step != d {
				return fmt.Errorf("step given both in the URL and by --interval: give one")
			}
			s.Step = d
		case labelName.MatchString(k) && !strings.HasPrefix(k, "__"):
			s.Matchers = append(s.Matchers, k+"="+strconv.Quote(v))
		default:
			return fmt.Errorf("parameter %q is neither a label name nor one of %s", k, reservedParams)
		}
	}
	return nil
}

// resolve fills in the defaults: the metric, the last hour, the step.
func (s Selection) resolve(now time.Time) (Selection, error) {
	if s.Metric == "" {
		s.Metric = DefaultMetric
	}
	if s.To.IsZero() {
		s.To = now
	}
	if s.From.IsZero() {
		s.From = s.To.Add(-defaultWindow)
	}
	window := s.To.Sub(s.From)
	if window <= 0 {
		return s, fmt.Errorf("the window from %s to %s is empty", s.From.Format(time.RFC3339), s.To.Format(time.RFC3339))
	}
	if s.Step == 0 {
		s.Step = max(minAutoStep, (window/autoColumns + time.Second - 1).Truncate(time.Second))
	}
	if window/s.Step > maxPoints {
		return s, fmt.Errorf("%s steps of %s in %s: a store answers at most %d points per series; raise the step (?step= or --interval) or narrow the window",
			strconv.FormatInt(int64(window/s.Step), 10), s.Step, window, maxPoints)
	}
	// Steps fall on multiples of the step since the epoch, so that the
	// columns of two reads line up and 1 s steps land on whole seconds.
	s.From = s.From.Truncate(s.Step)
	return s, nil
}

// end is the last instant a read evaluates: every step whose interval
// starts before To, as an archive's windows are selected (start < To).
func (s Selection) end() time.Time { return s.To.Add(s.Step - time.Millisecond) }

func (s Selection) selector(metric string) string {
	return metric + "{" + strings.Join(s.Matchers, ",") + "}"
}

// storeSource reads one selection of a store.
type storeSource struct {
	name   string
	client *Client
	sel    Selection
	diag   *input.Diagnostics
}

func openStore(spec string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
	if opts.Follow {
		return nil, fmt.Errorf("%s: --follow does not apply to a store (read a window with --from and --until)", spec)
	}
	t, err := ParseTarget(spec, opts)
	if err != nil {
		return nil, err
	}
	warn := opts.Progress
	if warn == nil {
		warn = io.Discard
	}
	client, err := NewClient(t.Base, opts.Server, warn)
	if err != nil {
		return nil, err
	}
	return &storeSource{name: t.Base.String(), client: client, sel: t.Sel, diag: diag}, nil
}

// NewClient builds the client of a store: TLS as for a latscope server
// (--ca-file), the bearer token of --token-file, which goes only over
// https:// or to this machine's loopback.
func NewClient(base *url.URL, o source.ServerOptions, warn io.Writer) (*Client, error) {
	httpClient, err := remote.NewClient(o, warn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", base, err)
	}
	c := &Client{Base: base, HTTP: httpClient}
	if o.TokenFile == "" {
		return c, nil
	}
	if base.Scheme != "https" && !remote.IsLoopback(base.Hostname()) {
		return nil, fmt.Errorf("%s: refusing to send the bearer token over plain http:// to a host that is not this machine's loopback: use promql+https://", base)
	}
	if c.Token, err = remote.ReadTokenFile(o.TokenFile, warn); err != nil {
		return nil, fmt.Errorf("%s: %w", base, err)
	}
	return c, nil
}

func (s *storeSource) Name() string { return s.name }

func (s *storeSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	return s.client.Read(ctx, s.name, s.sel, s.diag, emit)
}

// cumulative is one series' cumulative histograms by step index.
type cumulative struct {
	key    stream.Key
	points map[int]*hist.Histogram
	first  int // the first step with a sample
}

// Read reads a selection and emits one interval per step: each series'
// increase from the previous step. Native histograms are read where the
// store has them, else the classic buckets.
func (c *Client) Read(ctx context.Context, name string, sel Selection, diag *input.Diagnostics, emit func(stream.Interval) error) error {
	sel, err := sel.resolve(time.Now())
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	series, err := c.readNative(ctx, sel, name, diag)
	if err == nil && len(series) == 0 {
		series, err = c.readClassic(ctx, sel, name, diag)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var pattern *regexp.Regexp
	if sel.Series != "" {
		// The glob of --series everywhere else (the archive, PCP): * spans /.
		if pattern, err = stream.SeriesPattern(sel.Series); err != nil {
			return fmt.Errorf("%s: --series: %w", name, err)
		}
	}
	series = slices.DeleteFunc(series, func(cs *cumulative) bool { return !sel.keeps(cs.key, pattern) })
	if len(series) == 0 {
		return fmt.Errorf("%s: %w: no %s or %s_bucket series match %s between %s and %s", name, input.ErrNothingRead,
			sel.Metric, sel.Metric, sel.selector(""), sel.From.Format(time.RFC3339), sel.To.Format(time.RFC3339))
	}
	slices.SortFunc(series, func(a, b *cumulative) int {
		return cmp.Or(cmp.Compare(a.key.Source, b.key.Source), cmp.Compare(a.key.Event, b.key.Event), cmp.Compare(a.key.Instance, b.key.Instance))
	})
	return differences(ctx, name, sel, series, emit)
}

// keeps applies --event and --series (series, compiled from Series).
func (s Selection) keeps(k stream.Key, series *regexp.Regexp) bool {
	if len(s.Events) > 0 && !slices.Contains(s.Events, k.Event) {
		return false
	}
	return series == nil || series.MatchString(k.Source)
}

// differences emits, for every step with data, the series' increases
// from the step before: a counter that went down was reset (a restart)
// and counts from zero, as Prometheus' increase() reads it; so does a
// series that first appears inside the read (the instant From is the
// baseline, read but not emitted). A series back after a gap longer than the
// store's lookback has no known increase at that step. A step inside the
// read where no series has data is a gap.
func differences(ctx context.Context, name string, sel Selection, series []*cumulative, emit func(stream.Interval) error) error {
	firstData, last := math.MaxInt, 0
	for _, cs := range series {
		cs.first = math.MaxInt
		for k := range cs.points {
			cs.first, last = min(cs.first, k), max(last, k)
			if k > 0 {
				firstData = min(firstData, k)
			}
		}
	}
	for k := firstData; k <= last; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		iv := stream.Interval{Source: name, Start: sel.From.Add(time.Duration(k-1) * sel.Step), Duration: sel.Step, Gap: true}
		for _, cs := range series {
			delta, ok, err := cs.increase(k)
			if err != nil {
				return fmt.Errorf("%s: series %s at %s: %w", name, cs.key, iv.End().Format(time.RFC3339), err)
			}
			if !ok {
				continue
			}
			iv.Gap = false
			if delta.Count() > 0 {
				iv.Series = append(iv.Series, stream.SeriesHist{Key: cs.key, Hist: delta})
			}
		}
		if err := emit(iv); err != nil {
			return err
		}
	}
	return nil
}

// increase is the series' increase into step k; ok is false when it is
// unknown (no sample at k, or none at k−1 after an earlier one).
func (cs *cumulative) increase(k int) (*hist.Histogram, bool, error) {
	prev, cur := cs.points[k-1], cs.points[k]
	switch {
	case cur == nil:
		return nil, false, nil
	case prev == nil && k != cs.first:
		return nil, false, nil
	case prev == nil:
		return cur.Clone(), true, nil
	}
	delta, reset, err := cur.Sub(prev)
	if err != nil {
		return nil, false, err
	}
	if reset {
		delta = cur.Clone()
	}
	return delta, true, nil
}

// stepIndex places a sample on the selection's evaluation instants
// From + k·Step (-1: off them). Instant 0 is the baseline; step k's
// interval is [From + (k−1)·Step, From + k·Step), which holds the samples
// stamped after the previous instant up to its own.
func (s Selection) stepIndex(at time.Time) int {
	d := at.Sub(s.From)
	if d < 0 || d%s.Step != 0 || at.After(s.end()) {
		return -1 // a store that answers instants it was not asked for is not believed
	}
	return int(d / s.Step)
}

// LabelsKey is the series key of a label set: latscope's own labels give
// event, instance and host/job; any other histogram is its metric with
// its labels, as the exposition reader names it.
func LabelsKey(metric string, labels map[string]string) stream.Key {
	if ev, ok := labels["event"]; ok && labels["job"] != "" {
		return stream.Key{Event: ev, Instance: labels["instance"], Source: hostJob(labels)}
	}
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		if k != "__name__" && k != "le" {
			pairs = append(pairs, k+"="+v)
		}
	}
	slices.Sort(pairs)
	return stream.Key{Event: metric, Instance: strings.Join(pairs, ",")}
}

// hostJob names a latscope series' origin: host/job (job alone without a
// host label).
func hostJob(labels map[string]string) string {
	if h := labels["host"]; h != "" {
		return h + "/" + labels["job"]
	}
	return labels["job"]
}

// readNative reads the metric's native histograms (none: the store keeps
// no native histograms of it).
func (c *Client) readNative(ctx context.Context, sel Selection, name string, diag *input.Diagnostics) ([]*cumulative, error) {
	res, err := c.QueryRange(ctx, sel.selector(sel.Metric), sel.From, sel.end(), sel.Step)
	if err != nil {
		return nil, err
	}
	var out []*cumulative
	for _, rs := range res {
		if len(rs.Histograms) == 0 {
			continue
		}
		cs := &cumulative{key: LabelsKey(sel.Metric, rs.Metric), points: map[int]*hist.Histogram{}}
		for _, p := range rs.Histograms {
			k := sel.stepIndex(p.At)
			if k < 0 {
				continue
			}
			h, err := nativeHist(p.Hist)
			if err != nil {
				diag.MalformedAt(name, p.At, fmt.Sprintf("series %s: %v; left out", cs.key, err))
				continue
			}
			cs.points[k] = h
		}
		out = append(out, cs)
	}
	return out, nil
}

// nativeBucket is a positive bucket on hist's grid.
type nativeBucket struct {
	index int
	count float64
}

// nativeHist reads a native histogram's JSON onto latscope's grid in
// seconds: native bucket index i (upper edge 2^(i·2^-schema)) is hist's
// bucket i−1, whose lower edge is inclusive instead; the schema is read
// from a bucket's width. Negative buckets cannot hold latencies and are
// refused.
func nativeHist(j nativeJSON) (*hist.Histogram, error) {
	h := &hist.Histogram{Unit: hist.Second, SumExact: true, Scale: -1}
	sum, err := strconv.ParseFloat(j.Sum, 64)
	if err != nil || sum < 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("sum %q", j.Sum)
	}
	h.Sum = sum
	var buckets []nativeBucket
	zeroUpper := 0.0
	for _, b := range j.Buckets {
		lo, err1 := strconv.ParseFloat(b.Lower, 64)
		hi, err2 := strconv.ParseFloat(b.Upper, 64)
		n, err3 := strconv.ParseFloat(b.Count, 64)
		if err := cmp.Or(err1, err2, err3); err != nil || !(hi > lo) || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, fmt.Errorf("bucket (%s, %s] with count %s", b.Lower, b.Upper, b.Count)
		}
		switch {
		case hi <= 0:
			if n > 0 {
				return nil, fmt.Errorf("negative bucket (%g, %g] holds %g events: not latencies", lo, hi, n)
			}
		case lo <= 0:
			h.ZeroCount += n
			zeroUpper = hi
		default:
			s := int(math.Round(-math.Log2(math.Log2(hi / lo))))
			if s < 0 || s > hist.MaxScale {
				return nil, fmt.Errorf("schema %d: latscope reads schemas 0 to %d", s, hist.MaxScale)
			}
			if h.Scale >= 0 && s != h.Scale {
				return nil, fmt.Errorf("buckets of schemas %d and %d in one histogram", h.Scale, s)
			}
			h.Scale = s
			buckets = append(buckets, nativeBucket{int(math.Round(math.Log2(hi)*math.Exp2(float64(s)))) - 1, n})
		}
	}
	if h.Scale < 0 {
		h.Scale = hist.ExactScale // only a zero bucket: any grid holds it
	}
	h.ZeroPow = zeroPow(zeroUpper, buckets, h.Scale)
	for _, b := range buckets {
		if len(h.Counts) == 0 {
			h.Offset = b.index
		}
		if b.index < h.Offset || b.index-h.Offset > 1<<20 {
			return nil, fmt.Errorf("buckets out of order or too far apart")
		}
		for len(h.Counts) <= b.index-h.Offset {
			h.Counts = append(h.Counts, 0)
		}
		h.Counts[b.index-h.Offset] += b.count
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return h, nil
}

// zeroPow is the power of two of the zero bucket's upper edge: the JSON's
// zero threshold when it has a zero bucket, else a fixed floor below
// every bucket (2^-40 s, about a picosecond) so that all samples of a
// series share it.
func zeroPow(zeroUpper float64, buckets []nativeBucket, scale int) int {
	if zeroUpper > 0 {
		return int(math.Ceil(math.Log2(zeroUpper) - 1e-9))
	}
	pow := -40
	for _, b := range buckets {
		pow = min(pow, b.index>>scale)
	}
	return pow
}

// readClassic reads the metric's classic buckets and sums.
func (c *Client) readClassic(ctx context.Context, sel Selection, name string, diag *input.Diagnostics) ([]*cumulative, error) {
	buckets, err := c.QueryRange(ctx, sel.selector(sel.Metric+"_bucket"), sel.From, sel.end(), sel.Step)
	if err != nil || len(buckets) == 0 {
		return nil, err
	}
	sums, err := c.QueryRange(ctx, sel.selector(sel.Metric+"_sum"), sel.From, sel.end(), sel.Step)
	if err != nil {
		return nil, err
	}
	unit, _ := familyUnit(sel.Metric, hist.Second)
	type scrapes struct {
		key   stream.Key
		hists map[int]*dto.Histogram
	}
	byKey := map[stream.Key]*scrapes{}
	var order []*scrapes
	at := func(labels map[string]string) *scrapes {
		k := LabelsKey(sel.Metric, labels)
		s := byKey[k]
		if s == nil {
			s = &scrapes{key: k, hists: map[int]*dto.Histogram{}}
			byKey[k], order = s, append(order, s)
		}
		return s
	}
	for _, rs := range buckets {
		le, err := strconv.ParseFloat(rs.Metric["le"], 64)
		if err != nil {
			diag.Malformed(name, 0, fmt.Sprintf("series %v: le=%q is not a number; left out", rs.Metric, rs.Metric["le"]))
			continue
		}
		s := at(rs.Metric)
		for _, p := range rs.Values {
			if k := sel.stepIndex(p.At); k >= 0 {
				h := s.hists[k]
				if h == nil {
					h = &dto.Histogram{}
					s.hists[k] = h
				}
				h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: &le, CumulativeCountFloat: &p.Value})
			}
		}
	}
	for _, rs := range sums {
		s := byKey[LabelsKey(sel.Metric, rs.Metric)]
		for _, p := range rs.Values {
			if k := sel.stepIndex(p.At); s != nil && k >= 0 && s.hists[k] != nil {
				s.hists[k].SampleSum = &p.Value
			}
		}
	}
	out := make([]*cumulative, 0, len(order))
	for _, s := range order {
		out = append(out, classicSeries(name, s.key, s.hists, unit, diag))
	}
	return out, nil
}

// classicSeries lays a series' scrapes on the union of their edges (a
// latscope exposition adds edges as buckets fill) and de-accumulates them.
func classicSeries(name string, key stream.Key, scrapes map[int]*dto.Histogram, unit hist.Unit, diag *input.Diagnostics) *cumulative {
	raws := map[int]*raw{}
	var l layout
	for k, h := range scrapes {
		r, reason := rawOf(h)
		if reason != "" {
			diag.Malformed(name, 0, fmt.Sprintf("series %s, step %d: %s; left out", key, k, reason))
			continue
		}
		raws[k] = &r
		l.grow(&r)
	}
	cs := &cumulative{key: key, points: map[int]*hist.Histogram{}}
	for k, r := range raws {
		h, err := l.histogram(r, unit)
		if err != nil {
			diag.Malformed(name, 0, fmt.Sprintf("series %s, step %d: %v; left out", key, k, err))
			continue
		}
		cs.points[k] = h
	}
	return cs
}
