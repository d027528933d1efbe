package pylatencymap

import (
	"strings"
	"time"

	"github.com/latscope/latscope/source"
)

const (
	day = 24 * time.Hour
	// anchorTolerance is how far the µs-extrapolated clock may drift from a
	// record's text date before the clock is re-anchored to the date; dates
	// with 1 s resolution (calibration_data.txt) stay within it.
	anchorTolerance = 2 * time.Second
	// maxDelta is the longest believable time between two records (AWR
	// snapshots are hours apart); longer ones are corrupt timestamps that
	// would stretch every time axis.
	maxDelta = 366 * day
)

// zoneOffsets maps the zone abbreviations that record dates carry to fixed
// offsets (in hours). Ambiguous ones such as IST are left out: they fall
// back to --tz with a warning.
var zoneOffsets = map[string]float64{
	"UTC": 0, "GMT": 0, "Z": 0, "UT": 0, "WET": 0,
	"WEST": 1, "BST": 1, "CET": 1, "MET": 1,
	"CEST": 2, "MEST": 2, "EET": 2, "SAST": 2,
	"EEST": 3, "MSK": 3,
	"EST": -5, "EDT": -4, "CST": -6, "CDT": -5,
	"MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
	"AKST": -9, "AKDT": -8, "HST": -10,
	"JST": 9, "KST": 9, "HKT": 8, "SGT": 8, "AWST": 8,
	"ACST": 9.5, "ACDT": 10.5, "AEST": 10, "AEDT": 11, "NZST": 12, "NZDT": 13,
}

// dateLayouts are the text dates record writers produce (zone removed):
// SQL*Plus systimestamp "26-AUG-13 04.26.51.653754 PM", Python/SystemTap
// ctime "Sat Mar 14 19:40:07 2015" (also with single-digit fields), DTrace
// "%Y" walltimestamp "2013 Aug 27 10:54:53", OraLatencyMap and ISO forms.
// Go accepts fractional seconds after any seconds field when parsing.
var dateLayouts = []string{
	"02-Jan-06 03.04.05 PM",
	"02-Jan-06 15.04.05",
	"02-Jan-2006 03.04.05 PM",
	"02-Jan-2006 15.04.05",
	"02-Jan-2006 15:04:05",
	"02-Jan-06 15:04:05",
	"Mon Jan 2 15:4:5 2006",
	"Jan 2 15:4:5 2006",
	"2006 Jan 2 15:4:5",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006/01/02 15:04:05",
}

// dateZone splits a trailing zone off a date: an abbreviation from
// zoneOffsets or a numeric offset (+02:00, +0200, -05). known is false when
// the date ends in an unknown abbreviation (returned in abbr).
func dateZone(fields []string) (rest []string, loc *time.Location, abbr string, known bool) {
	if len(fields) < 2 {
		return fields, nil, "", true
	}
	last := fields[len(fields)-1]
	rest = fields[:len(fields)-1]
	upper := strings.ToUpper(last)
	if h, ok := zoneOffsets[upper]; ok {
		return rest, time.FixedZone(upper, int(h*3600)), "", true
	}
	if off, ok := source.ParseUTCOffset(last); ok {
		return rest, time.FixedZone("", off), "", true
	}
	if isLetters(last) && len(last) >= 2 && len(last) <= 5 && upper == last && !isMeridiem(upper) {
		return rest, nil, last, false
	}
	return fields, nil, "", true
}

func isMeridiem(s string) bool { return s == "AM" || s == "PM" }

func isLetters(s string) bool {
	for _, c := range s {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return s != ""
}

// parseDateIn reads a record's text date; dates without a zone are read in
// loc. unknownZone names an abbreviation that was not understood (the date
// is then read in loc).
func parseDateIn(text string, loc *time.Location) (t time.Time, unknownZone string, ok bool) {
	fields := strings.Fields(text)
	rest, zone, abbr, known := dateZone(fields)
	if zone == nil {
		zone = loc
	}
	// Upper case: Go reads month and day names in any case, AM/PM only so.
	s := strings.ToUpper(strings.Join(rest, " "))
	for _, layout := range dateLayouts {
		if t, err := time.ParseInLocation(layout, s, zone); err == nil {
			if !known {
				return t, abbr, true
			}
			return t, "", true
		}
	}
	return time.Time{}, "", false
}

// moment is when a record was taken, as far as its timestamp line says.
type moment struct {
	usec    int64
	hasUsec bool
	date    time.Time
	hasDate bool
}

// elapsed returns how long after prev the record at cur was taken. The µs
// field is only used for differences: a negative one that wraps at midnight
// (a since-midnight clock, consistent with the dates when they exist) gets a
// day added; otherwise the text dates' difference is used. ok is false when
// neither tells a positive duration.
func elapsed(prev, cur moment) (time.Duration, bool) {
	textDiff := time.Duration(0)
	hasText := prev.hasDate && cur.hasDate
	if hasText {
		textDiff = cur.date.Sub(prev.date)
	}
	if prev.hasUsec && cur.hasUsec {
		d := cur.usec - prev.usec // both ≥ 0: no overflow
		if d > 0 && d <= int64(maxDelta/time.Microsecond) {
			return time.Duration(d) * time.Microsecond, true
		}
		if d < 0 && wrapsAtMidnight(prev.usec, cur.usec) {
			w := time.Duration(d)*time.Microsecond + day
			if !hasText || absDuration(w-textDiff) <= anchorTolerance {
				return w, true
			}
		}
	}
	if hasText && textDiff > 0 && textDiff <= maxDelta {
		return textDiff, true
	}
	return 0, false
}

// wrapsAtMidnight says two µs values look like a clock counting from
// midnight (both within one day) that wrapped from prev to cur.
func wrapsAtMidnight(prev, cur int64) bool {
	const dayUsec = int64(day / time.Microsecond)
	return prev < dayUsec && cur < prev
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// clock places records in time: wall-clock time anchored at the first
// parseable text date and advanced by µs deltas (re-anchored when it drifts
// from the dates), or relative time when no date parses.
type clock struct {
	now  time.Time // time of the last record used
	wall bool
	// emitted says intervals were emitted, so their clock kind is fixed: a
	// relative stream does not switch to wall-clock time halfway.
	emitted bool
}

// start places the first record of the stream.
func (c *clock) start(m moment, relativeStart time.Time) {
	if m.hasDate {
		c.now, c.wall = m.date, true
		return
	}
	c.now, c.wall = relativeStart, false
}

// canAnchor says a record's date may set the clock.
func (c *clock) canAnchor(m moment) bool { return m.hasDate && (c.wall || !c.emitted) }

// advance moves the clock to a record taken delta after the previous one
// and returns the record's time. The clock is re-anchored to a date ahead
// of it, never to one behind it: that would make intervals overlap (dates
// without a zone step back an hour when DST ends). behind reports such a
// date.
func (c *clock) advance(m moment, delta time.Duration) (end time.Time, behind bool) {
	end = c.now.Add(delta)
	switch {
	case !c.canAnchor(m):
	case !c.wall || m.date.Sub(end) > anchorTolerance:
		end, c.wall = m.date, true
	case end.Sub(m.date) > anchorTolerance:
		behind = true
	}
	c.now = end
	return end, behind
}
