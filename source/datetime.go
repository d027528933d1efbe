package source

import "time"

// DateTime is a date and time of day as logs print it, without a zone.
type DateTime struct {
	Year, Month, Day, Hour, Minute, Second int
}

// ParseDateTime reads "YYYY-MM-DD HH:MM:SS" (or ISO 8601's 'T' for the
// space) at the start of s. The fields are range-checked one by one (a
// leap second 60 passes; February 30th too, which Time then moves on);
// the caller judges the year.
func ParseDateTime[T ~string | ~[]byte](s T) (DateTime, bool) {
	if len(s) < len("2006-01-02 15:04:05") || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
		s[13] != ':' || s[16] != ':' {
		return DateTime{}, false
	}
	ok := true
	num := func(from, to int) int {
		v := 0
		for i := from; i < to; i++ {
			c := s[i]
			ok = ok && c >= '0' && c <= '9'
			v = v*10 + int(c-'0')
		}
		return v
	}
	d := DateTime{num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19)}
	if !ok || d.Month < 1 || d.Month > 12 || d.Day < 1 || d.Day > 31 || d.Hour > 23 || d.Minute > 59 || d.Second > 60 {
		return DateTime{}, false
	}
	return d, true
}

// Time returns the time with nsec nanoseconds in loc.
func (d DateTime) Time(nsec int, loc *time.Location) time.Time {
	return time.Date(d.Year, time.Month(d.Month), d.Day, d.Hour, d.Minute, d.Second, nsec, loc)
}
