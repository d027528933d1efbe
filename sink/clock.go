package sink

import (
	"time"

	"github.com/latscope/latscope/stream"
)

// WindowClock gives windows the times that the tabular formats (CSV, JSON
// Lines) write: the start in RFC 3339, none without a wall clock, and an
// offset in seconds from the output's first dated window, or from the
// source's start for windows without wall-clock time.
type WindowClock struct {
	origin time.Time
	dated  bool
}

// Times returns the window's start text (dated false without a wall clock)
// and its offset in seconds.
func (c *WindowClock) Times(iv stream.Interval) (start string, dated bool, offsetS float64) {
	if iv.Relative {
		return "", false, iv.Start.Sub(stream.RelativeStart).Seconds()
	}
	if !c.dated {
		c.origin, c.dated = iv.Start, true
	}
	return StartText(iv.Start), true, iv.Start.Sub(c.origin).Seconds()
}

// StartText prints a start in RFC 3339 with nanoseconds and the zone's
// offset; a zone whose offset is not whole minutes (RFC 3339 has no
// seconds there) is printed in UTC so that the instant stays exact.
func StartText(t time.Time) string {
	if _, off := t.Zone(); off%60 != 0 {
		t = t.UTC()
	}
	return t.Format(time.RFC3339Nano)
}
