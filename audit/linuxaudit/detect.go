package linuxaudit

import (
	"time"

	"github.com/latscope/latscope/input"
)

// detectLines is how many lines Detect reads: an audit log starts with
// records, but a line or two may be damaged.
const detectLines = 8

// Detect reports whether an input prefix is an audit log: among its first
// complete lines, a record ("[node=N ]type=T msg=audit(S.M:SERIAL)") comes
// before anything that is not one.
func Detect(prefix []byte) input.Verdict {
	scan := input.LineScan{SkipBOM: true, MaxLines: detectLines}
	damaged := 0
	for l := range scan.Lines(prefix) {
		if l.Blank() {
			continue
		}
		switch _, err := parseHeader(l.Text); err {
		case nil:
			return input.Yes
		case errNotRecord:
			return input.No
		default:
			damaged++ // type=... msg=? or a damaged stamp: look further
		}
	}
	if damaged >= detectLines {
		return input.No
	}
	return scan.Undecided(prefix)
}

// FirstRecord returns the node and time of the first audit record among
// an input prefix's lines (ok false when there is none), so that a caller
// can order rotated logs and tell hosts apart before reading them.
func FirstRecord(prefix []byte) (node string, t time.Time, ok bool) {
	scan := input.LineScan{SkipBOM: true, MaxLines: detectLines}
	for l := range scan.Lines(prefix) {
		if h, err := parseHeader(l.Text); err == nil {
			return string(h.node), time.Unix(h.sec, h.nsec).UTC(), true
		}
	}
	return "", time.Time{}, false
}
