// Package api is latscope serve's data API on the httpsec router: the
// collection jobs' state, the archive's series, and a series' histogram for
// a window (merged, or per interval). Summaries are built by the report
// code, so a window answers exactly what `latscope report ARCHIVE` prints.
package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/server/auditwatch"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/jobctl"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/server/live"
	"github.com/latscope/latscope/server/metrics"
	"github.com/latscope/latscope/server/runs"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/report"
)

// Data is what the routes read.
type Data struct {
	Archive *archive.Archive
	// Tiers are the archive's resolutions (nil: archive.DefaultTiers).
	Tiers []archive.Tier
	// Jobs returns the jobs' current state.
	Jobs func() []jobs.Status
	// Sinks are the formats /api/v1/export writes (driver.Sinks(): those
	// of latscope convert); MaxExport bounds the windows a report reads
	// (0: DefaultMaxExport).
	Sinks     []sink.Format
	MaxExport int
	// JobControl changes the jobs (jobchanges.go).
	JobControl *jobctl.Manager
	// Runs starts and keeps the on-demand runs.
	Runs *runs.Executor
	// Live streams the archived intervals (nil: GET /api/v1/live answers 503).
	Live *live.Hub
	// Metrics holds the Prometheus series of GET /metrics (nil: none).
	Metrics *promnative.Mapper
	// Fleet is the store the fleet routes read (nil: none configured).
	Fleet *Fleet
	// AuditWatches are the audit watches (nil: none configured) and
	// AuditTimeline draws their timeline page.
	AuditWatches  *auditwatch.Set
	AuditTimeline auditwatch.Render
}

// RegisterServe adds every route of latscope serve: the auth API of
// httpsec (health, login, users, tokens, audit) and the data routes. The
// server and the test of docs/openapi.yaml build the router with it, so
// the document is checked against the routes the server really has.
func RegisterServe(rt *httpsec.Router, d Data) {
	rt.RegisterAuthAPI()
	Register(rt, d)
	runs.Register(rt, d.Runs)
	auditwatch.Register(rt, d.AuditWatches, d.AuditTimeline)
}

// Register adds the data routes, each with the least role it needs.
func Register(rt *httpsec.Router, d Data) {
	rt.Handle("GET", "/api/v1/jobs", auth.Viewer, rt.API(d.listJobs))
	rt.Handle("GET", "/api/v1/series", auth.Viewer, rt.API(d.listSeries))
	rt.Handle("GET", "/api/v1/series/{id}/histogram", auth.Viewer, rt.API(d.histogram))
	rt.Handle("GET", "/api/v1/series/{id}/intervals", auth.Viewer, rt.API(d.intervals))
	rt.Handle("GET", "/api/v1/series/{id}/heatmap", auth.Viewer, rt.API(d.heatmap))
	d.registerExport(rt)
	d.registerFleet(rt)
	registerJobChanges(rt, d.JobControl)
	live.Register(rt, d.Live)
	metrics.Register(rt, d.Metrics)
}

func (d Data) listJobs(w http.ResponseWriter, r *http.Request) (int, any, error) {
	return http.StatusOK, map[string]any{"jobs": d.Jobs()}, nil
}

// seriesJSON is one series of the archive.
type seriesJSON struct {
	ID       int64  `json:"id"`
	Source   string `json:"source"`
	Event    string `json:"event"`
	Instance string `json:"instance"`
	// KeySource is set when a series was kept apart per input (--by file).
	KeySource string `json:"key_source,omitempty"`
	Kind      string `json:"kind"` // "histogram" or "mean"
}

func toJSON(s archive.SeriesInfo) seriesJSON {
	kind := "histogram"
	if s.Mean {
		kind = "mean"
	}
	return seriesJSON{ID: s.ID, Source: s.Source, Event: s.Key.Event, Instance: s.Key.Instance, KeySource: s.Key.Source, Kind: kind}
}

func (d Data) listSeries(w http.ResponseWriter, r *http.Request) (int, any, error) {
	infos, err := d.Archive.Series(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := make([]seriesJSON, len(infos))
	for i, s := range infos {
		out[i] = toJSON(s)
	}
	return http.StatusOK, map[string]any{"series": out}, nil
}

// windowJSON echoes the window a summary covers.
type windowJSON struct {
	From       *time.Time `json:"from,omitempty"`
	To         *time.Time `json:"to,omitempty"`
	Resolution string     `json:"resolution"`
}

// histogramResponse is a series merged over a window: the report's
// summary (events, time, mean, percentiles, buckets) with the number of
// its windows and gaps in place of their rows.
type histogramResponse struct {
	Series seriesJSON  `json:"series"`
	Window windowJSON  `json:"window"`
	Hist   *histogram  `json:"histogram,omitempty"`
	Mean   *meanTotals `json:"mean,omitempty"`
}

// histogram and meanTotals shadow the report's "intervals" rows with
// counts (encoding/json takes the shallower field).
type histogram struct {
	report.Series
	Intervals int `json:"intervals"`
	Gaps      int `json:"gaps"`
}

type meanTotals struct {
	report.Mean
	Intervals int `json:"intervals"`
	Gaps      int `json:"gaps"`
}

func (d Data) histogram(w http.ResponseWriter, r *http.Request) (int, any, error) {
	sel, s, m, err := d.summary(r)
	if err != nil {
		return 0, nil, err
	}
	resp := histogramResponse{Series: toJSON(sel.info), Window: sel.window()}
	switch {
	case s != nil:
		resp.Hist = &histogram{Series: *s, Intervals: len(s.Intervals), Gaps: countGaps(s.Intervals)}
	case m != nil:
		resp.Mean = &meanTotals{Mean: *m, Intervals: len(m.Intervals), Gaps: countGaps(m.Intervals)}
	}
	return http.StatusOK, resp, nil
}

// intervalsResponse is a series window by window.
type intervalsResponse struct {
	Series    seriesJSON        `json:"series"`
	Window    windowJSON        `json:"window"`
	Intervals []report.Interval `json:"intervals"`
}

func (d Data) intervals(w http.ResponseWriter, r *http.Request) (int, any, error) {
	sel, s, m, err := d.summary(r)
	if err != nil {
		return 0, nil, err
	}
	resp := intervalsResponse{Series: toJSON(sel.info), Window: sel.window(), Intervals: []report.Interval{}}
	switch {
	case s != nil:
		resp.Intervals = s.Intervals
	case m != nil:
		resp.Intervals = m.Intervals
	}
	return http.StatusOK, resp, nil
}

// summary reads a request's series and window and summarises it.
func (d Data) summary(r *http.Request) (selection, *report.Series, *report.Mean, error) {
	sel, err := d.selection(r)
	if err != nil {
		return sel, nil, nil, err
	}
	s, m, err := d.summarise(r.Context(), sel)
	return sel, s, m, err
}

func countGaps(ivs []report.Interval) int {
	n := 0
	for _, iv := range ivs {
		if iv.Gap {
			n++
		}
	}
	return n
}

// selection is one series and the window of a request.
type selection struct {
	info archive.SeriesInfo
	// sameSource are the archive's series of info's source, info too.
	sameSource []archive.SeriesInfo
	from, to   time.Time
	resolution time.Duration
}

func (s selection) window() windowJSON {
	w := windowJSON{Resolution: resolutionName(s.resolution)}
	if !s.from.IsZero() {
		w.From = &s.from
	}
	if !s.to.IsZero() {
		w.To = &s.to
	}
	return w
}

func (d Data) tiers() []archive.Tier {
	if d.Tiers == nil {
		return archive.DefaultTiers()
	}
	return d.Tiers
}

// selection reads {id}, from, to and resolution.
func (d Data) selection(r *http.Request) (selection, error) {
	var sel selection
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return sel, fmt.Errorf("%w: series id %q: want a positive integer from /api/v1/series", auth.ErrInvalid, r.PathValue("id"))
	}
	infos, err := d.Archive.Series(r.Context())
	if err != nil {
		return sel, err
	}
	found := false
	for _, info := range infos {
		if info.ID == id {
			sel.info, found = info, true
		}
	}
	for _, info := range infos {
		if found && info.Source == sel.info.Source {
			sel.sameSource = append(sel.sameSource, info)
		}
	}
	if !found {
		return sel, fmt.Errorf("series %d: %w", id, auth.ErrNotFound)
	}
	sel.from, sel.to, sel.resolution, err = d.window(r.URL.Query())
	return sel, err
}

// summarise reads the selected series' windows from the archive and
// builds the report of them: the histogram summary, or the mean's.
func (d Data) summarise(ctx context.Context, sel selection) (*report.Series, *report.Mean, error) {
	rec := &stream.Recording{}
	q := archive.Query{From: sel.from, To: sel.to, Series: globLiteral(sel.info.Key.Event), Resolution: sel.resolution}
	err := d.Archive.Read(ctx, q, func(iv stream.Interval) error {
		if iv.Source == sel.info.Source {
			rec.Add(only(iv, sel.info))
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading series %d: %w", sel.info.ID, err)
	}
	s, m := pick(report.Build(rec, nil), sel.info.Key)
	return s, m, nil
}

// pick finds a series' summary in a report (neither: no window of the
// series in the range).
func pick(rep report.Report, k stream.Key) (*report.Series, *report.Mean) {
	for i, s := range rep.Series {
		if s.Event == k.Event && s.Instance == k.Instance && s.Source == k.Source {
			return &rep.Series[i], nil
		}
	}
	for i, m := range rep.Means {
		if m.Event == k.Event && m.Instance == k.Instance && m.Source == k.Source {
			return nil, &rep.Means[i]
		}
	}
	return nil, nil
}

// only keeps one series of an interval; the window itself stays, so
// windows without events and gaps are counted as the report counts them.
func only(iv stream.Interval, info archive.SeriesInfo) stream.Interval {
	series, means := iv.Series[:0:0], iv.Means[:0:0]
	for _, s := range iv.Series {
		if !info.Mean && s.Key == info.Key {
			series = append(series, s)
		}
	}
	for _, m := range iv.Means {
		if info.Mean && m.Key == info.Key {
			means = append(means, m)
		}
	}
	iv.Series, iv.Means = series, means
	return iv
}

// globLiteral escapes a name so that an archive --series glob matches it
// literally.
func globLiteral(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
