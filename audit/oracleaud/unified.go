package oracleaud

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
)

// DetectUnifiedCSV recognises a CSV export of UNIFIED_AUDIT_TRAIL: its
// first non-blank line is a header naming ACTION_NAME and EVENT_TIMESTAMP
// or EVENT_TIMESTAMP_UTC.
func DetectUnifiedCSV(prefix []byte) input.Verdict {
	scan := input.LineScan{SkipBOM: true, GiveUp: 16 << 10}
	for l := range scan.Lines(prefix) {
		if l.Blank() {
			continue
		}
		if _, ok := unifiedColumns(string(l.Text)); ok {
			return input.Yes
		}
		return input.No
	}
	return scan.Undecided(prefix)
}

// unifiedColumns reads a header line; ok when it is UNIFIED_AUDIT_TRAIL's.
func unifiedColumns(line string) ([]string, bool) {
	line, _ = validText(line)
	cols, ok := splitCSV(strings.TrimPrefix(line, "\xef\xbb\xbf"), nil)
	if !ok {
		return nil, false
	}
	for i := range cols {
		cols[i] = strings.ToUpper(strings.TrimSpace(cols[i]))
	}
	hasTime := slices.Contains(cols, "EVENT_TIMESTAMP_UTC") || slices.Contains(cols, "EVENT_TIMESTAMP")
	return cols, hasTime && slices.Contains(cols, "ACTION_NAME")
}

// ReadUnifiedCSV reads UNIFIED_AUDIT_TRAIL rows exported as CSV, by
// SQL*Plus or SQLcl (`set markup csv on`) or SQL Developer: a header line,
// then one row per record (quoted values may span lines). The columns are
// found by name, so any selection of them in any order reads. SQL*Plus's
// blank lines, repeated headers and "N rows selected." are skipped.
func ReadUnifiedCSV(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	ur := &unifiedReader{name: name, diag: diag, warn: input.NewOnceWarnings(diag, name), fn: fn}
	if err := input.EachLine(ctx, name, r, maxLineBytes, ur.line); err != nil {
		return err
	}
	if ur.row.Len() > 0 {
		diag.Malformed(name, ur.rowLine, "truncated row: a quoted value never closed before the end of the input")
	}
	return nil
}

type unifiedReader struct {
	name string
	diag *input.Diagnostics
	warn *input.OnceWarnings
	fn   func(Record) error

	columns []string
	header  string
	layout  int      // index in unifiedTimeLayouts of the last one that read
	values  []string // the last row's, reused
	// row collects the lines of a row whose quoted value spans lines.
	row     strings.Builder
	rowLine int
	quotes  int
	skipped bool
}

func (ur *unifiedReader) line(n int, text string, tooLong bool) error {
	if ur.row.Len() == 0 {
		ur.rowLine, ur.quotes, ur.skipped = n, 0, false
	} else {
		ur.row.WriteByte('\n')
	}
	if tooLong || ur.row.Len()+len(text) > maxRecordBytes {
		if !ur.skipped {
			ur.diag.Malformed(ur.name, n, fmt.Sprintf("row longer than %d bytes: skipped", maxLineBytes))
		}
		ur.skipped = true
	} else if !ur.skipped {
		ur.row.WriteString(text)
	}
	ur.quotes += strings.Count(text, `"`)
	if ur.quotes%2 == 1 {
		return nil // a quoted value goes on on the next line
	}
	row := ur.row.String()
	ur.row.Reset()
	if ur.skipped {
		return nil
	}
	return ur.take(row)
}

// take reads one complete row.
func (ur *unifiedReader) take(row string) error {
	trimmed := strings.TrimSpace(row)
	switch {
	case trimmed == "" || isSQLPlusFeedback(trimmed):
		return nil
	case ur.columns == nil:
		cols, ok := unifiedColumns(row)
		if !ok {
			ur.diag.Malformed(ur.name, ur.rowLine, "not a UNIFIED_AUDIT_TRAIL header (ACTION_NAME and EVENT_TIMESTAMP[_UTC] needed): "+fmt.Sprintf("%q", clip(row)))
			return nil
		}
		ur.columns, ur.header = cols, row
		if !slices.Contains(cols, "EVENT_TIMESTAMP_UTC") {
			ur.warn.Warn("zone", "no EVENT_TIMESTAMP_UTC column: EVENT_TIMESTAMP is in the exporting session's time zone, read as UTC unless it gives an offset")
		}
		return nil
	case row == ur.header:
		return nil
	}
	values, ok := splitCSV(row, ur.values[:0])
	ur.values = values
	if !ok || len(values) != len(ur.columns) {
		ur.diag.Malformed(ur.name, ur.rowLine, fmt.Sprintf("row of %d fields, the header has %d", len(values), len(ur.columns)))
		return nil
	}
	return ur.fn(ur.record(values))
}

// isSQLPlusFeedback matches "12 rows selected." and "no rows selected".
func isSQLPlusFeedback(s string) bool {
	return strings.HasSuffix(s, "rows selected.") || strings.HasSuffix(s, "row selected.") || s == "no rows selected"
}

// record maps a row onto a Record.
func (ur *unifiedReader) record(values []string) Record {
	rec := Record{Source: ur.name, Line: ur.rowLine, Format: FormatUnifiedCSV}
	var local string
	for i, col := range ur.columns {
		v := recordText(values[i], ur.rowLine, ur.warn)
		switch col {
		case "EVENT_TIMESTAMP_UTC":
			rec.Time = ur.time(v, time.UTC)
		case "EVENT_TIMESTAMP":
			local = v
		case "OS_USERNAME":
			rec.ClientUser = v
		case "USERHOST":
			rec.Userhost, rec.Process.Host = v, v
		case "TERMINAL":
			rec.ClientTerminal = v
		case "DBID":
			rec.DBID = v
		case "SESSIONID":
			rec.SessionID = v
		case "DBUSERNAME":
			rec.DBUser = v
		case "OS_PROCESS":
			rec.Process.PID = leadingNumber(v)
		case "ACTION_NAME":
			rec.Action = v
		case "RETURN_CODE":
			rec.Status = v
		case "SYSTEM_PRIVILEGE_USED":
			rec.Privilege = v
		case "SQL_TEXT":
			rec.SQLText = v
		default:
			if col == "AUTHENTICATION_TYPE" {
				rec.ClientAddress = hostOfAddress(v)
			}
			if v != "" {
				rec.setExtra(col, v)
			}
		}
	}
	if rec.Time.IsZero() && local != "" {
		rec.Time = ur.time(local, time.UTC)
	}
	rec.inUTC()
	rec.Kind = Classify(rec.Action, 0)
	if rec.Kind == KindOther && strings.EqualFold(rec.Action, "ALTER DATABASE") {
		rec.Kind = Classify(rec.SQLText, actionAlterDatabase)
	}
	return rec
}

// Timestamp layouts of the exports: ISO (SQLcl, NLS set to ISO), and
// Oracle's default NLS_TIMESTAMP_FORMAT 'DD-MON-RR HH.MI.SSXFF AM', with or
// without a zone.
var unifiedTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05.999999999 -07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"02-Jan-06 03.04.05.999999999 PM",
	"02-Jan-06 03.04.05.999999999 PM -07:00",
	"02-Jan-2006 03.04.05.999999999 PM",
}

func (ur *unifiedReader) time(v string, zone *time.Location) time.Time {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}
	}
	// An export writes every timestamp alike: the layout that read the
	// last one is tried first.
	if t, err := time.ParseInLocation(unifiedTimeLayouts[ur.layout], v, zone); err == nil {
		return t
	}
	for i, layout := range unifiedTimeLayouts {
		if t, err := time.ParseInLocation(layout, v, zone); err == nil {
			ur.layout = i
			return t
		}
	}
	ur.diag.Malformed(ur.name, ur.rowLine, fmt.Sprintf("timestamp %q in no known layout (row kept without a time)", clip(v)))
	return time.Time{}
}

// leadingNumber reads the digits OS_PROCESS starts with ("12345" or, for
// a thread of a multithreaded process, "12345_12346").
func leadingNumber(s string) int {
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	return atoi(s[:end])
}

// splitCSV splits one CSV row (RFC 4180: fields quoted with "", "" inside
// for a quote, quoted fields may hold commas and newlines), appending the
// fields to into. ok is false when a quote is never closed.
func splitCSV(row string, into []string) (fields []string, ok bool) {
	fields = into
	var b strings.Builder
	for i := 0; ; {
		if i < len(row) && row[i] == '"' {
			// Most quoted values hold no quote: they are a slice of the row.
			if j := strings.IndexByte(row[i+1:], '"'); j >= 0 && (i+j+2 == len(row) || row[i+j+2] == ',') {
				fields = append(fields, row[i+1:i+1+j])
				if i+j+2 == len(row) {
					return fields, true
				}
				i += j + 3
				continue
			}
			b.Reset()
			closed := false
			for i++; i < len(row); i++ {
				if row[i] != '"' {
					b.WriteByte(row[i])
					continue
				}
				if i+1 < len(row) && row[i+1] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				closed = true
				i++
				break
			}
			if !closed {
				return fields, false
			}
			field := b.String()
			// Text between the closing quote and the comma is kept,
			// as encoding/csv's LazyQuotes does.
			j := strings.IndexByte(row[i:], ',')
			if j < 0 {
				return append(fields, field+row[i:]), true
			}
			fields = append(fields, field+row[i:i+j])
			i += j + 1
			continue
		}
		j := strings.IndexByte(row[i:], ',')
		if j < 0 {
			return append(fields, row[i:]), true
		}
		fields = append(fields, row[i:i+j])
		i += j + 1
	}
}
