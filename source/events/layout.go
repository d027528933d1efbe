package events

import "strings"

// layout says where a table's time and latency columns are.
type layout struct {
	line     int // header line, 0 for header-less pairs
	columns  []column
	timeCol  int // -1: no time column (plain iosnoop)
	timeRole int
	timeUnit int64 // ns per unit of the time column
	latCol   int
	latUnit  int64 // ns per unit named by the header, 0 if none
}

// pairsLayout is Gregg's header-less "time latency" input: time in seconds
// (trace2heatmap.pl's default --unitstime), latency in the default unit.
var pairsLayout = layout{columns: []column{{role: roleTime}, {role: roleLatency}}, timeCol: 0, timeRole: roleTime, timeUnit: 1e9, latCol: 1}

// parseHeader recognises a table header: capitalised column names with one
// latency column (LAT, LATENCY, DELTA, DURATION, ELAPSED) and, for rows to
// be placed in time, a time column (END preferred, then TIME/TIMESTAMP/TS,
// then START). A two-field header of known names may be in lower case
// ("time latency"). ok is false for anything else, such as prose.
func parseHeader(fields []string) (l layout, ok bool) {
	if len(fields) < 2 {
		return layout{}, false
	}
	l = layout{timeCol: -1, latCol: -1, columns: make([]column, len(fields))}
	upper := true
	for i, f := range fields {
		c, isName := parseColumn(f)
		if !isName {
			return layout{}, false
		}
		upper = upper && isUpperName(f)
		l.columns[i] = c
		switch c.role {
		case roleLatency:
			if l.latCol >= 0 {
				return layout{}, false // two latency columns: ambiguous
			}
			l.latCol, l.latUnit = i, c.unit
		case roleEnd, roleTime, roleStart:
			if l.timeCol < 0 || timeRank(c.role) < timeRank(l.timeRole) {
				l.timeCol, l.timeRole, l.timeUnit = i, c.role, c.unit
			}
		}
	}
	if l.latCol < 0 || (!upper && (len(fields) != 2 || l.timeCol < 0)) {
		return layout{}, false
	}
	if l.timeUnit == 0 {
		l.timeUnit = 1e9 // seconds, as trace2heatmap.pl assumes
	}
	return l, true
}

// timeRank orders time columns by preference: completion time first.
func timeRank(role int) int {
	switch role {
	case roleEnd:
		return 0
	case roleTime:
		return 1
	}
	return 2
}

// field returns column col of a row. Rows with as many fields as the header
// are read by position; in other rows (a COMM or FILENAME holding spaces)
// a column is found from the left when no text column precedes it, else
// from the right when none follows it. ok is false when neither works.
func (l *layout) field(fields []string, col int) (string, bool) {
	n := len(l.columns)
	if len(fields) == n {
		return fields[col], true
	}
	textBefore, textAfter := false, false
	for i, c := range l.columns {
		if c.role == roleText {
			textBefore = textBefore || i < col
			textAfter = textAfter || i > col
		}
	}
	switch {
	case !textBefore && col < len(fields):
		return fields[col], true
	case !textAfter && len(fields) >= n:
		return fields[len(fields)-(n-col)], true
	}
	return "", false
}

// startsRow says a line may be a row of the table: when the table's first
// column holds numbers (a time, a latency), so must the line's first field.
// Prose, "[...]" elisions and "^C" under a table are chatter.
func (l *layout) startsRow(fields []string) bool {
	switch l.columns[0].role {
	case roleTime, roleEnd, roleStart, roleLatency:
		return looksNumeric(fields[0])
	}
	return true
}

// headerText is the header's fields joined, for messages.
func headerText(fields []string) string { return strings.Join(fields, " ") }
