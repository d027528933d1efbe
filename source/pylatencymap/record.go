package pylatencymap

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/latscope/latscope/hist"
)

// Record delimiters, compared case-insensitively after trimming.
const (
	beginMarker = "<begin record>"
	endMarker   = "<end record>"
)

func isMarker(line, marker string) bool { return strings.EqualFold(line, marker) }

// problem is a malformed line of the open record; problems are reported when
// the record is complete, so that a record that turns out to hold raw
// DTrace/SystemTap output produces one clear error instead of noise.
type problem struct {
	line   int
	reason string
}

// dataLine is one "<power-of-2 value>, <cumulative count>" line.
type dataLine struct {
	line         int
	value, count float64
}

// record is one record being read, holding only what its own lines said.
type record struct {
	line int // line of "<begin record>"

	usec    int64
	hasUsec bool
	date    time.Time
	hasDate bool

	label      string
	unit       hist.Unit
	datasource string         // as written, for messages
	bound      hist.BoundKind // from the datasource line

	data     []dataLine
	problems []problem
	// raw says the record holds raw DTrace/SystemTap histogram rows, whose
	// buckets are lower bounds.
	raw bool
	// negative counts events of raw negative buckets, which are dropped.
	negative float64
	// keyLine is a comma-less line held back: the key DTrace prints before
	// a histogram's header when one follows, else a malformed line.
	keyLine int
	// damaged says a bad line may have held counts of a bucket: the record's
	// cumulative counts may then be incomplete.
	damaged bool
}

// addProblem notes a malformed line; damaging marks the record incomplete.
func (r *record) addProblem(line int, damaging bool, format string, args ...any) {
	r.problems = append(r.problems, problem{line: line, reason: fmt.Sprintf(format, args...)})
	r.damaged = r.damaged || damaging
}

// headerKeys are the keys of the header lines a record may hold.
var headerKeys = map[string]bool{"timestamp": true, "label": true, "latencyunit": true, "datasource": true}

// headerKey returns the lower-cased key of a header line, "" for other lines.
func headerKey(line string) string {
	key, _, ok := strings.Cut(line, ",")
	if !ok {
		return ""
	}
	key = strings.ToLower(strings.TrimSpace(key))
	if !headerKeys[key] {
		return ""
	}
	return key
}

// parseHeader reads a header line into the record; dates are parsed by
// parseDate (it needs the options' zone and reports unknown zones).
func (r *record) parseHeader(n int, key, line string, parseDate func(string) (time.Time, bool)) {
	_, value, _ := strings.Cut(line, ",")
	value = strings.TrimSpace(value)
	switch key {
	case "timestamp":
		r.parseTimestamp(n, line, parseDate)
	case "label":
		r.label = strings.ToValidUTF8(value, string(utf8.RuneError))
	case "latencyunit":
		u, err := hist.ParseUnit(value)
		if err != nil {
			r.addProblem(n, false, "%v", err)
			return
		}
		r.unit = u
	case "datasource":
		b, ok := datasourceBound(value)
		if !ok {
			r.addProblem(n, false, "unknown datasource %q (want oracle, bpf, systemtap or dtrace)", value)
			return
		}
		r.datasource, r.bound = value, b
	}
}

// datasourceBound maps a datasource name to its bucket semantics.
func datasourceBound(name string) (hist.BoundKind, bool) {
	switch strings.ToLower(name) {
	case "oracle":
		return hist.UpperBound, true
	case "bpf", "systemtap", "dtrace":
		return hist.LowerBound, true
	}
	return hist.BoundUnknown, false
}

// parseTimestamp reads "timestamp, microsec, <usec>, <text date>"; the date
// is the rest of the line, so commas in it survive.
func (r *record) parseTimestamp(n int, line string, parseDate func(string) (time.Time, bool)) {
	f := strings.SplitN(line, ",", 4)
	if len(f) < 3 {
		r.addProblem(n, false, "timestamp line needs \"timestamp, microsec, <usec>, <date>\"")
		return
	}
	switch strings.ToLower(strings.TrimSpace(f[1])) {
	case "microsec", "musec", "usec":
	default:
		r.addProblem(n, false, "timestamp unit %q is not microsec", strings.TrimSpace(f[1]))
		return
	}
	if len(f) == 4 {
		if text := strings.TrimSpace(f[3]); text != "" {
			r.date, r.hasDate = parseDate(text)
		}
	}
	usec, err := strconv.ParseInt(strings.TrimSpace(f[2]), 10, 64)
	if err != nil || usec < 0 {
		r.addProblem(n, false, "timestamp %q is not a non-negative number of microseconds", strings.TrimSpace(f[2]))
		return
	}
	r.usec, r.hasUsec = usec, true
}

// parseData reads a "<power-of-2 value>, <cumulative count>" line. A value
// that is a number but no power of two can never be a bucket, so skipping it
// keeps records consistent; a line whose bucket cannot be told damages the
// record.
func (r *record) parseData(n int, line string) {
	vs, cs, ok := strings.Cut(line, ",")
	if !ok || strings.Contains(cs, ",") {
		r.addProblem(n, true, "not a \"<power-of-2 value>, <count>\" data line")
		return
	}
	vs, cs = strings.TrimSpace(vs), strings.TrimSpace(cs)
	v, err := strconv.ParseUint(vs, 10, 64)
	if err != nil {
		if x, ferr := strconv.ParseFloat(vs, 64); ferr == nil && !math.IsNaN(x) {
			r.addProblem(n, false, "bucket value %s is not a power of two", vs)
			return
		}
		r.addProblem(n, true, "bucket value %q is not a number", vs)
		return
	}
	if v&(v-1) != 0 {
		r.addProblem(n, false, "bucket value %d is not a power of two", v)
		return
	}
	c, err := strconv.ParseUint(cs, 10, 64)
	if err != nil {
		r.addProblem(n, true, "count %q is not a non-negative integer", cs)
		return
	}
	r.data = append(r.data, dataLine{line: n, value: float64(v), count: float64(c)})
}

// flushKeyLine reports a held comma-less line that no histogram header
// followed: it is no data line.
func (r *record) flushKeyLine() {
	if r.keyLine == 0 {
		return
	}
	r.addProblem(r.keyLine, true, "not a \"<power-of-2 value>, <count>\" data line")
	r.keyLine = 0
}
