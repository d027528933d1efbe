package oracle10046

import (
	"time"

	"github.com/latscope/latscope/source"
)

// parseStamp reads the timestamp of a "***" line:
//
//	2008-02-29 07:43:11.461                   (up to 12.1: local time)
//	2023-04-17T20:30:29.555939+00:00 (PDB(3)) (12.2 on: ISO with offset)
//	2023-05-19T05:28:00.339263 (TESTPDB(11))  (ISO without offset: local)
//
// Anything after a space that follows the timestamp is ignored. Times
// without a UTC offset are in loc; zone returns the location of an offset
// in seconds east of UTC.
func parseStamp(b []byte, loc *time.Location, zone func(int) *time.Location) (time.Time, bool) {
	const minLen = len("2006-01-02 15:04:05")
	d, ok := source.ParseDateTime(b)
	if !ok || d.Year < 1900 { // years before 1900 are damage (and year 1 would make a zero time)
		return time.Time{}, false
	}
	rest := b[minLen:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		scale := 100000000
		for n < len(rest) && isDigit(rest[n]) {
			if n <= 9 {
				nsec += int(rest[n]-'0') * scale
				scale /= 10
			}
			n++
		}
		if n == 1 {
			return time.Time{}, false
		}
		rest = rest[n:]
	}
	if len(rest) > 0 {
		switch rest[0] {
		case 'Z':
			loc, rest = time.UTC, rest[1:]
		case '+', '-':
			off, n, ok := parseOffset(rest)
			if !ok {
				return time.Time{}, false
			}
			loc, rest = zone(off), rest[n:]
		}
	}
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
		return time.Time{}, false
	}
	t := d.Time(nsec, loc)
	if t.Day() != d.Day && d.Second < 60 {
		return time.Time{}, false // February 30th and the like
	}
	return t, true
}

// parseOffset reads "+HH:MM" or "+HHMM" (or with '-') into seconds east of
// UTC and the bytes used.
func parseOffset(b []byte) (offset, n int, ok bool) {
	sign := 1
	if b[0] == '-' {
		sign = -1
	}
	if len(b) < 5 {
		return 0, 0, false
	}
	h, okh := digits(b[1:3])
	mm, n := b[3:5], 5
	if b[3] == ':' {
		if len(b) < 6 {
			return 0, 0, false
		}
		mm, n = b[4:6], 6
	}
	m, okm := digits(mm)
	if !okh || !okm || h > 18 || m > 59 {
		return 0, 0, false
	}
	return sign * (h*3600 + m*60), n, true
}

// digits reads a short all-digit field.
func digits(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}
