package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/report"
	"github.com/latscope/latscope/view/static"
)

// DefaultMaxExport is the most windows a report reads: a report is built
// from the whole selection, as `latscope report ARCHIVE` builds it, so the
// selection is held in memory. 100 000 windows are 28 hours of one source
// at 1 s, or 70 days of its 1-minute tier. Exports stream and have no such
// bound.
const DefaultMaxExport = 100_000

// exportWriteTimeout bounds the writing of one report or export.
const exportWriteTimeout = 5 * time.Minute

// registerExport adds the report and export routes: a selection of the
// archive as `latscope report ARCHIVE` and `latscope convert ARCHIVE`
// write it, byte for byte.
func (d Data) registerExport(rt *httpsec.Router) {
	rt.Handle("GET", "/api/v1/report", auth.Viewer, rt.Download(d.report), httpsec.WriteTimeout(exportWriteTimeout))
	rt.Handle("GET", "/api/v1/export", auth.Viewer, rt.Download(d.export), httpsec.WriteTimeout(exportWriteTimeout))
}

// reportTypes are the report's formats and their media types.
var reportTypes = map[string]string{
	report.FormatTable: "text/plain; charset=utf-8",
	report.FormatJSON:  "application/json; charset=utf-8",
	report.FormatCSV:   "text/csv; charset=utf-8",
	"html":             "text/html; charset=utf-8",
}

// report answers what `latscope report ARCHIVE --series --from --to
// --format` prints, or with format=html the page of `-o report.html`.
func (d Data) report(r *http.Request) (httpsec.Download, error) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = report.FormatTable
	}
	contentType, ok := reportTypes[format]
	if !ok {
		return httpsec.Download{}, fmt.Errorf("%w: format %q: want table, json, csv or html", auth.ErrInvalid, format)
	}
	intervals, err := optionalBool(q.Get("intervals"))
	if err != nil {
		return httpsec.Download{}, fmt.Errorf("%w: intervals: %v", auth.ErrInvalid, err)
	}
	rec, diag, err := d.read(r)
	if err != nil {
		return httpsec.Download{}, err
	}
	out := httpsec.Download{ContentType: contentType, Filename: "latscope-report." + reportExtension(format)}
	if format == "html" {
		out.Write = func(w io.Writer) error { return static.WriteHTML(w, rec.Intervals(), static.Options{}) }
		return out, nil
	}
	rep := report.Build(rec, diag)
	out.Write = func(w io.Writer) error { return report.Write(w, rep, format, report.Options{Intervals: intervals}) }
	return out, nil
}

func reportExtension(format string) string {
	if format == report.FormatTable {
		return "txt"
	}
	return format
}

// export answers what `latscope convert ARCHIVE --to FORMAT` writes:
// latscope's recording (format=latscope or lsr, the default) or any
// convert sink's format, streamed as the sources are read.
func (d Data) export(r *http.Request) (httpsec.Download, error) {
	f, err := d.sinkFormat(r.URL.Query().Get("format"))
	if err != nil {
		return httpsec.Download{}, err
	}
	q, events, err := d.query(r)
	if err != nil {
		return httpsec.Download{}, err
	}
	write := func(w io.Writer) error {
		diag := input.NewDiagnostics(io.Discard, input.DefaultReportLimit)
		sw, err := f.New(w, sink.Options{Name: "-", Diag: diag})
		if err != nil {
			return err
		}
		if err := mergeSources(r.Context(), d.Archive, q, keeping(events, valid(diag, sw.Write))); err != nil {
			return err
		}
		return sw.Close()
	}
	return httpsec.Download{ContentType: exportType(f), Filename: "latscope-export" + f.Extension, Write: write}, nil
}

// sinkFormat finds an export format by its name or its extension.
func (d Data) sinkFormat(name string) (sink.Format, error) {
	if name == "" {
		name = "lsr"
	}
	var names []string
	for _, f := range d.Sinks {
		if f.Sent { // sent to an endpoint (otlp): no file to download
			continue
		}
		if f.Name == name || strings.TrimPrefix(f.Extension, ".") == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return sink.Format{}, fmt.Errorf("%w: format %q: want one of %s (latscope formats lists them)", auth.ErrInvalid, name, strings.Join(names, ", "))
}

// exportType is the media type of an export format: binary recordings,
// JSON lines, CSV, and text for the other tools' formats.
func exportType(f sink.Format) string {
	switch f.Extension {
	case ".jsonl":
		return "application/x-ndjson"
	case ".csv":
		return "text/csv; charset=utf-8"
	case ".txt", ".hlog", ".prom":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// read reads a request's selection (series, from, to, resolution) into a
// recording, as the CLI reads an archive SOURCE: invalid windows dropped
// with a warning, windows of one source and start merged, at most
// MaxExport windows.
func (d Data) read(r *http.Request) (*stream.Recording, *input.Diagnostics, error) {
	q, events, err := d.query(r)
	if err != nil {
		return nil, nil, err
	}
	limit := d.MaxExport
	if limit <= 0 {
		limit = DefaultMaxExport
	}
	rec := &stream.Recording{}
	diag := input.NewDiagnostics(io.Discard, input.DefaultReportLimit)
	err = d.Archive.Read(r.Context(), q, keeping(events, valid(diag, func(iv stream.Interval) error {
		if rec.Len() >= limit {
			return &httpsec.TooLargeError{Msg: fmt.Sprintf("the selection holds more than %d windows: narrow from and to or series, or ask a coarser resolution", limit)}
		}
		rec.Add(iv)
		return nil
	})))
	return rec, diag, err
}

// valid drops what the CLI drops from a source (source.RunAll): invalid
// windows, with a warning.
func valid(diag *input.Diagnostics, emit func(stream.Interval) error) func(stream.Interval) error {
	return func(iv stream.Interval) error {
		if err := iv.Validate(); err != nil {
			diag.Warn("", "dropped an interval: %v", err)
			return nil
		}
		return emit(iv)
	}
}

// query reads series, event (repeatable, exact names: the CLI's --event),
// from, to and resolution. A selection that matches no series of the
// archive is 404, so that a typo is not taken for a quiet window.
func (d Data) query(r *http.Request) (archive.Query, source.Options, error) {
	var q archive.Query
	var err error
	params := r.URL.Query()
	events := source.Options{Events: params["event"]}
	if q.From, q.To, q.Resolution, err = d.window(params); err != nil {
		return q, events, err
	}
	q.Series = params.Get("series")
	selects, err := q.Selector()
	if err != nil {
		return q, events, fmt.Errorf("%w: series: %v", auth.ErrInvalid, err)
	}
	if q.Series == "" && len(events.Events) == 0 {
		return q, events, nil
	}
	found, err := d.anySeries(r.Context(), func(s archive.SeriesInfo) bool { return selects(s) && events.KeepEvent(s.Key.Event) })
	if err == nil && !found {
		what := fmt.Sprintf("%q", q.Series)
		if len(events.Events) > 0 {
			what = fmt.Sprintf("series %q and event %q", q.Series, strings.Join(events.Events, ", "))
		}
		err = fmt.Errorf("%w: no series of the archive matches %s", auth.ErrNotFound, what)
	}
	return q, events, err
}

// keeping applies the request's event= (the CLI's --event) before emit.
func keeping(events source.Options, emit func(stream.Interval) error) func(stream.Interval) error {
	if len(events.Events) == 0 {
		return emit
	}
	return func(iv stream.Interval) error { return emit(events.KeepEvents(iv)) }
}

func (d Data) anySeries(ctx context.Context, selects func(archive.SeriesInfo) bool) (bool, error) {
	infos, err := d.Archive.Series(ctx)
	if err != nil {
		return false, err
	}
	for _, s := range infos {
		if selects(s) {
			return true, nil
		}
	}
	return false, nil
}

// optionalBool reads an optional true/false parameter.
func optionalBool(s string) (bool, error) {
	if s == "" {
		return false, nil
	}
	return strconv.ParseBool(s)
}
