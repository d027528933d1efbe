// Package pcp reads Performance Co-Pilot archives (pmlogger's BASE.meta,
// BASE.index, BASE.0, BASE.1 ..., versions 2 and 3) natively, without
// libpcp, as a SOURCE: the host metrics they hold become latscope's host:
// series (docs/host.md), one window per archive record, selected with
// --from and --to.
package pcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// FormatName is the name --input-format takes.
const FormatName = "pcp"

// Store is a PCP archive as a source.Store: a path naming the archive's
// base or any of its files, not a byte stream.
func Store() source.Store {
	return source.Store{
		Name:        FormatName,
		Description: "Performance Co-Pilot archive (pmlogger, versions 2 and 3): CPU, disks, network, memory, pressure and load as host: series, one window per record, selected with --from and --until (--to)",
		Detection:   "BASE, BASE.meta, BASE.index or BASE.N whose BASE.meta starts with a v2 or v3 archive label",
		Example:     "latscope report /var/log/pcp/pmlogger/db1/20260101 --from 2026-01-01T09:00:00Z --until 2026-01-01T10:00:00Z",
		Match: func(path string) bool {
			_, ok := BaseName(path)
			return ok || compressed(path) != ""
		},
		Open: open,
	}
}

type archiveSource struct {
	path string
	opts source.Options
	diag *input.Diagnostics
	// series is --series: a series stays when its event or the source
	// matches, as the archive selects (nil: all).
	series *regexp.Regexp
}

func open(path string, opts source.Options, diag *input.Diagnostics) (source.Source, error) {
	if _, ok := BaseName(path); !ok {
		if meta := compressed(path); meta != "" {
			return nil, fmt.Errorf("%s: a compressed PCP archive (%s): decompress it first, e.g. xz -dk %s.*.xz", path, meta, strings.TrimSuffix(meta, ".meta.xz"))
		}
		return nil, fmt.Errorf("%s: %w (give BASE, BASE.meta, BASE.index or BASE.0)", path, ErrNotArchive)
	}
	src := &archiveSource{path: path, opts: opts, diag: diag}
	if opts.Series != "" {
		re, err := stream.SeriesPattern(opts.Series)
		if err != nil {
			return nil, err
		}
		src.series = re
	}
	return src, nil
}

func (s *archiveSource) Name() string { return s.path }

// Run reads the archive and emits one window per record in --from/--to:
// the record's values against each metric's previous reading. A mark
// record (pmlogger stopped) or a volume that went bad becomes a gap.
func (s *archiveSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	a, err := Open(s.path)
	if err != nil {
		return err
	}
	for _, p := range a.Problems {
		s.problem(p)
	}
	w := &windows{src: "host:" + a.Meta.Label.Host, opts: s.opts, series: s.series, t: newTracker(a.Meta), emit: emit}
	err = a.Results(s.opts.From, func(r Result, broken bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if broken {
			w.interrupt()
		}
		return w.record(r)
	}, s.problem)
	if errors.Is(err, errStop) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (s *archiveSource) problem(err error) {
	var fe *FormatError
	if errors.As(err, &fe) {
		s.diag.Malformed(fe.File, 0, "offset "+strconv.FormatInt(fe.Offset, 10)+": "+fe.Err.Error()+" (what came before is kept)")
		return
	}
	s.diag.Warn(s.path, "%v", err)
}

// compressed returns the xz-compressed metadata of the archive a path
// names (pmlogger_daily compresses old archives), or "".
func compressed(path string) string {
	base := strings.TrimSuffix(path, ".xz")
	if ext := filepath.Ext(base); ext == ".meta" || ext == ".index" || allDigits(strings.TrimPrefix(ext, ".")) {
		base = strings.TrimSuffix(base, ext)
	}
	if _, err := os.Stat(base + ".meta.xz"); err == nil {
		return base + ".meta.xz"
	}
	return ""
}

// errStop ends reading once the records pass --to.
var errStop = errors.New("past the window")

// windows turns records into intervals.
type windows struct {
	src    string
	opts   source.Options
	series *regexp.Regexp
	t      *tracker
	emit   func(stream.Interval) error
	// last is the time of the previous record that had our metrics (zero
	// at the start and after a mark); gapFrom the start of a pending gap.
	last, gapFrom time.Time
}

func (w *windows) interrupt() {
	if !w.last.IsZero() {
		w.gapFrom = w.last
	}
	w.last = time.Time{}
	w.t.forget()
}

func (w *windows) record(r Result) error {
	if r.Mark() {
		w.interrupt()
		return nil
	}
	if !w.t.relevant(r) {
		return nil
	}
	if !w.opts.To.IsZero() && !w.last.IsZero() && !w.last.Before(w.opts.To) {
		return errStop
	}
	if !w.gapFrom.IsZero() && r.At.After(w.gapFrom) && w.inWindow(w.gapFrom) {
		gap := stream.Interval{Source: w.src, Start: w.gapFrom, Duration: r.At.Sub(w.gapFrom), Gap: true}
		if err := w.emit(gap); err != nil {
			return err
		}
	}
	w.gapFrom = time.Time{}
	start := w.last
	secs := 0.0
	if !start.IsZero() {
		secs = r.At.Sub(start).Seconds()
	}
	means := w.t.advance(r, secs)
	if secs <= 0 {
		if w.last.IsZero() || r.At.After(w.last) {
			w.last = r.At
		}
		return nil
	}
	w.last = r.At
	if !w.inWindow(start) {
		return nil
	}
	iv := stream.Interval{Source: w.src, Start: start, Duration: r.At.Sub(start), Means: w.selected(means)}
	return w.emit(w.opts.KeepEvents(iv))
}

// selected applies --series.
func (w *windows) selected(means []stream.SeriesMean) []stream.SeriesMean {
	if w.series == nil || w.series.MatchString(w.src) {
		return means
	}
	kept := means[:0]
	for _, m := range means {
		if w.series.MatchString(m.Key.Event) {
			kept = append(kept, m)
		}
	}
	return kept
}

// inWindow reports whether a window starting at t is in --from/--to.
func (w *windows) inWindow(t time.Time) bool {
	return (w.opts.From.IsZero() || !t.Before(w.opts.From)) && (w.opts.To.IsZero() || t.Before(w.opts.To))
}
