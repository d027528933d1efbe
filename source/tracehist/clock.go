package tracehist

import (
	"strconv"
	"strings"
	"time"
)

// stamp is a time line a tool printed before a print: a time of day
// (bcc -T "06:20:16", ext4dist "10:19:00:", bpftrace time()) or a full date
// (DTrace printf("%Y") "2013 Aug 27 10:54:53", ctime, ISO).
type stamp struct {
	full time.Time // a full date and time (zero for a time of day)
	tod  time.Duration
}

// dateLayouts are the full dates tracing scripts print (in --tz).
var dateLayouts = []string{
	"2006 Jan 2 15:04:05",         // DTrace %Y walltimestamp
	"Mon Jan 2 15:04:05 2006",     // ctime(), SystemTap ctime(gettimeofday_s())
	"2006-01-02 15:04:05",         // strftime("%Y-%m-%d %H:%M:%S"), bpftrace time()
	"2006-01-02T15:04:05",         // ISO 8601
	"2006-01-02 15:04:05 MST",     // date(1) style with a zone
	"Mon Jan 2 15:04:05 MST 2006", // date(1)
}

// parseStamp reads a whole line as a time line; a trailing ':' (ext4dist,
// iolatency -T) is allowed.
func parseStamp(line string, loc *time.Location) (stamp, bool) {
	t := strings.TrimSuffix(strings.TrimSpace(line), ":")
	if len(t) < 7 || len(t) > 40 || strings.Count(t, ":") < 2 {
		return stamp{}, false
	}
	if d, ok := parseTimeOfDay(t); ok {
		return stamp{tod: d}, true
	}
	if t[0] < '0' || t[0] > '9' {
		if c := t[0] | 0x20; c < 'a' || c > 'z' {
			return stamp{}, false
		}
	}
	text := strings.Join(strings.Fields(t), " ")
	for _, layout := range dateLayouts {
		if when, err := time.ParseInLocation(layout, text, loc); err == nil {
			return stamp{full: when}, true
		}
	}
	return stamp{}, false
}

// parseTimeOfDay reads "H:MM:SS" or "HH:MM:SS" with optional fractional
// seconds.
func parseTimeOfDay(t string) (time.Duration, bool) {
	parts := strings.Split(t, ":")
	if len(parts) != 3 || len(parts[0]) < 1 || len(parts[0]) > 2 || len(parts[1]) != 2 || len(parts[2]) < 2 {
		return 0, false
	}
	h, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	secText := parts[2]
	if len(secText) > 2 && secText[2] != '.' {
		return 0, false
	}
	s, err3 := strconv.ParseFloat(secText, 64)
	if err1 != nil || err2 != nil || err3 != nil || h > 23 || m > 59 || s < 0 || s >= 61 || !onlyChars(parts[0]+parts[1], "0123456789") || !onlyChars(secText, "0123456789.") {
		return 0, false
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s*float64(time.Second)), true
}

// wallClock turns stamps into instants: times of day fall on the day given
// (--date, else the file's date) and roll over to the next day when the
// clock goes back by more than 12 hours (a run across midnight).
type wallClock struct {
	day  time.Time // midnight of the current day, in the zone
	last time.Time
	has  bool
}

func newWallClock(day time.Time) wallClock {
	y, m, d := day.Date()
	return wallClock{day: time.Date(y, m, d, 0, 0, 0, 0, day.Location())}
}

// resolve returns the instant of a stamp.
func (c *wallClock) resolve(s stamp) time.Time {
	var t time.Time
	if !s.full.IsZero() {
		t = s.full
		y, m, d := t.Date()
		c.day = time.Date(y, m, d, 0, 0, 0, 0, t.Location())
	} else {
		t = c.at(s.tod)
		if c.has && t.Before(c.last.Add(-12*time.Hour)) {
			c.day = c.day.AddDate(0, 0, 1)
			t = c.at(s.tod)
		}
	}
	c.last, c.has = t, true
	return t
}

func (c *wallClock) at(tod time.Duration) time.Time {
	y, m, d := c.day.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, c.day.Location()).Add(tod)
}

// parseProbeLine reads a DTrace probe line "  3  72639   :tick-10s"
// (CPU, probe id, FUNCTION:NAME). period is the tick-N probe's period,
// zero for other probes (END, profile ...).
func parseProbeLine(line string) (period time.Duration, ok bool) {
	f := strings.Fields(line)
	if len(f) != 3 || !isDigits(f[0]) || !isDigits(f[1]) {
		return 0, false
	}
	i := strings.LastIndexByte(f[2], ':')
	if i < 0 {
		return 0, false
	}
	name := f[2][i+1:]
	if rate, ok := strings.CutPrefix(name, "tick-"); ok {
		return tickPeriod(rate), true
	}
	return 0, true
}

func isDigits(s string) bool { return s != "" && onlyChars(s, "0123456789") }

// tickUnits are DTrace's tick-N suffixes; a bare number is a rate in Hz.
var tickUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "nsec": time.Nanosecond,
	"us": time.Microsecond, "usec": time.Microsecond,
	"ms": time.Millisecond, "msec": time.Millisecond,
	"s": time.Second, "sec": time.Second,
	"m": time.Minute, "min": time.Minute,
	"h": time.Hour, "hour": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour,
}

// tickPeriod reads "10s", "1sec", "500ms", "100hz" or "5" (Hz); zero when
// unreadable.
func tickPeriod(rate string) time.Duration {
	i := 0
	for i < len(rate) && rate[i] >= '0' && rate[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(rate[:i], 10, 64)
	if err != nil || n <= 0 || n > 1e9 {
		return 0
	}
	unit := strings.ToLower(rate[i:])
	if unit == "" || unit == "hz" {
		return time.Second / time.Duration(n)
	}
	if u, ok := tickUnits[unit]; ok && n <= int64(365*24*time.Hour/u) {
		return time.Duration(n) * u
	}
	return 0
}
