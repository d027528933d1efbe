package awr

import (
	"errors"
	"strings"

	"github.com/latscope/latscope/hist"
)

// role is what a column means to latscope; columns it does not know (such as
// WAIT_CLASS, EVENT_ID, LAST_UPDATE_TIME) are ignored.
type role int

const (
	roleNone role = iota
	roleTime
	roleBegin
	roleStartup
	roleDBID
	roleInstance
	roleEvent
	roleBound
	roleCount
	numRoles
)

// Column names by role, most specific first: when a header holds several
// names of one role the first listed wins.
var (
	timeColumns     = []string{"end_interval_time", "sample_time", "snap_time", "poll_time", "sample_timestamp", "systimestamp", "sysdate", "timestamp", "time"}
	beginColumns    = []string{"begin_interval_time"}
	startupColumns  = []string{"startup_time"}
	dbidColumns     = []string{"dbid"}
	instanceColumns = []string{"instance_number", "inst_id"}
	eventColumns    = []string{"event_name", "event"}
	boundColumns    = []string{"wait_time_micro", "wait_time_milli"}
	countColumns    = []string{"wait_count"}
)

var columnsByRole = [numRoles][]string{
	roleTime: timeColumns, roleBegin: beginColumns, roleStartup: startupColumns, roleDBID: dbidColumns,
	roleInstance: instanceColumns, roleEvent: eventColumns, roleBound: boundColumns, roleCount: countColumns,
}

// header is a parsed column-heading line.
type header struct {
	names []string // lower case, as in the input
	// col[r] is the index of the column of role r, −1 when absent.
	col [numRoles]int
	// unit is the bucket unit the bound column's name gives.
	unit hist.Unit
	// layout says how data lines split into fields.
	layout layout
}

// layout splits a data line into fields.
type layout struct {
	sep   byte     // CSV separator; 0 for a fixed-width spool
	spans [][2]int // fixed-width column byte ranges [start, end)
}

// Errors about headers.
var errNoTimeColumn = errors.New("the header has no time column (END_INTERVAL_TIME for AWR exports, SAMPLE_TIME for " +
	"V$ polls): without snapshot times there are no intervals; join DBA_HIST_SNAPSHOT as sql/awr_event_histogram.sql does")

// newHeader recognises column names: it needs an event, a bound and a count
// column; every name must be a plain SQL identifier. ok is false otherwise.
func newHeader(names []string, lay layout) (h header, ok bool) {
	if len(names) < 3 {
		return header{}, false
	}
	h.names = make([]string, len(names))
	for i, n := range names {
		if !isIdentifier(n) {
			return header{}, false
		}
		h.names[i] = strings.ToLower(n)
	}
	for r := range numRoles {
		h.col[r] = -1
		for _, want := range columnsByRole[r] {
			if i := indexOf(h.names, want); i >= 0 {
				h.col[r] = i
				break
			}
		}
	}
	if h.col[roleEvent] < 0 || h.col[roleBound] < 0 || h.col[roleCount] < 0 {
		return header{}, false
	}
	h.unit = hist.Millisecond
	if h.names[h.col[roleBound]] == "wait_time_micro" {
		h.unit = hist.Microsecond
	}
	h.layout = lay
	return h, true
}

// isAWR says the header is the DBA_HIST_SNAPSHOT join (not a V$ poll).
func (h header) isAWR() bool {
	return h.col[roleTime] >= 0 && h.names[h.col[roleTime]] == "end_interval_time"
}

func indexOf(names []string, want string) int {
	for i, n := range names {
		if n == want {
			return i
		}
	}
	return -1
}

// isIdentifier says s is an unquoted SQL identifier (letters, digits, _, $, #,
// starting with a letter or underscore).
func isIdentifier(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '$' || c == '#'):
		default:
			return false
		}
	}
	return true
}

// csvSeparators are the separators CSV exports use, in the order tried.
var csvSeparators = []byte{',', ';', '\t', '|'}

// parseCSVHeader recognises a CSV heading line (SQL*Plus `set markup csv
// on`, SQLcl `set sqlformat csv`, SQL Developer exports, `set colsep`).
func parseCSVHeader(line string) (header, bool) { return csvHeading(line, newHeader) }

// csvHeading splits a heading line at each separator in turn and returns
// the first split that recognise accepts: the histogram exports' and the
// system-event extract's headings are found alike.
func csvHeading[H any](line string, recognise func([]string, layout) (H, bool)) (H, bool) {
	for _, sep := range csvSeparators {
		if strings.IndexByte(line, sep) < 0 {
			continue
		}
		fields, err := splitCSV(line, sep, nil)
		if err != nil {
			continue
		}
		if h, ok := recognise(fields, layout{sep: sep}); ok {
			return h, true
		}
	}
	var none H
	return none, false
}

// spoolHeaderCandidate says line may be the heading line of a fixed-width
// SQL*Plus spool; it is one when the next line is its underline.
func spoolHeaderCandidate(line string) bool {
	if strings.IndexAny(line, ",;\t|\"") >= 0 {
		return false
	}
	_, ok := newHeader(strings.Fields(line), layout{})
	return ok
}

// parseSpoolHeader reads a heading line and its underline of dashes: each
// group of dashes gives a column's byte range, and the heading text above it
// the column's name.
func parseSpoolHeader(headLine, underline string) (header, bool) {
	return spoolHeading(headLine, underline, 3, newHeader)
}

// spoolHeading reads a spool heading of at least minCols columns with
// recognise.
func spoolHeading[H any](headLine, underline string, minCols int, recognise func([]string, layout) (H, bool)) (H, bool) {
	spans := dashSpans(underline)
	if len(spans) < minCols {
		var none H
		return none, false
	}
	names := make([]string, len(spans))
	for i, sp := range spans {
		names[i] = strings.TrimSpace(cut(headLine, sp, i == len(spans)-1))
	}
	return recognise(names, layout{spans: spans})
}

// dashSpans returns the byte ranges of the groups of dashes of an underline
// line, or nil when the line holds anything but dashes and blanks.
func dashSpans(line string) [][2]int {
	var spans [][2]int
	start := -1
	for i := 0; i <= len(line); i++ {
		dash := i < len(line) && line[i] == '-'
		if i < len(line) && !dash && line[i] != ' ' {
			return nil
		}
		switch {
		case dash && start < 0:
			start = i
		case !dash && start >= 0:
			spans = append(spans, [2]int{start, i})
			start = -1
		}
	}
	return spans
}

// isUnderline says a line holds only dashes, separators and blanks, with at
// least one dash: a spool underline, also between CSV-like `set colsep` rows.
func isUnderline(line string) bool {
	dashes := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '-':
			dashes++
		case ' ', '\t', ',', ';', '|':
		default:
			return false
		}
	}
	return dashes > 0
}

// cut returns the part of line in span; the last column takes the rest of
// the line (a value wider than its underline, e.g. with trimspool off).
func cut(line string, sp [2]int, last bool) string {
	if sp[0] >= len(line) {
		return ""
	}
	if last || sp[1] > len(line) {
		return line[sp[0]:]
	}
	return line[sp[0]:sp[1]]
}

// split returns the fields of a data line (appended to buf[:0]).
func (l layout) split(line string, buf []string) ([]string, error) {
	if l.sep != 0 {
		return splitCSV(line, l.sep, buf)
	}
	out := buf[:0]
	for i, sp := range l.spans {
		out = append(out, strings.TrimSpace(cut(line, sp, i == len(l.spans)-1)))
	}
	return out, nil
}

var (
	errUnterminatedQuote = errors.New("unterminated quoted field")
	errTextAfterQuote    = errors.New("text after a closing quote")
)

// splitCSV splits one CSV line: fields may be quoted with "" (a doubled
// quote inside stands for one) and are trimmed of blanks (no value latscope
// reads has leading or trailing blanks).
func splitCSV(line string, sep byte, buf []string) ([]string, error) {
	out := buf[:0]
	i := 0
	for {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i < len(line) && line[i] == '"' {
			field, next, err := quotedField(line, i+1, sep)
			if err != nil {
				return nil, err
			}
			out = append(out, strings.TrimSpace(field)) // SQL*Plus may pad values to the column width
			i = next
		} else {
			end := strings.IndexByte(line[i:], sep)
			if end < 0 {
				out = append(out, strings.TrimSpace(line[i:]))
				return out, nil
			}
			out = append(out, strings.TrimSpace(line[i:i+end]))
			i += end
		}
		if i >= len(line) {
			return out, nil
		}
		i++ // the separator
	}
}

// quotedField reads a quoted field whose text starts at i; next is the index
// of the separator after it (or len(line)).
func quotedField(line string, i int, sep byte) (field string, next int, err error) {
	var b strings.Builder
	for {
		q := strings.IndexByte(line[i:], '"')
		if q < 0 {
			return "", 0, errUnterminatedQuote
		}
		b.WriteString(line[i : i+q])
		i += q + 1
		if i < len(line) && line[i] == '"' {
			b.WriteByte('"')
			i++
			continue
		}
		break
	}
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i < len(line) && line[i] != sep {
		return "", 0, errTextAfterQuote
	}
	return b.String(), i, nil
}
