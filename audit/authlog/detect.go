package authlog

import (
	"bytes"

	"github.com/latscope/latscope/input"
)

// authPrograms are the programs whose lines make a syslog file a login
// log for detection (the reader keeps every program's lines).
var authPrograms = map[string]bool{
	"sshd": true, "sudo": true, "su": true, "systemd-logind": true, "login": true,
	"useradd": true, "groupadd": true, "chpasswd": true, "passwd": true, "unix_chkpwd": true,
}

// Detect reports whether an input prefix is a login log in one of the
// formats (DetectFormat).
func Detect(prefix []byte) input.Verdict {
	_, v := DetectFormat(prefix)
	return v
}

// DetectFormat says which format an input prefix is in: a journal export
// starts with __CURSOR= or __REALTIME_TIMESTAMP=, journal JSON with an
// object holding "__REALTIME_TIMESTAMP" or "__CURSOR"; a syslog file's
// first non-blank line is a syslog line, and some line of its first
// input.DetectLimit bytes is one of a login program (sshd, sudo, su,
// systemd-logind, login, useradd...).
func DetectFormat(prefix []byte) (Format, input.Verdict) {
	scan := input.LineScan{SkipBOM: true, GiveUp: input.DetectLimit}
	first := true
	for l := range scan.Lines(prefix) {
		if l.Blank() {
			continue
		}
		if first {
			switch {
			case bytes.HasPrefix(l.Text, []byte("__CURSOR=")), bytes.HasPrefix(l.Text, []byte("__REALTIME_TIMESTAMP=")):
				return FormatJournalExport, input.Yes
			case bytes.HasPrefix(l.Text, []byte("{")):
				if bytes.Contains(l.Text, []byte(`"__REALTIME_TIMESTAMP"`)) || bytes.Contains(l.Text, []byte(`"__CURSOR"`)) {
					return FormatJournalJSON, input.Yes
				}
				return "", input.No
			}
		}
		s, err := parseSyslog(string(l.Text))
		if first && err != nil {
			return "", input.No
		}
		first = false
		if err == nil && authPrograms[s.program] {
			return FormatSyslog, input.Yes
		}
	}
	return "", scan.Undecided(prefix)
}
