package oracleaud

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
)

// syslogTag is what Oracle puts before a record it sends to syslog
// (AUDIT_SYSLOG_LEVEL): "Oracle Audit[<pid>]: LENGTH : '157' ACTION :[7] …".
const syslogTag = "Oracle Audit["

// DetectSyslog recognises a syslog file (/var/log/messages, or the file
// AUDIT_SYSLOG_LEVEL's facility is routed to) with Oracle audit records in
// its first 64 KiB.
func DetectSyslog(prefix []byte) input.Verdict {
	scan := input.LineScan{GiveUp: input.DetectLimit}
	for l := range scan.Lines(prefix) {
		if _, _, _, ok := cutSyslogTag(string(l.Text)); ok {
			return input.Yes
		}
	}
	return scan.Undecided(prefix)
}

// ReadSyslog reads the Oracle audit records of a syslog file, one a line
// in the text layout (`Oracle Audit[4242]: LENGTH : '157' ACTION :[7]
// 'CONNECT' DATABASE USER:[1] '/' …`); the other programs' lines are
// passed over. The pid is the tag's, the host the syslog line's. A
// traditional syslog timestamp has no year nor zone: it is kept as written
// (year 0, UTC) and warned about once; RFC 3339 timestamps
// (RSYSLOG_FileFormat, journalctl -o short-iso) are exact.
func ReadSyslog(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	warn := input.NewOnceWarnings(diag, name)
	return input.EachLine(ctx, name, r, maxLineBytes, func(n int, text string, tooLong bool) error {
		if tooLong {
			if strings.Contains(text, syslogTag) {
				diag.Malformed(name, n, fmt.Sprintf("Oracle audit line longer than %d bytes: skipped", maxLineBytes))
			}
			return nil
		}
		head, pid, rest, ok := cutSyslogTag(text)
		if !ok {
			return nil
		}
		rec := Record{Source: name, Line: n, Format: FormatSyslog}
		rec.Process.PID = pid
		rec.Time, rec.Process.Host = syslogHead(head, n, name, diag, warn)
		rec.Length, rest = cutLength(rest)
		setFields(&rec, rest, n, name, diag, warn)
		return fn(rec)
	})
}

// cutSyslogTag splits a line at Oracle's tag: the syslog head before it,
// the pid, and the record after "]: ".
func cutSyslogTag(line string) (head string, pid int, rest string, ok bool) {
	i := strings.Index(line, syslogTag)
	if i < 0 {
		return "", 0, "", false
	}
	after := line[i+len(syslogTag):]
	num, rest, found := strings.Cut(after, "]:")
	pid, err := strconv.Atoi(num)
	rest = strings.TrimLeft(rest, " ")
	if !found || err != nil || !strings.HasPrefix(rest, "LENGTH") {
		return "", 0, "", false
	}
	return line[:i], pid, rest, true
}

// syslogHead reads the timestamp and host a syslog line starts with.
func syslogHead(head string, n int, name string, diag *input.Diagnostics, warn *input.OnceWarnings) (time.Time, string) {
	head, _ = validText(head)
	stamp, rest, _ := strings.Cut(head, " ")
	if t, err := time.Parse(time.RFC3339Nano, stamp); err == nil {
		return t, firstWord(rest)
	}
	if t, err := time.Parse("2006-01-02T15:04:05-0700", stamp); err == nil {
		return t, firstWord(rest)
	}
	const bsd = "Jan _2 15:04:05"
	if len(head) > len(bsd) {
		if t, err := time.Parse(bsd, head[:len(bsd)]); err == nil {
			warn.Warn("year", "syslog timestamps without a year or zone (line %d): kept as written, year 0 in UTC", n)
			return t, firstWord(head[len(bsd):])
		}
	}
	diag.Malformed(name, n, fmt.Sprintf("no syslog timestamp before %q: record kept without a time", syslogTag))
	return time.Time{}, ""
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(strings.TrimLeft(s, " "), " ")
	return w
}

// cutLength reads the `LENGTH : '157'` a record starts with and returns
// the fields after it.
func cutLength(s string) (int, string) {
	h, ok := lengthEnd(s)
	if !ok {
		return 0, s
	}
	n, _ := parseLength(s[:h])
	return n, s[h:]
}

// lengthEnd returns where the `LENGTH : '157'` (or `LENGTH: "157"`) at the
// start of s ends.
func lengthEnd(s string) (int, bool) {
	i := strings.IndexAny(s, `'"`)
	if i < 0 {
		return 0, false
	}
	j := strings.IndexByte(s[i+1:], s[i])
	if j < 0 {
		return 0, false
	}
	return i + j + 2, true
}
