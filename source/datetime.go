package source

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

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

// ParseWhen reads a point in time as --from and --to take it: RFC 3339
// ("2026-11-25T03:10:00Z", "…+01:00"), a date and time without a zone
// ("2026-11-25 03:10:00" or with 'T'; in loc), a date ("2026-11-25",
// midnight in loc), "now", or a time relative to now: a signed Go duration
// with an optional day unit ("-24h", "-90m", "-7d", "-1d12h", "+5m").
func ParseWhen(s string, now time.Time, loc *time.Location) (time.Time, error) {
	switch {
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
		d, err := parseRelative(s)
		if err != nil {
			return time.Time{}, err
		}
		return now.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q: want RFC 3339 (2026-11-25T03:10:00Z), YYYY-MM-DD[ HH:MM[:SS]], now, or relative like -24h, -7d", s)
}

// parseRelative reads a signed duration whose leading "Nd" counts days.
func parseRelative(s string) (time.Duration, error) {
	sign, rest := s[:1], s[1:]
	d, err := ParseAge(rest)
	if errors.Is(err, errAgeForm) {
		return 0, fmt.Errorf("relative time %q: want e.g. -24h, -90m, -7d", s)
	}
	if err != nil {
		return 0, fmt.Errorf("relative time %q: %w", s, err)
	}
	if sign == "-" {
		d = -d
	}
	return d, nil
}

var errAgeForm = errors.New("want e.g. 24h, 90m, 7d")

// ParseAge reads a non-negative Go duration with an optional leading day
// count, as retentions are written: "365d", "7d12h", "90m".
func ParseAge(s string) (time.Duration, error) {
	rest := s
	if rest == "" {
		return 0, errAgeForm
	}
	var days int64
	if i := strings.IndexByte(rest, 'd'); i > 0 {
		n, err := strconv.ParseInt(rest[:i], 10, 32)
		if err != nil || n < 0 {
			return 0, errors.New("bad day count")
		}
		days, rest = n, rest[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil || d < 0 {
			return 0, errAgeForm
		}
	}
	if days > int64(math.MaxInt64-d)/int64(24*time.Hour) {
		return 0, errors.New("too far")
	}
	return d + time.Duration(days)*24*time.Hour, nil
}

// FormatAge writes a retention as ParseAge reads it, whole days first and
// without zero units: 72h is "3d", 36h "1d12h", 90m "1h30m".
func FormatAge(d time.Duration) string {
	const day = 24 * time.Hour
	if d <= 0 {
		return d.String()
	}
	var out string
	if days := d / day; days > 0 {
		out, d = strconv.FormatInt(int64(days), 10)+"d", d%day
		if d == 0 {
			return out
		}
	}
	rest := d.String()
	if strings.HasSuffix(rest, "m0s") {
		rest = strings.TrimSuffix(rest, "0s")
	}
	if strings.HasSuffix(rest, "h0m") {
		rest = strings.TrimSuffix(rest, "0m")
	}
	return out + rest
}
