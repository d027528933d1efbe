package awr

import (
	"strings"
	"time"
)

// timeLayouts are the timestamp texts read, tried in order: the ISO form the
// shipped queries print first, then Oracle's default NLS_TIMESTAMP_FORMAT
// (DD-MON-RR HH.MI.SSXFF AM, with or without TZH:TZM) and common DATE
// formats. A fraction of a second after the seconds is accepted by all.
// Month names are matched without regard to case (MAR, Mar).
var timeLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02 15:04:05 Z07:00",
	"02-Jan-06 03.04.05 PM",
	"02-Jan-06 03.04.05 PM Z07:00",
	"02-Jan-2006 03.04.05 PM",
	"02-Jan-2006 03.04.05 PM Z07:00",
	"02-Jan-2006 15:04:05",
	"02-Jan-06 15:04:05",
	"02.01.2006 15:04:05",
	"02.01.06 15:04:05",
	"2006/01/02 15:04:05",
	"2006-01-02 15:04",
}

// timeReader parses timestamps in loc (for texts without an offset),
// remembering the last text and layout: the rows of one snapshot repeat the
// same time, and a file uses one layout.
type timeReader struct {
	loc      *time.Location
	lastText string
	last     time.Time
	layout   int
}

// parse reads a timestamp; ok is false when no layout fits.
func (r *timeReader) parse(text string) (time.Time, bool) {
	if text == r.lastText && text != "" {
		return r.last, true
	}
	text = strings.TrimSpace(text)
	if t, err := time.ParseInLocation(timeLayouts[r.layout], text, r.loc); err == nil {
		r.lastText, r.last = text, t
		return t, true
	}
	for i, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, text, r.loc); err == nil {
			r.layout, r.lastText, r.last = i, text, t
			return t, true
		}
	}
	return time.Time{}, false
}

// setLocation changes the zone of offset-less texts, forgetting the cache.
func (r *timeReader) setLocation(loc *time.Location) {
	if loc != r.loc {
		r.loc, r.lastText = loc, ""
	}
}
