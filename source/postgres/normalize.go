package postgres

import (
	"strings"
	"unicode/utf8"
)

// maxStatementLen is the length (bytes) a normalised statement is cut to,
// so that series names stay readable.
const maxStatementLen = 100

// Normalize turns a statement into its series name: string literals,
// numbers and $n parameters become "?" (so the simple and the prepared
// protocol's forms of a statement share a series, like pg_stat_statements'
// query texts), whitespace runs become one space, and the result is cut to
// 100 bytes with a trailing "…".
func Normalize(stmt string) string { return normalize(stmt, maxStatementLen) }

// normalize normalises stmt, cut to limit bytes.
func normalize(stmt string, limit int) string {
	var b strings.Builder
	b.Grow(min(len(stmt), limit+8))
	space := false
	prevIdent := false // the previous byte continues an identifier
	for i := 0; i < len(stmt) && b.Len() <= limit; {
		c := stmt[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			space = true
			prevIdent = false
			i++
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		switch {
		case c == '\'':
			i = skipQuoted(stmt, i)
			b.WriteByte('?')
			prevIdent = false
		case c == '$' && !prevIdent && i+1 < len(stmt) && isDigit(stmt[i+1]):
			i = skipDigits(stmt, i+1)
			b.WriteByte('?')
			prevIdent = false
		case isDigit(c) && !prevIdent, c == '-' && unaryMinus(stmt, i, b.String()):
			if c == '-' {
				i++
			}
			i = skipNumber(stmt, i)
			b.WriteByte('?')
			prevIdent = false
		default:
			b.WriteByte(c)
			prevIdent = isIdentByte(c)
			i++
		}
	}
	s := b.String()
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// unaryMinus says the '-' at i starts a negative number: a digit follows
// and what was written before is not an operand (an identifier, a number
// or a closing parenthesis), as in "x + -3" or "in (-1, -2)".
func unaryMinus(s string, i int, written string) bool {
	if i+1 >= len(s) || !isDigit(s[i+1]) {
		return false
	}
	written = strings.TrimRight(written, " ")
	if written == "" {
		return true
	}
	last := written[len(written)-1]
	return !isIdentByte(last) && last != ')' && last != '?' && last != ']'
}

// skipQuoted returns the index after the string literal starting at i
// (a doubled quote is an escaped quote); an unterminated literal runs to the end.
func skipQuoted(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] != '\'' {
			continue
		}
		if j+1 < len(s) && s[j+1] == '\'' {
			j++
			continue
		}
		return j + 1
	}
	return len(s)
}

func skipDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// skipNumber returns the index after the numeric literal at i: digits, an
// optional fraction and an optional exponent.
func skipNumber(s string, i int) int {
	i = skipDigits(s, i)
	if i < len(s) && s[i] == '.' {
		i = skipDigits(s, i+1)
	}
	if i+1 < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if s[j] == '+' || s[j] == '-' {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			i = skipDigits(s, j)
		}
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
