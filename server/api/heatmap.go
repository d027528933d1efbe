package api

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// Heat-map request bounds: columns is what a screen can show.
const (
	DefaultHeatmapColumns = 600
	MaxHeatmapColumns     = 4000
	// defaultHeatmapSpan is the window ending at the series' last data
	// when the request gives no from.
	defaultHeatmapSpan = time.Hour
)

// heatmapResponse is one series' heat map over a window, on columns of
// equal width starting at from: the cells of `latscope heatmap --format
// json` for that grid, with per-column percentiles and the source's mean
// series on the same columns. Latencies are seconds.
type heatmapResponse struct {
	Series        seriesJSON `json:"series"`
	Window        windowJSON `json:"window"`
	ColumnSeconds float64    `json:"column_seconds"`
	Columns       int        `json:"columns"`
	Unit          string     `json:"unit"`
	*heatCells
	Means []meanColumns `json:"means"`
}

// heatCells is the map of a histogram series (absent for a mean series).
type heatCells struct {
	RowsPerOctave int       `json:"rows_per_octave"`
	RowsNote      string    `json:"rows_note,omitempty"`
	Rows          []heatRow `json:"rows"`
	// Frequency and Intensity are [column][row]; null for a column no
	// source observed.
	Frequency [][]float64 `json:"frequency"`
	Intensity [][]float64 `json:"intensity"`
	Events    []float64   `json:"events"`
	Observed  []float64   `json:"observed"`
	P50       []*float64  `json:"p50"`
	P99       []*float64  `json:"p99"`
	Mean      []*float64  `json:"mean"`
	Totals    heatTotals  `json:"totals"`
}

type heatRow struct {
	Low   float64  `json:"low"`
	High  *float64 `json:"high"` // null: the top row holds everything above
	Label string   `json:"label"`
}

type heatTotals struct {
	Events       float64  `json:"events"`
	TimeWaited   float64  `json:"time_waited"`
	P50          *float64 `json:"p50"`
	P99          *float64 `json:"p99"`
	MaxFrequency float64  `json:"max_frequency"`
	MaxIntensity float64  `json:"max_intensity"`
}

// meanColumns is a mean series on the map's columns: sum over count of
// the windows' shares in each column (null without events), in seconds for
// a latency, else in the series' quantity (Unit names it: "percent",
// "per_second"...).
type meanColumns struct {
	SeriesID int64      `json:"series_id"`
	Event    string     `json:"event"`
	Unit     string     `json:"unit"`
	Values   []*float64 `json:"values"`
}

// heatmapRequest is a heat-map request read and checked.
type heatmapRequest struct {
	selection
	columns  int
	rowScale int
	width    time.Duration
}

func (d Data) heatmap(w http.ResponseWriter, r *http.Request) (int, any, error) {
	req, err := d.heatmapRequest(r)
	if err != nil {
		return 0, nil, err
	}
	cols, err := d.readColumns(r.Context(), req)
	if err != nil {
		return 0, nil, err
	}
	resp := heatmapResponse{Series: toJSON(req.info), Window: req.window(), ColumnSeconds: req.width.Seconds(),
		Columns: req.columns, Unit: "s", Means: cols.meanSeries(req)}
	if !req.info.Mean {
		resp.heatCells = cols.cells(req)
	}
	return http.StatusOK, resp, nil
}

// heatmapRequest reads {id}, from, to, resolution, columns and
// rows_per_octave; from and to default to the hour before the series'
// last window, and an automatic resolution becomes the tier read.
func (d Data) heatmapRequest(r *http.Request) (heatmapRequest, error) {
	var req heatmapRequest
	var err error
	if req.selection, err = d.selection(r); err != nil {
		return req, err
	}
	if err := req.readShape(r.URL.Query()); err != nil {
		return req, err
	}
	if err := d.defaultWindow(r.Context(), &req.selection); err != nil {
		return req, err
	}
	req.setWidth()
	if req.resolution == archive.Auto {
		req.resolution, err = d.autoResolution(r.Context(), req)
	}
	return req, err
}

// readShape reads columns and rows_per_octave.
func (req *heatmapRequest) readShape(q url.Values) error {
	var err error
	if req.columns, err = intParam(q, "columns", DefaultHeatmapColumns, 1, MaxHeatmapColumns); err != nil {
		return err
	}
	perOctave, err := intParam(q, "rows_per_octave", 1, 1, 8)
	if err != nil || bits.OnesCount(uint(perOctave)) != 1 {
		return fmt.Errorf("%w: rows_per_octave %q: want 1, 2, 4 or 8", auth.ErrInvalid, q.Get("rows_per_octave"))
	}
	req.rowScale = bits.TrailingZeros(uint(perOctave))
	return nil
}

// setWidth makes columns of whole nanoseconds, rounded up so that they
// cover the window.
func (req *heatmapRequest) setWidth() {
	span := req.to.Sub(req.from)
	req.width = (span + time.Duration(req.columns) - 1) / time.Duration(req.columns)
}

// intParam reads an integer parameter in [lo, hi] (def when absent).
func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%w: %s %q: want an integer from %d to %d", auth.ErrInvalid, name, s, lo, hi)
	}
	return n, nil
}

// defaultWindow fills an empty to with the end of the series' last
// window (now when it has none) and an empty from with an hour before to.
func (d Data) defaultWindow(ctx context.Context, sel *selection) error {
	end := time.Now()
	if sel.to.IsZero() {
		last, ok, err := d.Archive.LatestEnd(ctx, sel.info.Source)
		if err != nil {
			return err
		}
		if ok {
			end = last
		}
	}
	return sel.fillWindow(end)
}

// fillWindow fills an empty to with end and an empty from with an hour
// before to, and checks that from is before to.
func (sel *selection) fillWindow(end time.Time) error {
	if sel.to.IsZero() {
		sel.to = end
	}
	if sel.from.IsZero() {
		sel.from = sel.to.Add(-defaultHeatmapSpan)
	}
	if !sel.from.Before(sel.to) {
		return fmt.Errorf("%w: from %s is not before to %s (to defaults to the end of the series' last window, or now)",
			auth.ErrInvalid, sel.from.Format(time.RFC3339), sel.to.Format(time.RFC3339))
	}
	return nil
}

// autoResolution picks what a map reads: the coarsest tier whose windows
// are no wider than a column (finer ones would only be merged again) and
// that covers the window as far as the source has data, to within a
// column; raw when no tier does. A tier lags the raw data by a step or
// two, and raw data expires first: when nothing covers the window, the
// one that covers most of it.
func (d Data) autoResolution(ctx context.Context, req heatmapRequest) (time.Duration, error) {
	type extent struct {
		res        time.Duration
		first, end time.Time
		ok         bool
	}
	var cands []extent
	for _, t := range d.tiers() {
		if t.Step > 0 && t.Step <= req.width {
			cands = append(cands, extent{res: t.Step})
		}
	}
	slices.SortFunc(cands, func(a, b extent) int { return cmp.Compare(b.res, a.res) })
	cands = append(cands, extent{res: archive.Raw})
	var earliest, latest time.Time
	for i := range cands {
		c := &cands[i]
		var err error
		if c.first, c.end, c.ok, err = d.Archive.Extent(ctx, req.info.Source, c.res); err != nil {
			return 0, err
		}
		if c.ok && (earliest.IsZero() || c.first.Before(earliest)) {
			earliest = c.first
		}
		if c.ok && c.end.After(latest) {
			latest = c.end
		}
	}
	from, to := maxTime(req.from, earliest).Add(req.width), minTime(req.to, latest).Add(-req.width)
	best, bestSpan := archive.Raw, time.Duration(math.MinInt64)
	for _, c := range cands {
		if !c.ok {
			continue
		}
		if !c.first.After(from) && !c.end.Before(to) {
			return c.res, nil
		}
		if span := minTime(req.to, c.end).Sub(maxTime(req.from, c.first)); span > bestSpan {
			best, bestSpan = c.res, span
		}
	}
	return best, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// heatColumns is a window read onto the columns: the grid of the heat
// maps, each column's merged histogram, and the mean series' shares.
type heatColumns struct {
	grid    *stream.Grid
	columns int
	hists   []*hist.Histogram
	means   map[stream.Key][]stream.SeriesMean
}

// readColumns reads the selected series, and the mean series of its
// source, from the archive onto the request's columns.
func (d Data) readColumns(ctx context.Context, req heatmapRequest) (*heatColumns, error) {
	hc := newHeatColumns(req)
	q := archive.Query{From: req.from, To: req.to, Resolution: req.resolution, Sources: []string{req.info.Source}, IDs: req.seriesIDs()}
	if err := d.Archive.Read(ctx, q, hc.take); err != nil {
		return nil, fmt.Errorf("reading series %d: %w", req.info.ID, err)
	}
	return hc, nil
}

func newHeatColumns(req heatmapRequest) *heatColumns {
	g := stream.NewGrid(req.width)
	g.RowScale, g.Origin = req.rowScale, req.from
	return &heatColumns{grid: g, columns: req.columns, hists: make([]*hist.Histogram, req.columns), means: map[stream.Key][]stream.SeriesMean{}}
}

// take places an interval on the grid and gives each column it covers its
// share.
func (hc *heatColumns) take(iv stream.Interval) error {
	hc.grid.Add(iv)
	if !iv.Gap {
		hc.grid.Shares(iv, func(c int, frac float64) {
			if c >= 0 && c < hc.columns {
				hc.add(c, iv, frac, hc.columns)
			}
		})
	}
	return nil
}

// seriesIDs are the series a heat map reads: a mean series alone, or a
// histogram series with its source's mean series.
func (req heatmapRequest) seriesIDs() []int64 {
	ids := []int64{req.info.ID}
	for _, s := range req.sameSource {
		if !req.info.Mean && s.Mean {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// add gives column c its share frac of the interval's histograms and
// mean series.
func (hc *heatColumns) add(c int, iv stream.Interval, frac float64, columns int) {
	for _, s := range iv.Series {
		share := s.Hist
		if frac < 1 {
			share = share.Scaled(frac)
		}
		if hc.hists[c] == nil {
			hc.hists[c] = &hist.Histogram{Unit: share.Unit}
		}
		hc.hists[c].Merge(share)
	}
	for _, m := range iv.Means {
		col := hc.means[m.Key]
		if col == nil {
			col = make([]stream.SeriesMean, columns)
			hc.means[m.Key] = col
		}
		if !col[c].Unit.Valid() {
			col[c] = stream.SeriesMean{Key: m.Key, Unit: m.Unit, Quantity: m.Quantity}
		}
		col[c] = col[c].Plus(stream.SeriesMean{Count: m.Count * frac, Sum: m.Sum * frac, Unit: m.Unit, Quantity: m.Quantity})
	}
}

// cells builds the map with the CLI's heat-map code (heatmap.Build on the
// grid), so a column is what `latscope heatmap --format json` computes
// for it.
func (hc *heatColumns) cells(req heatmapRequest) *heatCells {
	n := req.columns
	out := &heatCells{RowsPerOctave: 1, Rows: []heatRow{}, Frequency: make([][]float64, n), Intensity: make([][]float64, n),
		Events: make([]float64, n), Observed: make([]float64, n), P50: make([]*float64, n), P99: make([]*float64, n), Mean: make([]*float64, n)}
	for c, h := range hc.hists {
		if h != nil {
			out.Events[c] = h.Count()
			out.P50[c] = seconds(h.Unit.Nanos(h.Quantile(0.5)))
			out.P99[c] = seconds(h.Unit.Nanos(h.Quantile(0.99)))
			out.Mean[c] = seconds(h.Unit.Nanos(h.Mean()))
		}
	}
	s := hc.series(req.info.Key)
	if s == nil {
		// No event in the window: no rows; observed columns are empty.
		for c := range n {
			if out.Observed[c] = hc.grid.SourceObserved(req.info.Source, c); out.Observed[c] > 0 {
				out.Frequency[c], out.Intensity[c] = []float64{}, []float64{}
			}
		}
		return out
	}
	f := heatmap.Build(hc.grid, s, heatmap.Options{Columns: n, End: n - 1, HasEnd: true, Window: true})
	out.RowsPerOctave = f.RowsPerOctave
	if req.rowScale > s.RowScale() {
		out.RowsNote = fmt.Sprintf("rows stay per octave: %s has power-of-two buckets, not exact durations", s.Key)
	}
	for _, r := range f.Rows {
		row := heatRow{Low: r.Lower / 1e9, Label: r.Label}
		if !math.IsInf(r.Upper, 1) {
			row.High = seconds(r.Upper)
		}
		out.Rows = append(out.Rows, row)
	}
	for c, col := range f.Columns {
		out.Observed[c] = col.Observed
		if !col.Gap {
			out.Frequency[c], out.Intensity[c] = f.Frequency.Values[c], f.Intensity.Values[c]
		}
	}
	u := s.Total.Unit
	out.Totals = heatTotals{Events: s.Total.Count(), TimeWaited: u.Nanos(s.Total.Sum) / 1e9,
		P50: seconds(f.Stats.P50), P99: seconds(f.Stats.P99), MaxFrequency: f.Frequency.Max, MaxIntensity: f.Intensity.Max}
	return out
}

// series returns the grid's series of key k (nil: no event in the window).
func (hc *heatColumns) series(k stream.Key) *stream.GridSeries {
	for _, s := range hc.grid.Series() {
		if s.Key == k {
			return s
		}
	}
	return nil
}

// meanSeries lists the mean series the map read, in the archive's order, each
// on every column (null where it had no events).
func (hc *heatColumns) meanSeries(req heatmapRequest) []meanColumns {
	out := []meanColumns{}
	read := req.seriesIDs()
	for _, info := range req.sameSource {
		if !info.Mean || !slices.Contains(read, info.ID) {
			continue
		}
		mc := meanColumns{SeriesID: info.ID, Event: info.Key.Event, Unit: "s", Values: make([]*float64, req.columns)}
		for c, m := range hc.means[info.Key] {
			if m.Quantity.IsLatency() {
				mc.Values[c] = seconds(m.Mean())
				continue
			}
			mc.Unit = string(m.Quantity) // a host figure: its value, not seconds
			if v := m.Mean(); !math.IsNaN(v) {
				mc.Values[c] = &v
			}
		}
		out = append(out, mc)
	}
	return out
}

// seconds converts nanoseconds to seconds; nil for NaN or infinity.
func seconds(ns float64) *float64 {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return nil
	}
	s := ns / 1e9
	return &s
}
