package oracle

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source/awr"
)

// histogramRows maps the rows of a GV$EVENT_HISTOGRAM(_MICRO) poll
// (histogramQueryMicro / histogramQueryMilli) to awr.Rows. SAMPLE_TIME
// carries the server's offset; STARTUP_TIME, a DATE, is read in the zone of
// the sample time (the same server clock); loc is for texts without offset.
// Rows are numbered from firstLine+1 for messages. Rows whose values cannot
// be read are left out; bad then says how many and why the first was.
func histogramRows(r *rows, loc *time.Location, firstLine int) (out []awr.Row, bad string) {
	cols, err := histogramColumns(r)
	if err != nil {
		return nil, err.Error()
	}
	var skipped int
	for i, v := range r.values {
		row, reason := cols.row(v, loc, firstLine+i+1)
		if reason != "" {
			if skipped++; skipped == 1 {
				bad = reason
			}
			continue
		}
		out = append(out, row)
	}
	if skipped > 0 {
		bad = fmt.Sprintf("%d of %d histogram rows skipped (first: %s)", skipped, len(r.values), bad)
	}
	return out, bad
}

// histColumns are the indexes of the columns a histogram row is read from
// (−1: absent and optional).
type histColumns struct {
	time, begin, startup, dbid, inst, event, bound, count int
	unit                                                  hist.Unit
}

// histogramColumns finds the columns of a poll result.
func histogramColumns(r *rows) (histColumns, error) {
	c := histColumns{time: r.col("SAMPLE_TIME"), begin: -1, startup: r.col("STARTUP_TIME"), dbid: -1,
		inst: r.col("INST_ID"), event: r.col("EVENT"), bound: r.col("WAIT_TIME_MICRO"), count: r.col("WAIT_COUNT"),
		unit: hist.Microsecond}
	if c.bound < 0 {
		c.bound, c.unit = r.col("WAIT_TIME_MILLI"), hist.Millisecond
	}
	if c.time < 0 || c.event < 0 || c.bound < 0 || c.count < 0 {
		return c, fmt.Errorf("histogram query result lacks SAMPLE_TIME, EVENT, WAIT_TIME_MICRO/MILLI or WAIT_COUNT (has %s)",
			strings.Join(r.columns, ", "))
	}
	return c, nil
}

// row reads one result row; reason says why it cannot be read.
func (c histColumns) row(v []any, loc *time.Location, line int) (awr.Row, string) {
	r := awr.Row{Line: line, Unit: c.unit, Event: asString(v[c.event])}
	var ok bool
	if r.End, ok = asTime(v[c.time], loc); !ok {
		return r, fmt.Sprintf("row %d: unreadable time %q", line, asString(v[c.time]))
	}
	if r.Bound, ok = asFloat(v[c.bound]); !ok {
		return r, fmt.Sprintf("row %d: unreadable bound %q", line, asString(v[c.bound]))
	}
	if r.Count, ok = asFloat(v[c.count]); !ok {
		return r, fmt.Sprintf("row %d: unreadable WAIT_COUNT %q", line, asString(v[c.count]))
	}
	if c.inst >= 0 {
		r.Instance = asString(v[c.inst])
	}
	if c.dbid >= 0 {
		r.DBID = asString(v[c.dbid])
	}
	if c.startup >= 0 && v[c.startup] != nil {
		r.Startup = asString(v[c.startup])
		r.StartupAt, _ = asTime(v[c.startup], r.End.Location())
	}
	if c.begin >= 0 && v[c.begin] != nil {
		r.Begin, _ = asTime(v[c.begin], r.End.Location())
	}
	return r, ""
}

// asTime reads a time the driver returned (time.Time) or a text printed by
// the queries (YYYY-MM-DD HH24:MI:SS[.FF][TZH:TZM]) or by Oracle's default
// NLS formats; a text without offset is in loc.
func asTime(v any, loc *time.Location) (time.Time, bool) {
	if t, ok := v.(time.Time); ok {
		return t, true
	}
	if v == nil {
		return time.Time{}, false
	}
	return awr.ParseTime(asString(v), loc)
}

// asFloat reads a number: NUMBER as the driver returns it, or a TM9 text.
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case string, []byte:
		f, err := strconv.ParseFloat(strings.TrimSpace(asString(x)), 64)
		return f, err == nil
	}
	return 0, false
}
