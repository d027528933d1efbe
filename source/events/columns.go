package events

import (
	"math"
	"strconv"
	"strings"

	"github.com/latscope/latscope/hist"
)

// Column roles a header can name.
const (
	roleOther = iota
	roleTime  // TIME, TIMESTAMP, TS: the event's time (completion for the tools that print it)
	roleEnd   // END: completion time (iosnoop -t)
	roleStart // START: issue time (iosnoop -s); the event is placed at start + latency
	roleLatency
	roleText // free text that may hold spaces (COMM, FILENAME...)
)

// columnRoles maps column names (upper case, unit removed) to roles.
var columnRoles = map[string]int{
	"TIME": roleTime, "TIMESTAMP": roleTime, "TS": roleTime,
	"END": roleEnd, "START": roleStart,
	"LAT": roleLatency, "LATENCY": roleLatency, "DELTA": roleLatency, "DURATION": roleLatency, "ELAPSED": roleLatency,
	"COMM": roleText, "TASK": roleText, "FILENAME": roleText, "FILE": roleText, "PATH": roleText,
	"NAME": roleText, "CMD": roleText, "COMMAND": roleText, "ARGS": roleText, "QUERY": roleText,
}

// unitNanos are the unit names a header may carry, in ns.
var unitNanos = map[string]int64{"s": 1e9, "ms": 1e6, "us": 1e3, "µs": 1e3, "μs": 1e3, "ns": 1}

// column is one header field: its role and the unit it names (0: none).
type column struct {
	role int
	unit int64 // ns per unit, 0 when the header names no unit
}

// parseColumn reads a header field: NAME(unit) ("LAT(ms)", "TIME(s)"),
// NAMEunit with a lower-case unit glued on ("TIMEus", "ENDs", "LATms") or
// NAME_unit ("lat_us"); names are matched in any case. ok is false for a
// field that cannot be a column name (digits first, punctuation).
func parseColumn(f string) (c column, ok bool) {
	name, unit := f, ""
	if open := strings.IndexByte(f, '('); open > 0 && strings.HasSuffix(f, ")") {
		name, unit = f[:open], f[open+1:len(f)-1]
		if _, known := unitNanos[unit]; !known {
			return column{}, isColumnName(name)
		}
	} else {
		for _, u := range []string{"us", "µs", "μs", "ms", "ns", "s"} {
			base, cut := strings.CutSuffix(f, u)
			base = strings.TrimSuffix(base, "_")
			if cut && columnRoles[strings.ToUpper(base)] != roleOther && columnRoles[strings.ToUpper(base)] != roleText {
				name, unit = base, u
				break
			}
		}
	}
	if !isColumnName(name) {
		return column{}, false
	}
	return column{role: columnRoles[strings.ToUpper(name)], unit: unitNanos[unit]}, true
}

// isColumnName says s looks like a column name: a letter, then letters,
// digits and _%/ (the fields iosnoop, biosnoop and bcc tools print).
func isColumnName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && (c < '0' || c > '9') && c != '_' && c != '%' && c != '/' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') }

// isUpperName says a header field is written in capitals (units aside), as
// the tools print their headers; prose is not.
func isUpperName(f string) bool {
	for i := 0; i < len(f); i++ {
		if c := f[i]; c >= 'A' && c <= 'Z' {
			return true
		} else if c >= 'a' && c <= 'z' {
			return false
		}
	}
	return false
}

// parseNanos reads a non-negative decimal time in the given unit (ns per
// unit) as ns, exactly for plain decimals ("5982800.302679"); exponent forms
// go through float64. ok is false for anything else or beyond maxTime.
func parseNanos(s string, unit int64) (int64, bool) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if !digitsOnly(intPart) || (hasDot && !digitsOnly(frac)) || (intPart == "" && frac == "") {
		return parseFloatNanos(s, unit)
	}
	var n int64
	for i := 0; i < len(intPart); i++ {
		if n > (maxTime/unit-9)/10 {
			return 0, false
		}
		n = n*10 + int64(intPart[i]-'0')
	}
	n *= unit
	// The fraction, digit by digit, down to 1 ns.
	for i, scale := 0, unit; i < len(frac) && scale > 1; i++ {
		scale /= 10
		n += int64(frac[i]-'0') * scale
	}
	return n, n <= maxTime
}

func parseFloatNanos(s string, unit int64) (int64, bool) {
	if s == "" || (s[0] < '0' || s[0] > '9') && s[0] != '.' {
		return 0, false // no signs, no "inf"/"nan"
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v*float64(unit) > float64(maxTime) || math.IsNaN(v) {
		return 0, false
	}
	return int64(math.Round(v * float64(unit))), true
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseLatency reads a latency: a finite non-negative decimal number.
func parseLatency(s string) (float64, bool) {
	if s == "" || (s[0] < '0' || s[0] > '9') && s[0] != '.' {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v > maxLatency {
		return 0, false
	}
	return v, true
}

// maxLatency keeps sums of absurd latencies finite.
const maxLatency = 1e30

// latencyUnit turns a header unit (ns per unit) into a histogram unit.
func latencyUnit(nanos int64) hist.Unit {
	switch nanos {
	case 1:
		return hist.Nanosecond
	case 1e3:
		return hist.Microsecond
	case 1e6:
		return hist.Millisecond
	case 1e9:
		return hist.Second
	}
	return 0
}

// looksNumeric says a field starts like a number: a row, not prose.
func looksNumeric(s string) bool {
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '.' && len(s) > 1 && s[1] >= '0' && s[1] <= '9')
}
