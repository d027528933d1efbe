package archive

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/stream"
)

// Resolutions a Query can ask for besides a tier's step.
const (
	// Auto picks, per source, the finest tier that holds data back to the
	// query's start (see docs/archive.md).
	Auto time.Duration = 0
	// Raw reads intervals as the source emitted them.
	Raw time.Duration = -1
)

// SeriesInfo describes one series of the archive.
type SeriesInfo struct {
	ID     int64
	Source string
	Key    stream.Key
	// Mean says the series is a mean series (count and sum per window).
	Mean bool
}

// Name is how --series patterns see the series: its event.
func (s SeriesInfo) Name() string { return s.Key.Event }

// Query selects what Read returns.
type Query struct {
	// From and To bound the window starts: From ≤ start < To (zero: no
	// bound).
	From, To time.Time
	// Series is a glob matched against each series' event and against its
	// source's name: * is any text (slashes too), ? one character, [...]
	// a class as in path.Match; empty matches every series.
	Series string
	// Resolution is Auto, Raw or the step of a configured tier.
	Resolution time.Duration
	// Sources restricts the query to the sources of these names (empty:
	// every source).
	Sources []string
	// IDs restricts the query to the series of these ids (empty: every
	// series Series selects).
	IDs []int64
}

// CheckPattern reports a malformed --series glob.
func CheckPattern(pattern string) error {
	_, err := compilePattern(pattern)
	return err
}

// compilePattern turns a --series glob into an anchored regular
// expression (stream.SeriesPattern, shared with the stores that select
// series the same way).
func compilePattern(pattern string) (*regexp.Regexp, error) { return stream.SeriesPattern(pattern) }

// Selector returns the query's series filter: whether Read returns a
// series.
func (q Query) Selector() (func(SeriesInfo) bool, error) { return q.matcher() }

// matcher returns the query's series filter.
func (q Query) matcher() (func(SeriesInfo) bool, error) {
	if q.Series == "" {
		return func(SeriesInfo) bool { return true }, nil
	}
	re, err := compilePattern(q.Series)
	if err != nil {
		return nil, err
	}
	return func(s SeriesInfo) bool { return re.MatchString(s.Key.Event) || re.MatchString(s.Source) }, nil
}

// Series lists the archive's series by source, each source's in the order
// they were first written.
func (a *Archive) Series(ctx context.Context) ([]SeriesInfo, error) {
	var out []SeriesInfo
	err := eachRow(ctx, a.rdb, func(rows *sql.Rows) error {
		var s SeriesInfo
		var kind int
		if err := rows.Scan(&s.ID, &s.Source, &kind, &s.Key.Event, &s.Key.Instance, &s.Key.Source); err != nil {
			return err
		}
		s.Mean = kind == kindMean
		out = append(out, s)
		return nil
	}, `SELECT s.id, src.name, s.kind, s.event, s.instance, s.key_source
		FROM series s JOIN sources src ON src.id = s.source_id ORDER BY src.name, s.id`)
	if err != nil {
		return nil, a.errorf("listing series: %w", err)
	}
	return out, nil
}

// sourceSeries groups the selected series by source.
type sourceSeries struct {
	id     int64
	name   string
	series []SeriesInfo
}

// selectSeries returns the sources with at least one series the query
// selects, in name order. A source with no series at all is kept when the
// query selects everything: its windows still say when it was observed.
func (a *Archive) selectSeries(ctx context.Context, q Query) ([]sourceSeries, error) {
	matches, err := q.matcher()
	if err != nil {
		return nil, err
	}
	// Sources first: a source's first series commit with it, so every
	// source listed has its series in the list read after it.
	var sources []sourceSeries
	err = eachRow(ctx, a.rdb, func(rows *sql.Rows) error {
		var s sourceSeries
		err := rows.Scan(&s.id, &s.name)
		sources = append(sources, s)
		return err
	}, "SELECT id, name FROM sources ORDER BY name")
	if err != nil {
		return nil, a.errorf("listing sources: %w", err)
	}
	all, err := a.Series(ctx)
	if err != nil {
		return nil, err
	}
	var out []sourceSeries
	for _, s := range sources {
		if len(q.Sources) > 0 && !slices.Contains(q.Sources, s.name) {
			continue
		}
		for _, si := range all {
			if si.Source == s.name && matches(si) && (len(q.IDs) == 0 || slices.Contains(q.IDs, si.ID)) {
				s.series = append(s.series, si)
			}
		}
		if len(s.series) > 0 || (q.Series == "" && len(q.IDs) == 0) {
			out = append(out, s)
		}
	}
	return out, nil
}

// SelectedSources lists, in name order, the sources Read reads for q.
func (a *Archive) SelectedSources(ctx context.Context, q Query) ([]string, error) {
	sources, err := a.selectSeries(ctx, q)
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.name
	}
	return names, err
}

// Read calls emit with the intervals the query selects, source by source
// and in time order within a source. Intervals keep their gaps and their
// empty windows (observed, no events). Memory holds one chunk of windows at
// a time, whatever the length of the query.
func (a *Archive) Read(ctx context.Context, q Query, emit func(stream.Interval) error) error {
	sources, err := a.selectSeries(ctx, q)
	if err != nil {
		return err
	}
	for _, s := range sources {
		res, err := a.resolution(ctx, s.id, q)
		if err != nil {
			return err
		}
		if err := a.readSource(ctx, s, res, q, emit); err != nil {
			return err
		}
	}
	return nil
}

// bounds returns the query's range in Unix nanoseconds.
func (q Query) bounds() (from, to int64) {
	from, to = math.MinInt64, math.MaxInt64
	if !q.From.IsZero() {
		from = q.From.UnixNano()
	}
	if !q.To.IsZero() {
		to = q.To.UnixNano()
	}
	return from, to
}

// resolution returns the res column to read for a source.
func (a *Archive) resolution(ctx context.Context, source int64, q Query) (int64, error) {
	switch {
	case q.Resolution == Raw:
		return 0, nil
	case q.Resolution > 0:
		for _, t := range a.opts.Tiers[1:] {
			if t.Step == q.Resolution {
				return resOf(t.Step), nil
			}
		}
		return 0, a.errorf("no tier of resolution %s (tiers: %s)", q.Resolution, tierSteps(a.opts.Tiers))
	}
	firsts := make([]int64, len(a.opts.Tiers)) // first start per tier; MaxInt64: none
	earliest := int64(math.MaxInt64)
	for i, t := range a.opts.Tiers {
		firsts[i] = math.MaxInt64
		err := eachWindow(ctx, a.reads, source, resOf(t.Step), math.MinInt64, math.MaxInt64, 1, func(w window) error {
			firsts[i] = w.start
			return nil
		})
		if err != nil {
			return 0, a.errorf("choosing a resolution: %w", err)
		}
		earliest = min(earliest, firsts[i])
	}
	from, to := q.bounds()
	// The finest tier holding data from where the archive (or the query)
	// starts, within one step or a minute of slack, and with at most
	// AutoMaxWindows windows in the query; else the coarsest that reaches
	// back.
	want := max(from, earliest)
	chosen := int64(-1)
	for i, t := range a.opts.Tiers {
		slack := int64(max(t.Step, time.Minute))
		if firsts[i] == math.MaxInt64 || firsts[i] > want+min(slack, math.MaxInt64-want) {
			continue
		}
		chosen = resOf(t.Step)
		n := 0
		err := eachWindow(ctx, a.reads, source, chosen, from, to, AutoMaxWindows+1, func(window) error {
			n++
			return nil
		})
		if err != nil {
			return 0, a.errorf("choosing a resolution: %w", err)
		}
		if n <= AutoMaxWindows {
			return chosen, nil
		}
	}
	return max(chosen, 0), nil
}

// AutoMaxWindows is the most windows an automatic resolution reads per
// source when a coarser tier covers the query: about 1.4 hours of
// 1-second intervals, read in some 50 ms (docs/benchmarks.md).
const AutoMaxWindows = 5000

func resOf(step time.Duration) int64 { return int64(step / time.Second) }

func tierSteps(tiers []Tier) string {
	s := "raw"
	for _, t := range tiers[1:] {
		s += ", " + t.Step.String()
	}
	return s
}

// chunkWindows bounds the windows of a tier read at once per source.
const chunkWindows = 2048

// chunkSpan is the time read at once per source: one block of raw data,
// so that every block is read once; chunkWindows windows of a tier.
func chunkSpan(res int64) int64 {
	if res == 0 {
		return blockSpan
	}
	return res * int64(time.Second) * chunkWindows
}

// readSource reads one source's windows chunk by chunk, each with the
// points of the selected series. A chunk holds its points still encoded
// (as stored: about 40 bytes each) and decodes them one interval at a
// time, so memory is one chunk of encoded data plus one interval.
func (a *Archive) readSource(ctx context.Context, s sourceSeries, res int64, q Query, emit func(stream.Interval) error) error {
	from, to := q.bounds()
	span := chunkSpan(res)
	points := make([][]encodedPoint, len(s.series))
	var windows []window
	dec := &intervalDecoder{}
	for from < to {
		// A chunk is one span: the one holding from, or else the one
		// holding the next window (data may be sparse).
		windows = windows[:0]
		end := min(to, spanEnd(from, span))
		err := eachWindow(ctx, a.reads, s.id, res, from, end, noLimit, func(w window) error {
			windows = append(windows, w)
			return nil
		})
		if err != nil {
			return a.errorf("reading %s: %w", s.name, err)
		}
		if len(windows) == 0 {
			next, ok, err := a.nextWindow(ctx, s, res, end, to)
			if err != nil || !ok {
				return err
			}
			from = next
			continue
		}
		next := windows[0].start
		for i, si := range s.series {
			points[i] = points[i][:0]
			err := eachPoint(ctx, a.reads, si.ID, res, next, end, func(start int64, data []byte) error {
				points[i] = append(points[i], encodedPoint{start, data})
				return nil
			})
			if err != nil {
				return a.errorf("reading %s %s: %w", s.name, si.Key, err)
			}
		}
		if err := dec.emitChunk(s, windows, points, emit); err != nil {
			return a.errorf("reading %s: %w", s.name, err)
		}
		from = end
	}
	return nil
}

// spanEnd returns the end of the span of chunkSpan holding t.
func spanEnd(t, span int64) int64 {
	if t < math.MinInt64+span {
		return math.MinInt64 + span // floorTo would overflow below
	}
	return addSat(floorTo(t, span), span)
}

// nextWindow returns the start of a source's first window in [from, to).
func (a *Archive) nextWindow(ctx context.Context, s sourceSeries, res, from, to int64) (start int64, ok bool, err error) {
	err = eachWindow(ctx, a.reads, s.id, res, from, to, 1, func(w window) error {
		start, ok = w.start, true
		return nil
	})
	if err != nil {
		return 0, false, a.errorf("reading %s: %w", s.name, err)
	}
	return start, ok, nil
}

// encodedPoint is a stored point not decoded yet.
type encodedPoint struct {
	start int64
	data  []byte
}

// intervalDecoder turns stored windows and points into intervals, taking
// their histograms and series slices from shared arrays rather than
// allocating three objects per point (recording.HistogramDecoder).
type intervalDecoder struct {
	hists  recording.HistogramDecoder
	series []stream.SeriesHist
	// perInterval is the most histogram series an interval can have: the
	// source's selected ones.
	perInterval int
}

// seriesSlab is how many series entries intervalDecoder allocates at once.
const seriesSlab = 1024

// seriesFor returns an empty series slice with room for n entries, capped
// so that an append beyond them reallocates.
func (d *intervalDecoder) seriesFor(n int) []stream.SeriesHist {
	if n == 0 || n > seriesSlab/4 {
		return make([]stream.SeriesHist, 0, n)
	}
	if len(d.series) < n {
		d.series = make([]stream.SeriesHist, seriesSlab)
	}
	out := d.series[:0:n]
	d.series = d.series[n:]
	return out
}

// emitChunk walks the windows in time order with one cursor per series
// and emits each window with the points of its start. A point without its
// window was not observed and is not shown.
func (d *intervalDecoder) emitChunk(s sourceSeries, windows []window, points [][]encodedPoint, emit func(stream.Interval) error) error {
	d.perInterval = 0
	for _, si := range s.series {
		if !si.Mean {
			d.perInterval++
		}
	}
	next := make([]int, len(points))
	var zone *time.Location // shared while the zone stays the same
	var zoneName string
	var zoneOff int
	for _, w := range windows {
		if zone == nil || w.zoneName != zoneName || w.zoneOff != zoneOff {
			zone, zoneName, zoneOff = location(w.zoneName, w.zoneOff), w.zoneName, w.zoneOff
		}
		iv := w.interval(s.name, zone)
		for k, ps := range points {
			i := next[k]
			for i < len(ps) && ps[i].start < w.start {
				i++
			}
			if i < len(ps) && ps[i].start == w.start {
				if err := d.addPoint(&iv, s.series[k], ps[i].data); err != nil {
					return err
				}
				i++
			}
			next[k] = i
		}
		if err := emit(iv); err != nil {
			return err
		}
	}
	return nil
}

// location builds the zone a window was recorded in, as recordings do.
func location(name string, offset int) *time.Location {
	if offset == 0 && name == "UTC" {
		return time.UTC
	}
	return time.FixedZone(name, offset)
}

// addPoint decodes a point into its interval.
func (d *intervalDecoder) addPoint(iv *stream.Interval, si SeriesInfo, data []byte) error {
	if si.Mean {
		m, err := recording.DecodeMean(data, si.Key)
		if err != nil {
			return fmt.Errorf("at %s: %w", iv.Start.Format(time.RFC3339Nano), err)
		}
		iv.Means = append(iv.Means, m)
		return nil
	}
	h, err := d.hists.Decode(data)
	if err != nil {
		return fmt.Errorf("at %s: %w", iv.Start.Format(time.RFC3339Nano), err)
	}
	if iv.Series == nil {
		iv.Series = d.seriesFor(d.perInterval)
	}
	iv.Series = append(iv.Series, stream.SeriesHist{Key: si.Key, Hist: h})
	return nil
}

// Total is one series merged over a query's window.
type Total struct {
	Series SeriesInfo
	// Hist is the merged histogram (nil for a mean series).
	Hist *hist.Histogram
	// Mean is the summed count and total (mean series).
	Mean stream.SeriesMean
	// Observed is the time the series' source observed in the window;
	// Windows counts the source's windows read, Gaps those not observed.
	Observed      time.Duration
	Windows, Gaps int
}

// Merged merges every selected series over the query's window: histograms
// add exactly when their grids agree (see docs/archive.md for the rest).
// Memory holds one chunk of windows and one histogram per series.
func (a *Archive) Merged(ctx context.Context, q Query) ([]Total, error) {
	var out []Total
	byKey := map[seriesKey]int{}
	windows := map[string]Total{} // per source: Observed, Windows, Gaps
	err := a.Read(ctx, q, func(iv stream.Interval) error {
		w := windows[iv.Source]
		w.Windows++
		if iv.Gap {
			w.Gaps++
		} else {
			w.Observed += iv.Duration
		}
		windows[iv.Source] = w
		for _, s := range iv.Series {
			t := total(&out, byKey, seriesKey{iv.Source, false, s.Key})
			if t.Hist == nil {
				t.Hist = s.Hist.Clone()
			} else {
				t.Hist.Merge(s.Hist)
			}
		}
		for _, m := range iv.Means {
			t := total(&out, byKey, seriesKey{iv.Source, true, m.Key})
			if t.Mean.Unit == 0 {
				t.Mean = m
			} else {
				t.Mean = t.Mean.Plus(m)
			}
		}
		return nil
	})
	for i := range out {
		w := windows[out[i].Series.Source]
		out[i].Observed, out[i].Windows, out[i].Gaps = w.Observed, w.Windows, w.Gaps
	}
	return out, err
}

type seriesKey struct {
	source string
	mean   bool
	key    stream.Key
}

// total finds or adds the Total of a series.
func total(out *[]Total, byKey map[seriesKey]int, k seriesKey) *Total {
	if i, ok := byKey[k]; ok {
		return &(*out)[i]
	}
	byKey[k] = len(*out)
	*out = append(*out, Total{Series: SeriesInfo{Source: k.source, Key: k.key, Mean: k.mean}})
	return &(*out)[len(*out)-1]
}
