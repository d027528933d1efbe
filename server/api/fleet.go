package api

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/source/prometheus"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/report"
)

// Fleet is a Prometheus-compatible store that holds many hosts' series
// (every latscope serve remote-writing to it, or scraped by it): the
// fleet routes list them and read them back through PromQL, so the browser
// view draws any host's maps from the store as it draws the archive's.
type Fleet struct {
	Client *prometheus.Client
	// Metric is the histogram's name (empty: prometheus.DefaultMetric).
	Metric string
	// MinStep is the finest step read: the store's sample spacing (the
	// remote-write interval or the scrape interval; 0: 1 s).
	MinStep time.Duration
	// Lookback is how far back the series list looks (0: 24 h).
	Lookback time.Duration

	mu     sync.Mutex
	labels map[int64]map[string]string // the last list's series by id
}

// Fleet defaults.
const (
	defaultFleetLookback = 24 * time.Hour
	// maxFleetPoints keeps a summary's read below the stores' 11 000
	// points per series.
	maxFleetPoints = 10000
)

func (f *Fleet) metric() string {
	if f.Metric == "" {
		return prometheus.DefaultMetric
	}
	return f.Metric
}

func (f *Fleet) minStep() time.Duration {
	if f.MinStep <= 0 {
		return time.Second
	}
	return f.MinStep
}

// registerFleet adds the fleet routes. Without a store they answer an
// empty list that says so, rather than an error every page would show.
func (d Data) registerFleet(rt *httpsec.Router) {
	rt.Handle("GET", "/api/v1/fleet/series", auth.Viewer, rt.API(d.fleetSeries))
	rt.Handle("GET", "/api/v1/fleet/series/{id}/heatmap", auth.Viewer, rt.API(d.fleetHeatmap))
	rt.Handle("GET", "/api/v1/fleet/series/{id}/histogram", auth.Viewer, rt.API(d.fleetHistogram))
}

// fleetSeriesJSON is a series of the store: seriesJSON (source is
// host/job) with its labels.
type fleetSeriesJSON struct {
	seriesJSON
	Host       string `json:"host"`
	Job        string `json:"job"`
	SourceKind string `json:"source_kind,omitempty"`
}

func (d Data) fleetSeries(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if d.Fleet == nil {
		return http.StatusOK, map[string]any{"configured": false, "series": []fleetSeriesJSON{}}, nil
	}
	list, err := d.Fleet.list(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"configured": true, "store": d.Fleet.Client.Base.Redacted(), "series": list}, nil
}

// list asks the store for the metric's series of the lookback and keeps
// their labels by id for the routes that read one.
func (f *Fleet) list(ctx context.Context) ([]fleetSeriesJSON, error) {
	now := time.Now()
	lookback := f.Lookback
	if lookback <= 0 {
		lookback = defaultFleetLookback
	}
	m := f.metric()
	sets, err := f.Client.Series(ctx, fmt.Sprintf(`{__name__=~"%s|%s_count"}`, m, m), now.Add(-lookback), now)
	if err != nil {
		return nil, httpsec.Unavailable(fmt.Errorf("the fleet store %s: %w", f.Client.Base.Redacted(), err))
	}
	byID := map[int64]map[string]string{}
	out := []fleetSeriesJSON{}
	for _, labels := range sets {
		delete(labels, "__name__")
		id := FleetID(labels)
		if byID[id] != nil {
			continue // the native series and its classic _count
		}
		byID[id] = labels
		k := prometheus.LabelsKey(m, labels)
		out = append(out, fleetSeriesJSON{
			seriesJSON: seriesJSON{ID: id, Source: k.Source, Event: k.Event, Instance: k.Instance, Kind: "histogram"},
			Host:       labels["host"], Job: labels["job"], SourceKind: labels["source_kind"],
		})
	}
	slices.SortFunc(out, func(a, b fleetSeriesJSON) int {
		return strings.Compare(a.Source+"\x00"+a.Event+"\x00"+a.Instance, b.Source+"\x00"+b.Event+"\x00"+b.Instance)
	})
	f.mu.Lock()
	f.labels = byID
	f.mu.Unlock()
	return out, nil
}

// FleetID is a series' id: a hash of its labels, below 2^53 so that a
// browser's numbers hold it exactly, and stable across lists and servers.
func FleetID(labels map[string]string) int64 {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := fnv.New64a()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\x00", k, labels[k])
	}
	return int64(h.Sum64()&(1<<53-1)) | 1 // never 0
}

// fleetSelection resolves {id} (listing the store again when it is not
// known) and the window (default: the last hour).
func (d Data) fleetSelection(r *http.Request) (selection, map[string]string, error) {
	var sel selection
	if d.Fleet == nil {
		return sel, nil, fmt.Errorf("no fleet store is configured (the fleet: block or --prometheus): %w", auth.ErrNotFound)
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return sel, nil, fmt.Errorf("%w: series id %q: want a positive integer from /api/v1/fleet/series", auth.ErrInvalid, r.PathValue("id"))
	}
	labels := d.Fleet.known(id)
	if labels == nil {
		if _, err := d.Fleet.list(r.Context()); err != nil {
			return sel, nil, err
		}
		if labels = d.Fleet.known(id); labels == nil {
			return sel, nil, fmt.Errorf("fleet series %d: %w", id, auth.ErrNotFound)
		}
	}
	k := prometheus.LabelsKey(d.Fleet.metric(), labels)
	sel.info = archive.SeriesInfo{ID: id, Source: k.Source, Key: stream.Key{Event: k.Event, Instance: k.Instance}}
	if sel.from, sel.to, _, err = d.window(r.URL.Query()); err != nil {
		return sel, nil, err
	}
	sel.resolution = archive.Raw
	return sel, labels, sel.fillWindow(time.Now())
}

func (f *Fleet) known(id int64) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.labels[id]
}

// read reads one series of the store over the selection's window, step
// by step, each step at least MinStep and at least step.
func (f *Fleet) read(ctx context.Context, sel selection, labels map[string]string, step time.Duration, emit func(stream.Interval) error) error {
	matchers := make([]string, 0, len(labels))
	for k, v := range labels {
		matchers = append(matchers, k+"="+strconv.Quote(v))
	}
	slices.Sort(matchers)
	step = max(step, f.minStep()).Round(time.Second)
	ps := prometheus.Selection{Metric: f.metric(), Matchers: matchers, From: sel.from, To: sel.to, Step: step}
	diag := input.NewDiagnostics(io.Discard, 0)
	key := stream.Key{Event: sel.info.Key.Event, Instance: sel.info.Key.Instance}
	err := f.Client.Read(ctx, f.Client.Base.Redacted(), ps, diag, func(iv stream.Interval) error {
		// The store's key carries host/job as its source: the archive's
		// series carry it as the interval's source instead.
		iv.Source = sel.info.Source
		for i := range iv.Series {
			iv.Series[i].Key = key
		}
		return emit(iv)
	})
	switch {
	case errors.Is(err, input.ErrNothingRead):
		return nil // no data in the window: an empty map, as the archive's
	case err != nil && ctx.Err() == nil:
		return httpsec.Unavailable(fmt.Errorf("the fleet store: %w", err))
	}
	return err
}

func (d Data) fleetHeatmap(w http.ResponseWriter, r *http.Request) (int, any, error) {
	sel, labels, err := d.fleetSelection(r)
	if err != nil {
		return 0, nil, err
	}
	req := heatmapRequest{selection: sel}
	if err := req.readShape(r.URL.Query()); err != nil {
		return 0, nil, err
	}
	req.setWidth()
	hc := newHeatColumns(req)
	if err := d.Fleet.read(r.Context(), sel, labels, req.width, hc.take); err != nil {
		return 0, nil, err
	}
	resp := heatmapResponse{Series: toJSON(req.info), Window: req.window(), ColumnSeconds: req.width.Seconds(),
		Columns: req.columns, Unit: "s", Means: []meanColumns{}, heatCells: hc.cells(req)}
	return http.StatusOK, resp, nil
}

func (d Data) fleetHistogram(w http.ResponseWriter, r *http.Request) (int, any, error) {
	sel, labels, err := d.fleetSelection(r)
	if err != nil {
		return 0, nil, err
	}
	rec := &stream.Recording{}
	step := sel.to.Sub(sel.from) / maxFleetPoints
	err = d.Fleet.read(r.Context(), sel, labels, step, func(iv stream.Interval) error {
		rec.Add(iv)
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	resp := histogramResponse{Series: toJSON(sel.info), Window: sel.window()}
	if s, _ := pick(report.Build(rec, nil), sel.info.Key); s != nil {
		resp.Hist = &histogram{Series: *s, Intervals: len(s.Intervals), Gaps: countGaps(s.Intervals)}
	}
	return http.StatusOK, resp, nil
}
