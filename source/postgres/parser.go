package postgres

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

const (
	// maxLineLen bounds one log line; longer lines are cut (their
	// statement text is cut to a series name anyway).
	maxLineLen = 1 << 20
	// maxCSVRecord bounds a csvlog record spread over lines.
	maxCSVRecord = 4 << 20
)

// logKind is one of the server's log_destination formats.
type logKind int

const (
	kindUnknown logKind = iota
	kindStderr
	kindCSV
	kindJSON
)

// parser turns log lines into statement durations for the binner.
type parser struct {
	name string
	diag *input.Diagnostics
	opts source.Options
	zone *zones
	bin  *binner
	kind logKind
	// add takes each statement: the binner's add, or the live source's
	// windows when it follows --log.
	add func(end time.Time, statement string, us float64, inAll, inOwn bool) error

	// stderr: the duration line whose statement may continue on
	// tab-indented lines.
	pending     bool
	pendEnd     time.Time
	pendUs      float64
	pendLine    int
	pendExecute bool
	pendText    strings.Builder

	// csvlog: a record whose quoted fields span lines.
	csvRec    strings.Builder
	csvLine   int
	csvQuotes int

	warnedLate bool

	// Statements counts the durations recorded (for tests and --stats).
	statements int
}

func newParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *parser {
	p := &parser{name: in.Name, diag: in.Diag, opts: opts}
	p.zone = newZones(opts.Loc(), func(z string) {
		p.warn("time zone %q of the log's timestamps is unknown: read as %s (use --tz to name the server's log_timezone)", z, opts.Loc())
	})
	p.bin = newBinner(in.Name, opts.Interval, emit, func() {
		if !p.warnedLate {
			p.warnedLate = true
			p.warn("statements logged more than one interval out of order are counted in the oldest open interval")
		}
	})
	p.add = p.bin.add
	return p
}

func (p *parser) warn(format string, args ...any) {
	if p.diag != nil {
		p.diag.Warn(p.name, format, args...)
	}
}

func (p *parser) malformed(line int, reason string) {
	if p.diag != nil {
		p.diag.Malformed(p.name, line, reason)
	}
}

// Line takes line n of the log.
func (p *parser) Line(n int, text string, tooLong bool) error {
	if p.kind == kindUnknown {
		p.kind = lineKind(text, p.zone)
		if p.kind == kindUnknown {
			if strings.TrimSpace(text) != "" {
				p.malformed(n, "not a PostgreSQL log line")
			}
			return nil
		}
	}
	switch p.kind {
	case kindStderr:
		return p.stderrLine(n, text, tooLong)
	case kindCSV:
		return p.csvLineIn(n, text, tooLong)
	default:
		return p.jsonLine(n, text, tooLong)
	}
}

// lineKind tells a log's format from its first line.
func lineKind(text string, z *zones) logKind {
	if strings.HasPrefix(text, "{") {
		return kindJSON
	}
	if _, n := z.parseStamp(text); n > 0 {
		if n < len(text) && text[n] == ',' {
			return kindCSV
		}
		return kindStderr
	}
	return kindUnknown
}

// End flushes the last statement and the open windows.
func (p *parser) End(cancelled bool) error {
	if err := p.finishPending(); err != nil {
		return err
	}
	if p.csvRec.Len() > 0 && !cancelled {
		p.malformed(p.csvLine, "csvlog record not terminated (unbalanced quotes)")
	}
	return p.bin.end()
}

// stderrLine handles "2026-11-22 04:49:45.310 UTC [19529] LOG:  duration:
// 0.269 ms  statement: select 1" and its tab-indented continuation lines.
func (p *parser) stderrLine(n int, text string, tooLong bool) error {
	if strings.HasPrefix(text, "\t") {
		if p.pending && p.pendText.Len() < maxStatementLen*4 {
			p.pendText.WriteByte('\n')
			p.pendText.WriteString(text[1:])
		}
		return nil
	}
	if err := p.finishPending(); err != nil {
		return err
	}
	end, sn := p.zone.parseStamp(text)
	if sn == 0 {
		if strings.TrimSpace(text) != "" {
			p.malformed(n, "no timestamp prefix (log_line_prefix must start with %m, %t or %n)")
		}
		return nil
	}
	i := strings.Index(text[sn:], "LOG:  duration: ")
	if i < 0 {
		return nil // another message
	}
	us, stmt, ok, reason := parseDuration(text[sn+i+len("LOG:  "):])
	if !ok {
		if reason != "" {
			p.malformed(n, reason)
		}
		return nil
	}
	p.pending, p.pendEnd, p.pendUs, p.pendLine = true, end, us, n
	p.pendText.Reset()
	p.pendText.WriteString(stmt)
	return nil
}

// finishPending records the stderr statement being assembled.
func (p *parser) finishPending() error {
	if !p.pending {
		return nil
	}
	p.pending = false
	return p.record(p.pendEnd, p.pendText.String(), p.pendUs)
}

// csvLineIn assembles a csvlog record (quoted fields may hold newlines)
// and handles it once its quotes balance.
func (p *parser) csvLineIn(n int, text string, tooLong bool) error {
	if p.csvRec.Len() == 0 {
		p.csvLine = n
	} else {
		p.csvRec.WriteByte('\n')
	}
	p.csvRec.WriteString(text)
	p.csvQuotes += strings.Count(text, `"`)
	if p.csvQuotes%2 != 0 {
		if p.csvRec.Len() > maxCSVRecord {
			p.malformed(p.csvLine, "csvlog record too long or quotes unbalanced")
			p.csvRec.Reset()
			p.csvQuotes = 0
		}
		return nil
	}
	rec := p.csvRec.String()
	p.csvRec.Reset()
	p.csvQuotes = 0
	return p.csvRecord(p.csvLine, rec)
}

// csv field positions (PostgreSQL 13+ writes 24-26 fields).
const (
	csvTime     = 0
	csvSeverity = 11
	csvMessage  = 13
	csvMinField = 23
)

func (p *parser) csvRecord(line int, rec string) error {
	r := csv.NewReader(strings.NewReader(rec))
	r.FieldsPerRecord = -1
	fields, err := r.Read()
	if err != nil || len(fields) < csvMinField {
		p.malformed(line, fmt.Sprintf("not a csvlog record (%d fields)", len(fields)))
		return nil
	}
	return p.message(line, fields[csvTime], fields[csvSeverity], fields[csvMessage])
}

// jsonEntry is the part of a jsonlog line latency needs.
type jsonEntry struct {
	Timestamp string `json:"timestamp"`
	Severity  string `json:"error_severity"`
	Message   string `json:"message"`
}

func (p *parser) jsonLine(n int, text string, tooLong bool) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if tooLong {
		p.malformed(n, "jsonlog line too long")
		return nil
	}
	var e jsonEntry
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		p.malformed(n, "not a jsonlog line: "+err.Error())
		return nil
	}
	return p.message(n, e.Timestamp, e.Severity, e.Message)
}

// message handles one csvlog/jsonlog entry.
func (p *parser) message(line int, stamp, severity, msg string) error {
	if severity != "LOG" || !strings.HasPrefix(msg, "duration: ") {
		return nil
	}
	end, n := p.zone.parseStamp(stamp)
	if n == 0 || n != len(stamp) {
		p.malformed(line, "bad log_time "+strconv.Quote(stamp))
		return nil
	}
	us, stmt, ok, reason := parseDuration(msg)
	if !ok {
		if reason != "" {
			p.malformed(line, reason)
		}
		return nil
	}
	return p.record(end, stmt, us)
}

// parseDuration reads "duration: 0.269 ms  statement: select 1" or
// "... execute P_1: UPDATE ...". ok is false for lines without a
// statement to time: log_duration's bare "duration: 1.0 ms", and the
// extended protocol's parse and bind steps (their time is not the
// statement's execution; counting them would count a statement thrice).
// reason says why a line is malformed ("" when it is simply skipped).
func parseDuration(msg string) (us float64, stmt string, ok bool, reason string) {
	rest := strings.TrimPrefix(msg, "duration: ")
	num, after, found := strings.Cut(rest, " ms")
	if !found {
		return 0, "", false, "duration without \" ms\""
	}
	ms, err := strconv.ParseFloat(num, 64)
	if err != nil || ms < 0 || ms > 1e12 {
		return 0, "", false, "bad duration " + strconv.Quote(num)
	}
	after, found = strings.CutPrefix(after, "  ")
	if !found {
		return 0, "", false, "" // log_duration: no statement
	}
	switch {
	case strings.HasPrefix(after, "statement: "):
		stmt = after[len("statement: "):]
	case strings.HasPrefix(after, "execute "):
		_, s, found := strings.Cut(after, ": ")
		if !found {
			return 0, "", false, "execute without a statement"
		}
		stmt = s
	default:
		return 0, "", false, "" // parse, bind, fastpath function call
	}
	return ms * 1000, stmt, true, ""
}

// record bins one statement.
func (p *parser) record(end time.Time, stmt string, us float64) error {
	name := Normalize(stmt)
	keepAll, keepOne := p.opts.KeepEvent(AllStatements), p.opts.KeepEvent(name)
	if !keepAll && !keepOne {
		return nil
	}
	p.statements++
	return p.add(end, name, us, keepAll, keepOne)
}
