package input

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNothingRead says an input held no data of the format it was read as
// (a forced --input-format on the wrong file, or a header whose tables are
// all unusable). The error wrapping it names the lines that were not used.
var ErrNothingRead = errors.New("nothing read")

// Unused counts the lines of an input a parser could not use and keeps the
// first few, so that an input that gave nothing can say which lines it
// had: silence would leave the user with "no latency data" and no clue.
// The zero value is ready to use.
type Unused struct {
	count int
	first []Problem
}

// unusedExamples is how many unused lines an error names.
const unusedExamples = 3

// Line records line n, whose text fitted nothing the format knows.
func (u *Unused) Line(source string, n int, text string) {
	if len(u.first) == unusedExamples { // quote only the lines an error names
		u.count++
		return
	}
	u.Skipped(source, n, quoteLine(text)+" is not part of the format")
}

// Skipped records line n, which was recognised but could not be used, and
// why.
func (u *Unused) Skipped(source string, n int, reason string) {
	u.count++
	if len(u.first) < unusedExamples {
		u.first = append(u.first, Problem{Source: source, Line: n, Reason: reason})
	}
}

// Count returns how many lines were recorded.
func (u *Unused) Count() int { return u.count }

// Err returns the error of an input that gave nothing as format: it wraps
// ErrNothingRead and names the count and the first unused lines. Nil when
// no line was recorded (an empty input gives nothing without error).
func (u *Unused) Err(source, format string) error {
	if u.count == 0 {
		return nil
	}
	var b strings.Builder
	for i, p := range u.first {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if more := u.count - len(u.first); more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return fmt.Errorf("%s: %w as %s: %d line(s) could not be used: %s", source, ErrNothingRead, format, u.count, b.String())
}

// quoteLine quotes a line for a message, cut to 60 bytes.
func quoteLine(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return strconv.Quote(s)
}
