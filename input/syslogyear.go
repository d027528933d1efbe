package input

import (
	"io"
	"os"
	"time"
)

// SyslogYear supplies the year a classic syslog timestamp ("Mar 27
// 13:06:56") leaves out, for every reader of such lines (login logs,
// Oracle audit records sent to syslog): one policy, documented in
// docs/audit.md ("Login logs", "Years").
//
// The first timestamp gets Reference's year, or the year before when its
// month is later than Reference's (a line is not written after the file
// was last modified, so a December line in a file modified in January is
// from the previous December). After that the year goes up by one each
// time the month goes backwards by more than six months (December to
// January); a smaller step back (lines slightly out of order) keeps the
// year. Reference is the last day of the --year option's year when given
// (so the first timestamp gets that year), else the file's modification
// time, else the time of reading.
type SyslogYear struct {
	Reference time.Time
	year      int
	last      time.Month
}

// Year returns the year of a timestamp in month, the timestamps of one
// file being given in file order.
func (y *SyslogYear) Year(month time.Month) int {
	switch {
	case y.year == 0:
		y.year = y.Reference.Year()
		if month > y.Reference.Month() {
			y.year--
		}
	case month+6 < y.last:
		y.year++
	}
	y.last = month
	return y.year
}

// SyslogReference is the reference time of the year policy for an input
// without a --year: a regular file's modification time, else now.
func SyslogReference(r io.Reader) time.Time {
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.ModTime()
		}
	}
	return time.Now()
}
