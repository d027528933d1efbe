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

// The tags Oracle puts before a record it sends to syslog: traditional
// auditing's (AUDIT_SYSLOG_LEVEL: "Oracle Audit[<pid>]: LENGTH : '157'
// ACTION :[7] …") and unified auditing's (UNIFIED_AUDIT_SYSTEMLOG:
// "Oracle Unified Audit[<pid>]: LENGTH: '197' TYPE:"4" DBID:"…" …").
const (
	syslogTag        = "Oracle Audit["
	unifiedSyslogTag = "Oracle Unified Audit["
)

// DetectSyslog recognises a syslog file (/var/log/messages, or the file
// AUDIT_SYSLOG_LEVEL's facility is routed to) with Oracle audit records in
// its first 64 KiB.
func DetectSyslog(prefix []byte) input.Verdict {
	scan := input.LineScan{GiveUp: input.DetectLimit}
	for l := range scan.Lines(prefix) {
		if _, _, _, _, ok := cutSyslogTag(string(l.Text)); ok {
			return input.Yes
		}
	}
	return scan.Undecided(prefix)
}

// ReadSyslog reads the Oracle audit records of a syslog file, one a line:
// traditional auditing's in the text layout (`Oracle Audit[4242]: LENGTH :
// '157' ACTION :[7] 'CONNECT' DATABASE USER:[1] '/' …`) and unified
// auditing's `NAME:"value"` pairs (`Oracle Unified Audit[4242]: LENGTH:
// '197' TYPE:"4" DBID:"…" SESID:"…" DBUSER:"…" ACTION:"100" RETCODE:"0"
// …`, whose ACTION is only a number). Other programs' lines are passed
// over. The pid is the tag's, the host the syslog line's. A traditional
// syslog timestamp has no year nor zone: its year comes from the policy
// every syslog reader shares (input.SyslogYear: from the file's
// modification time), its zone is taken as UTC, and both are warned about
// once; RFC 3339 timestamps (RSYSLOG_FileFormat, journalctl -o short-iso)
// are exact.
func ReadSyslog(ctx context.Context, name string, r io.Reader, diag *input.Diagnostics, fn func(Record) error) error {
	warn := input.NewOnceWarnings(diag, name)
	years := &input.SyslogYear{Reference: input.SyslogReference(r).UTC()}
	return input.EachLine(ctx, name, r, maxLineBytes, func(n int, text string, tooLong bool) error {
		if tooLong {
			if strings.Contains(text, syslogTag) || strings.Contains(text, unifiedSyslogTag) {
				diag.Malformed(name, n, fmt.Sprintf("Oracle audit line longer than %d bytes: skipped", maxLineBytes))
			}
			return nil
		}
		head, pid, rest, unified, ok := cutSyslogTag(text)
		if !ok {
			return nil
		}
		rec := Record{Source: name, Line: n, Format: FormatSyslog}
		rec.Process.PID = pid
		rec.Time, rec.Process.Host = syslogHead(head, n, name, diag, warn, years)
		rec.Length, rest = cutLength(rest)
		if unified {
			setPairs(&rec, rest, name, diag, warn)
		} else {
			setFields(&rec, rest, n, name, diag, warn)
		}
		rec.inUTC()
		return fn(rec)
	})
}

// cutSyslogTag splits a line at Oracle's tag: the syslog head before it,
// the pid, and the record after "]: "; unified says which tag it was.
func cutSyslogTag(line string) (head string, pid int, rest string, unified, ok bool) {
	tag := unifiedSyslogTag
	i := strings.Index(line, tag)
	if unified = i >= 0; !unified {
		tag = syslogTag
		if i = strings.Index(line, tag); i < 0 {
			return "", 0, "", false, false
		}
	}
	num, rest, found := strings.Cut(line[i+len(tag):], "]:")
	pid, err := strconv.Atoi(num)
	rest = strings.TrimLeft(rest, " ")
	if !found || err != nil || !strings.HasPrefix(rest, "LENGTH") {
		return "", 0, "", false, false
	}
	return line[:i], pid, rest, unified, true
}

// setPairs reads unified auditing's `NAME:"value"` pairs (no lengths: a
// value ends at the first quote followed by the end of the line or by
// another pair) and classifies the record.
func setPairs(rec *Record, s, name string, diag *input.Diagnostics, warn *input.OnceWarnings) {
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		key, after, ok := strings.Cut(s, `:"`)
		if !ok || !isPairName(key) {
			diag.Malformed(name, rec.Line, fmt.Sprintf(`not a NAME:"value" pair: %q (the rest of the line skipped)`, clip(s)))
			break
		}
		end := pairEnd(after)
		if end == len(after) {
			diag.Malformed(name, rec.Line, fmt.Sprintf("value of %s has no closing quote: read to the end of the line", key))
		}
		setPair(rec, key, after[:end], warn)
		s = after[min(end+1, len(after)):]
	}
	rec.Kind = Classify(rec.Action, rec.ActionNumber)
}

// pairEnd returns where the value at the start of s ends: the first quote
// followed by the end of the line or another pair; failing that its first
// quote; the end of s when there is none.
func pairEnd(s string) int {
	first := strings.IndexByte(s, '"')
	for i := first; i >= 0 && i < len(s); {
		rest := s[i+1:]
		if strings.TrimSpace(rest) == "" {
			return i
		}
		if key, _, ok := strings.Cut(strings.TrimLeft(rest, " "), `:"`); ok && rest[0] == ' ' && isPairName(key) {
			return i
		}
		j := strings.IndexByte(rest, '"')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if first >= 0 {
		return first
	}
	return len(s)
}

func isPairName(s string) bool {
	if s == "" || len(s) > maxNameBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && (c < '0' || c > '9') && c != '_' && c != '$' {
			return false
		}
	}
	return true
}

// setPair stores a unified syslog pair where the Record keeps it; the
// names are those of Oracle's documentation (SESID, DBUSER) and the
// shorter ones some write (SESS, USER).
func setPair(rec *Record, key, value string, warn *input.OnceWarnings) {
	v := recordText(value, rec.Line, warn)
	switch key {
	case "DBID":
		rec.DBID = v
	case "SESID", "SESS":
		rec.SessionID = v
	case "DBUSER", "USER":
		rec.DBUser = v
	case "RETCODE":
		rec.Status = v
	case "ACTION":
		if allDigits(v) {
			rec.ActionNumber = atoi(v)
		} else {
			rec.Action = v
		}
	default:
		rec.setExtra(key, v)
	}
}

// syslogHead reads the timestamp and host a syslog line starts with.
func syslogHead(head string, n int, name string, diag *input.Diagnostics, warn *input.OnceWarnings, years *input.SyslogYear) (time.Time, string) {
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
			warn.Warn("year", "syslog timestamps without a year or zone (line %d): the year from the file's date (docs/audit.md), times in UTC", n)
			t = time.Date(years.Year(t.Month()), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
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
