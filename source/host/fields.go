package host

import (
	"bytes"
	"fmt"

	"github.com/latscope/latscope/input"
)

// The /proc parsers are pure functions over a file's bytes: they fill a
// snapshot the caller reuses (so that sampling every second allocates
// little), skip the lines they cannot read and return those as problems,
// keeping every line they could.

// problem is a line a parser skipped: its number (from 1) and why.
type problem struct {
	line   int
	reason string
}

func (p problem) String() string { return fmt.Sprintf("line %d: %s", p.line, p.reason) }

// lines calls fn for each line of b with its number (from 1), without the
// newline.
func lines(b []byte, fn func(n int, line []byte)) {
	for n := 1; len(b) > 0; n++ {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		fn(n, line)
	}
}

// splitFields appends the blank-separated fields of line to dst[:0].
func splitFields(dst [][]byte, line []byte) [][]byte {
	dst = dst[:0]
	for {
		for len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			line = line[1:]
		}
		if len(line) == 0 {
			return dst
		}
		end := 0
		for end < len(line) && line[end] != ' ' && line[end] != '\t' {
			end++
		}
		dst = append(dst, line[:end])
		line = line[end:]
	}
}

// parseDecimal reads a non-negative decimal number with an optional
// fraction ("0.52"), as /proc/loadavg and /proc/pressure print them.
func parseDecimal(b []byte) (float64, bool) {
	whole, frac, hasFrac := bytes.Cut(b, []byte{'.'})
	w, ok := input.ParseUint(whole)
	if !ok {
		return 0, false
	}
	v := float64(w)
	if hasFrac {
		f, ok := input.ParseUint(frac)
		if !ok {
			return 0, false
		}
		scale := 1.0
		for range frac {
			scale *= 10
		}
		v += float64(f) / scale
	}
	return v, true
}

// intern returns old when it spells b, else b as a new string: names read
// every second (CPUs, devices, interfaces) are the same each time.
func intern(old string, b []byte) string {
	if old == string(b) {
		return old
	}
	return string(b)
}

// slot returns entry n of a slice reused from sample to sample (growing it
// by one when n is past its end) and the slice.
func slot[T any](xs []T, n int) (*T, []T) {
	if n == len(xs) {
		var zero T
		xs = append(xs, zero)
	}
	return &xs[n], xs
}

// parseCounters reads fields into dst (as many as both hold); on a field
// that is not a number it returns the problem of line ln naming it.
func parseCounters(dst []uint64, fields [][]byte, ln int, what string) (problem, bool) {
	for i := range min(len(dst), len(fields)) {
		v, ok := input.ParseUint(fields[i])
		if !ok {
			return problem{ln, what + " " + string(fields[i]) + " is not a number"}, false
		}
		dst[i] = v
	}
	return problem{}, true
}
