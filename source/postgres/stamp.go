package postgres

import (
	"strconv"
	"time"

	"github.com/latscope/latscope/source"
)

// Timestamps are accepted from 1970 to 2200, so that window arithmetic in
// nanoseconds never overflows.
const (
	minYear  = 1970
	maxYear  = 2200
	maxEpoch = 7258118400 // 2200-01-01
)

// zones resolves the zone names of log timestamps: log_timezone prints an
// abbreviation ("UTC", "CET") or a numeric offset ("+03", "-0530").
type zones struct {
	loc     *time.Location
	cache   map[string]*time.Location
	unknown func(name string) // called once per name not resolvable
}

func newZones(loc *time.Location, unknown func(string)) *zones {
	return &zones{loc: loc, cache: map[string]*time.Location{}, unknown: unknown}
}

// lookup returns the location of a zone name.
func (z *zones) lookup(name string, approx time.Time) *time.Location {
	if l, ok := z.cache[name]; ok {
		return l
	}
	l := z.resolve(name, approx)
	z.cache[name] = l
	return l
}

func (z *zones) resolve(name string, approx time.Time) *time.Location {
	switch name {
	case "UTC", "GMT", "Z", "UCT":
		return time.UTC
	}
	if off, ok := source.ParseUTCOffset(name); ok {
		return time.FixedZone(name, off)
	}
	// An abbreviation: right when it is the --tz zone's (at that date).
	if abbr, _ := approx.In(z.loc).Zone(); abbr == name {
		return z.loc
	}
	if l, err := time.LoadLocation(name); err == nil {
		return l
	}
	z.unknown(name)
	return z.loc
}

// parseStamp reads a timestamp at the start of s: %m "2026-11-22
// 04:49:45.225 UTC", %t "2026-11-22 04:49:45 UTC" or %n "1763786985.225".
// It returns the time and the length consumed (0: no timestamp).
func (z *zones) parseStamp(s string) (time.Time, int) {
	if t, n := parseEpoch(s); n > 0 {
		return t, n
	}
	if len(s) < 21 || s[10] != ' ' {
		return time.Time{}, 0
	}
	d, ok := source.ParseDateTime(s)
	if !ok || d.Year < minYear || d.Year > maxYear {
		return time.Time{}, 0
	}
	i, nanos := 19, 0
	if s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) && j-i <= 9 {
			nanos = nanos*10 + int(s[j]-'0')
			j++
		}
		if j == i+1 {
			return time.Time{}, 0
		}
		for k := j - i - 1; k < 9; k++ {
			nanos *= 10
		}
		i = j
	}
	if i >= len(s) || s[i] != ' ' {
		return time.Time{}, 0
	}
	zoneStart := i + 1
	j := zoneStart
	for j < len(s) && s[j] != ' ' && s[j] != ',' && s[j] != '"' {
		j++
	}
	if j == zoneStart || j-zoneStart > 8 {
		return time.Time{}, 0
	}
	loc := z.lookup(s[zoneStart:j], d.Time(nanos, time.UTC))
	return d.Time(nanos, loc), j
}

// parseEpoch reads %n: seconds since the epoch with milliseconds,
// followed by a space.
func parseEpoch(s string) (time.Time, int) {
	i := skipDigits(s, 0)
	if i < 9 || i > 11 || i+4 >= len(s) || s[i] != '.' {
		return time.Time{}, 0
	}
	j := skipDigits(s, i+1)
	if j != i+4 || j >= len(s) || s[j] != ' ' {
		return time.Time{}, 0
	}
	secs, err1 := strconv.ParseInt(s[:i], 10, 64)
	ms, err2 := strconv.Atoi(s[i+1 : j])
	if err1 != nil || err2 != nil || secs > maxEpoch {
		return time.Time{}, 0
	}
	return time.Unix(secs, int64(ms)*int64(time.Millisecond)).UTC(), j
}
