package driver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source/awr"
	"github.com/latscope/latscope/source/oracle"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/awrstats"
)

// AWRConfig configures `latscope awr`.
type AWRConfig struct {
	Config
	// Format is table, csv, json or html for stdout.
	Format string
	// Output, when set, writes to a file whose extension picks the format
	// (.html, .csv, .json, else a table).
	Output string
	awrstats.Options
}

// AWR analyses AWR exports: DBA_HIST_SYSTEM_EVENT extracts
// (sql/awr_system_event.sql) are read as they are, with their exact time
// waited and wait classes; any other SOURCE (DBA_HIST_EVENT_HISTOGRAM
// exports, V$ polls, traces) is read as a stream of histograms, each
// window's series giving its waits and its time estimated from the buckets.
func AWR(ctx context.Context, ac AWRConfig) error {
	if len(ac.Sources) == 0 {
		return errors.New("no SOURCE given (an AWR export, or - for stdin)")
	}
	diag := input.NewDiagnostics(ac.Stderr, input.DefaultReportLimit)
	var rows []awrstats.Row
	var others []string
	for _, spec := range ac.Sources {
		if ac.isAWRRange(spec) {
			raw, err := oracle.AWRSystemEvents(ctx, spec, ac.Read, diag)
			if err != nil {
				return err
			}
			rows = append(rows, ac.deltaRows(raw, spec, diag)...)
			continue
		}
		got, isExtract, err := ac.readExtract(spec, diag)
		if err != nil {
			return err
		}
		if !isExtract {
			others = append(others, spec)
			continue
		}
		rows = append(rows, got...)
	}
	if len(others) > 0 {
		got, err := ac.readHistograms(ctx, others)
		if err != nil {
			return err
		}
		rows = append(rows, got...)
	}
	if len(rows) == 0 {
		return errors.New("no snapshot windows: every instance needs two snapshots or more")
	}
	a := awrstats.Build(rows, ac.Options)
	title := "AWR wait events: " + strings.Join(ac.Sources, ", ")
	if ac.Output != "" {
		return writeFile(ac.Output, func(w *bufio.Writer) error {
			return awrstats.Write(w, a, outputFormatOf(ac.Output), title)
		})
	}
	return awrstats.Write(ac.Stdout, a, ac.Format, title)
}

// readExtract reads spec as a DBA_HIST_SYSTEM_EVENT extract when its
// heading says it is one (isExtract false otherwise, nothing read).
func (ac AWRConfig) readExtract(spec string, diag *input.Diagnostics) (rows []awrstats.Row, isExtract bool, err error) {
	var r io.Reader
	name := spec
	if spec == "-" {
		r, name = ac.Stdin, "stdin"
	} else {
		f, err := os.Open(spec)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && strings.Contains(spec, ":") {
				return nil, false, nil // a URL or probe: the sources' opener says what it is
			}
			return nil, false, err
		}
		defer f.Close()
		r = f
	}
	br, err := input.Decompressed(name, r, input.DetectLimit)
	if err != nil {
		return nil, false, err
	}
	prefix, _ := br.Peek(input.DetectLimit)
	if !awr.IsSystemEventHeading(prefix) {
		if spec == "-" {
			return nil, false, errors.New("stdin: not a DBA_HIST_SYSTEM_EVENT extract; give other AWR exports as files")
		}
		return nil, false, nil
	}
	raw, err := awr.ReadSystemEvents(br, name, ac.Read.Loc(), diag)
	if err != nil {
		return nil, true, err
	}
	return ac.deltaRows(raw, name, diag), true, nil
}

// isAWRRange says spec is a live Oracle SOURCE with an AWR snapshot range:
// its DBA_HIST_SYSTEM_EVENT rows are read as the extract's.
func (ac AWRConfig) isAWRRange(spec string) bool {
	db := ac.Read.DB
	return strings.HasPrefix(spec, "oracle://") && (db.AWRFrom != 0 || db.AWRTo != 0 || db.AWRLast != 0)
}

// deltaRows differences DBA_HIST_SYSTEM_EVENT rows into the analysis' rows,
// keeping the windows --from and --until select.
func (ac AWRConfig) deltaRows(raw []awr.SystemEventRow, name string, diag *input.Diagnostics) (rows []awrstats.Row) {
	for _, d := range awr.SystemEventDeltas(raw, name, diag) {
		if !ac.inWindow(stream.Interval{Start: d.Begin}) {
			continue // --from, --until: windows by their start, as for every source
		}
		rows = append(rows, awrstats.Row{SnapshotTime: d.End, Begin: d.Begin, Instance: d.Instance, WaitClass: d.WaitClass,
			Event: d.Event, Waits: d.Waits, TimeS: d.TimeWaitedMicro / 1e6})
	}
	return rows
}

// readHistograms reads other sources as latscope reads them everywhere and
// turns each window's series into a row: its waits, and its time waited
// (estimated from bucket midpoints unless the source timed every wait).
// The series' instance is its own, or its source's.
func (ac AWRConfig) readHistograms(ctx context.Context, specs []string) ([]awrstats.Row, error) {
	c := ac.Config
	c.Sources = specs
	o, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	var rows []awrstats.Row
	err = c.run(ctx, o, func(iv stream.Interval) error {
		if iv.Gap {
			return nil
		}
		for _, s := range iv.Series {
			n := s.Hist.Count()
			if n == 0 {
				continue
			}
			inst := s.Key.Instance
			if inst == "" {
				inst = iv.Source
			}
			rows = append(rows, awrstats.Row{SnapshotTime: iv.End(), Begin: iv.Start, Instance: inst, Event: s.Key.Event,
				Waits: n, TimeS: s.Hist.Sum * float64(s.Hist.Unit) / 1e9})
		}
		return nil
	})
	o.finish(c.Stderr)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", strings.Join(specs, ", "), err)
	}
	return rows, nil
}
