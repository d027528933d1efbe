package input

import (
	"bytes"
	"iter"
)

// DetectLimit is how much of an input format detection reads: the Opener
// offers its detectors growing prefixes up to this length. A detector
// whose decisive line may follow prose or log lines (a tool's banner, a
// script's log, SQL*Plus chatter) gives up only here (LineScan.GiveUp), so
// that a pipe, judged while its first bytes trickle in, gets the answer
// the same bytes get from a file, judged in one 64 KiB prefix.
const DetectLimit = 64 << 10

// LineScan is how a line-oriented format's detector reads its prefix: which
// lines Lines yields, and when Undecided gives up on a prefix that no line
// settled. The zero value yields every complete line and never gives up.
//
//	scan := input.LineScan{GiveUp: 4 << 10}
//	for l := range scan.Lines(prefix) {
//		if isOurs(l.Text) {
//			return input.Yes
//		}
//	}
//	return scan.Undecided(prefix)
type LineScan struct {
	// SkipBOM drops a UTF-8 byte order mark before the first line.
	SkipBOM bool
	// Partial yields the last line too while it has no newline yet
	// (Complete false). Without it only complete lines are judged: a line
	// cut short by the prefix may still grow into anything.
	Partial bool
	// MaxLines, when positive, yields only the first MaxLines lines (blank
	// ones included).
	MaxLines int
	// GiveUp, when positive, is the prefix length (byte order mark
	// included) from which Undecided answers No rather than NeedMore.
	GiveUp int
}

// PrefixLine is one line of a detection prefix.
type PrefixLine struct {
	// Text is the line without its "\n" and one "\r" before it, as
	// LineReader hands it to the parser; a partial last line loses one
	// final "\r" too.
	Text []byte
	// N is the 1-based line number (a skipped byte order mark aside).
	N int
	// Complete says the line ends with a newline.
	Complete bool
	// Rest is the prefix from the start of this line on, for records that
	// span lines (a CSV record, a JSON object).
	Rest []byte
}

// Blank reports whether the line holds only white space.
func (l PrefixLine) Blank() bool { return len(bytes.TrimSpace(l.Text)) == 0 }

var utf8BOM = []byte("\xef\xbb\xbf")

// Lines yields the lines of prefix that s selects, in order.
func (s LineScan) Lines(prefix []byte) iter.Seq[PrefixLine] {
	return func(yield func(PrefixLine) bool) {
		rest := prefix
		if s.SkipBOM {
			rest = bytes.TrimPrefix(rest, utf8BOM)
		}
		for n := 1; len(rest) > 0 && (s.MaxLines <= 0 || n <= s.MaxLines); n++ {
			l := PrefixLine{N: n, Rest: rest}
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				l.Text, l.Complete, rest = rest[:i], true, rest[i+1:]
			} else if s.Partial {
				l.Text, rest = rest, nil
			} else {
				return
			}
			l.Text = bytes.TrimSuffix(l.Text, []byte{'\r'})
			if !yield(l) {
				return
			}
		}
	}
}

// Undecided is the verdict on a prefix whose lines settled nothing: No once
// it is s.GiveUp bytes long, NeedMore before.
func (s LineScan) Undecided(prefix []byte) Verdict {
	if s.GiveUp > 0 && len(prefix) >= s.GiveUp {
		return No
	}
	return NeedMore
}
