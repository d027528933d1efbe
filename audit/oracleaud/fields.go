package oracleaud

import (
	"fmt"
	"strings"
)

// field is one `NAME :[n] 'value'` of a text record.
type field struct {
	name, value string
}

type problem struct {
	line   int
	reason string
}

// fieldParser reads the fields of one text record's body. The [n] before a
// value is its length in bytes, which is what lets a value hold quotes and
// newlines; where the length lies (hand-edited files) the value ends at the
// first quote that is followed by the end of the record, the end of its
// line and another field, or another field on the same line.
type fieldParser struct {
	text      string
	pos       int
	firstLine int // line number of text's first line
	// line counting, kept incremental: lineOf(counted) == lineNo
	counted, lineNo  int
	problems         []problem
	lengthMismatches int
}

// next returns the next field; false at the end of the body.
func (p *fieldParser) next() (field, bool) {
	for {
		p.pos = skipSpace(p.text, p.pos, true)
		if p.pos >= len(p.text) {
			return field{}, false
		}
		h, ok := parseHead(p.text, p.pos)
		if !ok {
			p.complain(p.pos, fmt.Sprintf("not a NAME:[n] 'value' field: %q (line skipped, the record kept)", clip(lineFrom(p.text, p.pos))))
			p.pos = endOfLine(p.text, p.pos)
			continue
		}
		return field{name: h.name, value: p.value(h)}, true
	}
}

// value reads the value a head introduces and moves past it.
func (p *fieldParser) value(h head) string {
	s, start := p.text, h.valueAt
	if end := start + h.length; end < len(s) && s[end] == h.quote && closesLenient(s, end+1) {
		p.pos = end + 1
		return s[start:end]
	}
	p.lengthMismatches++
	for i := start; i < len(s); i++ {
		j := strings.IndexByte(s[i:], h.quote)
		if j < 0 {
			break
		}
		i += j
		if closesStrict(s, i+1) {
			p.pos = i + 1
			return s[start:i]
		}
	}
	if len(s)-start < h.length {
		// The record ends before the value's length: it was cut while
		// being written or copied, and all that is left is the value.
		p.complain(start, fmt.Sprintf("value of %s cut short (%d of %d bytes): record kept with what is there", h.name, len(s)-start, h.length))
		p.pos = len(s)
		return s[start:]
	}
	p.complain(start, fmt.Sprintf("value of %s has no closing quote: read to the end of its line, the record kept", h.name))
	p.pos = endOfLine(s, start)
	return s[start:p.pos]
}

func (p *fieldParser) complain(pos int, reason string) {
	p.problems = append(p.problems, problem{line: p.lineOf(pos), reason: reason})
}

// lineOf returns the file line number of a position; positions asked for
// only grow, so the count goes on from the last one.
func (p *fieldParser) lineOf(pos int) int {
	if pos < p.counted {
		p.counted, p.lineNo = 0, 0
	}
	p.lineNo += strings.Count(p.text[p.counted:pos], "\n")
	p.counted = pos
	return p.firstLine + p.lineNo
}

// head is a parsed `NAME :[n] '`.
type head struct {
	name    string
	length  int
	quote   byte
	valueAt int
}

const maxNameBytes = 64

// parseHead reads a field's head at s[i:].
func parseHead(s string, i int) (head, bool) {
	j := i
	for j < len(s) && j-i <= maxNameBytes && isNameByte(s[j]) {
		j++
	}
	if j >= len(s) || s[j] != ':' {
		return head{}, false
	}
	name := strings.TrimRight(s[i:j], " ")
	if name == "" || !isLetter(name[0]) {
		return head{}, false
	}
	j = skipSpace(s, j+1, false)
	if j >= len(s) || s[j] != '[' {
		return head{}, false
	}
	j++
	n, digits := 0, 0
	for ; j < len(s) && s[j] >= '0' && s[j] <= '9' && digits < 9; j++ {
		n = n*10 + int(s[j]-'0')
		digits++
	}
	if digits == 0 || j >= len(s) || s[j] != ']' {
		return head{}, false
	}
	j = skipSpace(s, j+1, false)
	if j >= len(s) || (s[j] != '\'' && s[j] != '"') {
		return head{}, false
	}
	return head{name: name, length: n, quote: s[j], valueAt: j + 1}, true
}

// closesLenient: a quote whose length matched closes the value when the
// line or the record ends after it or another field follows.
func closesLenient(s string, k int) bool {
	k = skipSpace(s, k, false)
	if k >= len(s) || s[k] == '\n' || s[k] == '\r' {
		return true
	}
	_, ok := parseHead(s, k)
	return ok
}

// closesStrict: without a length to trust, a quote closes the value only
// when the record ends after it, its line ends and the next one starts a
// field, or (OS-audit layout) a field follows on the same line.
func closesStrict(s string, k int) bool {
	after := skipSpace(s, k, false)
	switch {
	case after >= len(s):
		return true
	case s[after] == '\r' || s[after] == '\n':
		next := skipSpace(s, after, true)
		if next >= len(s) {
			return true
		}
		_, ok := parseHead(s, next)
		return ok
	case after > k:
		_, ok := parseHead(s, after)
		return ok
	}
	return false
}

func isNameByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == ' ' || c == '_' || c == '$' || c == '#'
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// skipSpace skips blanks and tabs, and line ends too when lines is set.
func skipSpace(s string, i int, lines bool) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || lines && (s[i] == '\n' || s[i] == '\r')) {
		i++
	}
	return i
}

func endOfLine(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(s)
}

func lineFrom(s string, i int) string { return s[i:endOfLine(s, i)] }
