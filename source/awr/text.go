package awr

import (
	"fmt"
	"strconv"
	"strings"
)

// Text helpers: numbers as Oracle tools print them, SQL*Plus chatter.

func listEvents(evs []string) string {
	const show = 5
	qs := make([]string, 0, show)
	for i, e := range evs {
		if i == show {
			qs = append(qs, fmt.Sprintf("and %d more", len(evs)-show))
			break
		}
		qs = append(qs, strconv.Quote(e))
	}
	return strings.Join(qs, ", ")
}

// parseNumber reads a number as SQL*Plus, SQLcl or a spreadsheet prints it:
// ".5", "1.8014E+16", or with a decimal comma ("0,5") under a European
// NLS_NUMERIC_CHARACTERS.
func parseNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty number")
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
		case c == ',':
		default:
			return 0, fmt.Errorf("%q is not a number", s)
		}
	}
	if strings.IndexByte(s, ',') >= 0 {
		if strings.IndexByte(s, '.') >= 0 || strings.Count(s, ",") > 1 {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		s = strings.Replace(s, ",", ".", 1)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// chatterPrefixes start the lines SQL*Plus and SQLcl print around query
// output; they are skipped, not reported.
var chatterPrefixes = []string{
	"SQL>", "SQL*Plus:", "SQLcl:", "Elapsed:", "Connected", "Disconnected from", "Enter password:", "Copyright",
	"Last Successful login", "Oracle Database", "Version ", "PL/SQL procedure successfully completed",
	"Session altered", "Commit complete", "no rows selected",
}

// isChatter says a trimmed line is SQL*Plus output that is not a row:
// banners, feedback ("12 rows selected."), verify lines ("old   3: ...").
func isChatter(t string) bool {
	for _, pre := range chatterPrefixes {
		if strings.HasPrefix(t, pre) {
			return true
		}
	}
	if num, rest, ok := strings.Cut(t, " "); ok && isDigits(num) &&
		(rest == "rows selected." || rest == "row selected." || rest == "rows selected" || rest == "row selected") {
		return true
	}
	if pre, rest, ok := strings.Cut(t, " "); ok && (pre == "old" || pre == "new") {
		num, _, ok := strings.Cut(strings.TrimLeft(rest, " "), ":")
		return ok && isDigits(num)
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// hasFold says s contains the lower-case ASCII word w in any case.
func hasFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}
