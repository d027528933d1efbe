package authlog

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/latscope/latscope/input"
)

// DefaultMaxLineBytes is the longest line (or journal field) read; longer
// ones are reported and skipped. Login log lines are short; a journal
// MESSAGE of a few KiB is common, 64 KiB is not.
const DefaultMaxLineBytes = 64 << 10

// Reader reads login logs; its zero value reads with the defaults.
type Reader struct {
	// Year, when non-zero, is the year of a file's first classic syslog
	// timestamp (--year); later ones follow input.SyslogYear's policy.
	Year int
	// Reference is input.SyslogYear's reference time when Year is zero;
	// zero: the modification time of r when it is a file, else now.
	Reference time.Time
	// Location is the zone of classic syslog timestamps, which give none
	// (nil: UTC).
	Location *time.Location
	// MaxLineBytes bounds a line or journal field (0: DefaultMaxLineBytes).
	MaxLineBytes int
	// Format, when set, is the input's format (--input-format); "": the
	// format the first bytes show.
	Format Format
}

// Read reads r with the Reader's defaults; see Reader.Read.
func Read(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	return Reader{}.Read(ctx, name, r, diag, fn)
}

// Read reads the login log r (gzip unwrapped), named name in messages, in
// the format its first bytes show, and calls fn for every record in input
// order. It returns fn's error, ctx's, or a read error naming file:line;
// bad lines are reported to diag and skipped.
func (rd Reader) Read(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	ref := rd.reference(r)
	br, err := input.Decompressed(name, r, input.DetectLimit)
	if err != nil {
		return err
	}
	f := rd.Format
	if f == "" {
		prefix, _ := br.Peek(input.DetectLimit)
		f, _ = DetectFormat(prefix)
	}
	switch f {
	case FormatJournalExport:
		return rd.readExport(ctx, name, br, diag, fn)
	case FormatJournalJSON:
		return rd.readJSON(ctx, name, br, diag, fn)
	default:
		return rd.readSyslog(ctx, name, br, ref, diag, fn)
	}
}

func (rd Reader) maxLine() int {
	if rd.MaxLineBytes > 0 {
		return rd.MaxLineBytes
	}
	return DefaultMaxLineBytes
}

// reference is the time the year policy starts from.
func (rd Reader) reference(r io.Reader) time.Time {
	switch {
	case rd.Year != 0:
		return time.Date(rd.Year, time.December, 31, 23, 59, 59, 0, time.UTC)
	case !rd.Reference.IsZero():
		return rd.Reference
	}
	return input.SyslogReference(r)
}

// readSyslog reads one record a line.
func (rd Reader) readSyslog(ctx context.Context, name string, r io.Reader, ref time.Time, diag *input.Diagnostics, fn func(Record) error) error {
	loc := rd.Location
	if loc == nil {
		loc = time.UTC
	}
	years := input.SyslogYear{Reference: ref.In(loc)}
	warn := input.NewOnceWarnings(diag, name)
	return rd.eachLine(ctx, name, r, diag, func(n int, text string) error {
		text = validText(text, n, warn)
		l, err := parseSyslog(text)
		if err != nil {
			diag.Malformed(name, n, fmt.Sprintf("%v: %q skipped", err, clip(text)))
			return nil
		}
		rec := Record{Source: name, Line: n, Format: FormatSyslog, Host: l.host, Program: l.program, PID: l.pid, Message: l.message}
		rec.Time = l.stamp.UTC()
		if l.noYear {
			s := l.stamp
			rec.Time = time.Date(years.Year(s.Month()), s.Month(), s.Day(), s.Hour(), s.Minute(), s.Second(), 0, loc).UTC()
		}
		classify(&rec)
		return fn(rec)
	})
}

// eachLine calls line for every non-blank line of r; a line longer than
// the limit is reported and skipped.
func (rd Reader) eachLine(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, line func(n int, text string) error) error {
	maxLen := rd.maxLine()
	return input.EachLine(ctx, name, r, maxLen, func(n int, text string, tooLong bool) error {
		switch {
		case tooLong:
			diag.Malformed(name, n, fmt.Sprintf("line longer than %d bytes: skipped", maxLen))
			return nil
		case strings.TrimSpace(text) == "":
			return nil
		}
		return line(n, text)
	})
}

// validText replaces bytes that are not UTF-8 (a user name typed in
// another encoding, a damaged file) and warns once.
func validText(s string, n int, warn *input.OnceWarnings) string {
	if utf8.ValidString(s) {
		return s
	}
	warn.Warn("utf8", "bytes that are not UTF-8 (first on line %d) replaced by U+FFFD", n)
	return strings.ToValidUTF8(s, "\uFFFD")
}

// clip shortens s for a message.
func clip(s string) string {
	const most = 60
	if len(s) <= most {
		return s
	}
	return strings.ToValidUTF8(s[:most], "") + "…"
}
