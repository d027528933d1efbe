// Package postgres reads PostgreSQL statement latencies: the server log
// written with log_min_duration_statement (stderr, csvlog and jsonlog
// destinations) as exact per-statement durations binned into histograms
// per normalised statement and overall.
package postgres

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// FormatName is the name users give to --input-format.
const FormatName = "postgres-log"

// detectGiveUp is how much input without one complete line makes Detect
// say No.
const detectGiveUp = 64 << 10

// Format returns the PostgreSQL server log format.
func Format() source.Format {
	return source.Format{
		Name: FormatName,
		Description: "PostgreSQL server log with log_min_duration_statement (stderr with a %m, %t or %n " +
			"log_line_prefix, csvlog or jsonlog; English messages): each \"duration: ... ms  statement:\" or " +
			"\"execute <name>:\" line is one exact statement latency, binned by the time it was logged (its end) " +
			"into --interval windows (default 3s), one series per normalised statement (literals and $n as ?, " +
			"whitespace collapsed, cut to 100 bytes; at most 200, then \"other statements\") plus \"all statements\"; " +
			"parse/bind steps and bare log_duration lines are not counted; per-event durations, so --counts does not apply",
		Detection: "first line starts with a PostgreSQL timestamp (%m, %t or %n) followed by a severity such as \"LOG:  \" " +
			"(stderr) or a csvlog record of 23+ fields, or a jsonlog object with \"timestamp\", \"pid\" and \"error_severity\"",
		Example: "latscope heatmap --follow /var/log/postgresql/postgresql-15-main.log",
		Detect:  Detect,
		Open:    Open,
	}
}

// severityMarkers follow the prefix of stderr log lines (two spaces).
var severityMarkers = []string{
	"LOG:  ", "ERROR:  ", "FATAL:  ", "PANIC:  ", "WARNING:  ", "NOTICE:  ", "INFO:  ", "DEBUG1:  ",
	"DEBUG2:  ", "DEBUG3:  ", "DEBUG4:  ", "DEBUG5:  ", "DETAIL:  ", "HINT:  ", "STATEMENT:  ", "CONTEXT:  ",
}

var csvSeverities = map[string]bool{
	"LOG": true, "ERROR": true, "FATAL": true, "PANIC": true, "WARNING": true, "NOTICE": true, "INFO": true,
	"DEBUG1": true, "DEBUG2": true, "DEBUG3": true, "DEBUG4": true, "DEBUG5": true,
}

// Detect decides on the first line that is not blank or a tab-indented
// continuation: it must be a PostgreSQL log line of one of the three
// destinations.
func Detect(prefix []byte) input.Verdict {
	scan := input.LineScan{SkipBOM: true, GiveUp: detectGiveUp}
	for l := range scan.Lines(prefix) {
		if l.Blank() || l.Text[0] == '\t' {
			continue
		}
		return detectLine(string(l.Text), l.Rest)
	}
	return scan.Undecided(prefix)
}

// detectLine judges the first significant line; rest is the input from
// that line on (a csvlog record may span lines).
func detectLine(line string, rest []byte) input.Verdict {
	if strings.HasPrefix(line, `{"timestamp":"`) {
		if strings.Contains(line, `"pid":`) && strings.Contains(line, `"error_severity":"`) {
			return input.Yes
		}
		return input.No
	}
	z := newZones(time.UTC, func(string) {})
	_, n := z.parseStamp(line)
	if n == 0 {
		return input.No
	}
	if n < len(line) && line[n] == ',' {
		return detectCSV(rest)
	}
	for _, m := range severityMarkers {
		if strings.Contains(line[n:], m) {
			return input.Yes
		}
	}
	return input.No
}

// detectCSV parses the first csvlog record.
func detectCSV(rest []byte) input.Verdict {
	r := csv.NewReader(bytes.NewReader(rest))
	r.FieldsPerRecord = -1
	fields, err := r.Read()
	if err != nil {
		if len(rest) >= detectGiveUp {
			return input.No
		}
		return input.NeedMore // possibly a record cut by the prefix
	}
	if len(fields) >= csvMinField && csvSeverities[fields[csvSeverity]] && len(fields[csvSeverity+1]) == 5 {
		return input.Yes
	}
	return input.No
}

// Open returns a streaming Source over the log; nothing is read until it is
// run.
func Open(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewInputSource(in, func(ctx context.Context, emit func(stream.Interval) error) error {
		return runLog(ctx, in, opts, emit)
	})
}

// runLog parses the log to its end (or, following it, until ctx is done).
func runLog(ctx context.Context, in source.Input, opts source.Options, emit func(stream.Interval) error) error {
	p := newParser(in, opts, emit)
	if !opts.Follow {
		if err := input.EachLine(ctx, in.Name, in.Reader, maxLineLen, p.Line); err != nil {
			return err
		}
		return p.End(false)
	}
	return followLog(ctx, in, p)
}

// followLog reads lines in a goroutine so that, while the log is quiet, the
// windows that have ended are still emitted (and a multi-line statement
// completed) on a timer.
func followLog(ctx context.Context, in source.Input, p *parser) error {
	type line struct {
		n       int
		text    string
		tooLong bool
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan line, 256)
	readErr := make(chan error, 1)
	go func() {
		readErr <- input.EachLine(ctx, in.Name, in.Reader, maxLineLen, func(n int, text string, tooLong bool) error {
			select {
			case ch <- line{n, text, tooLong}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		close(ch)
	}()
	width := time.Duration(p.bin.width)
	tick := time.NewTicker(min(width/2, time.Second))
	defer tick.Stop()
	quiet := false
	for {
		select {
		case l, ok := <-ch:
			if !ok {
				err := <-readErr
				if err != nil && ctx.Err() == nil {
					return err
				}
				return p.End(ctx.Err() != nil)
			}
			quiet = false
			if err := p.Line(l.n, l.text, l.tooLong); err != nil {
				return err
			}
		case now := <-tick.C:
			if quiet { // nothing for a tick: the pending statement is whole
				if err := p.finishPending(); err != nil {
					return err
				}
			}
			quiet = true
			// A window is closed once the clock is one more interval past
			// its end (log lines of other backends may come late).
			if err := p.bin.flushOlderThan(now.Add(-width)); err != nil {
				return err
			}
		}
	}
}
