package prometheus

import (
	"strconv"
	"strings"
)

// Line kinds of the text exposition format.
const (
	lineBlank = iota
	lineComment
	lineHelp
	lineType
	lineSample
	lineBad
)

// maxTimestamp is the year 3000 in ms since the epoch.
const maxTimestamp = 32503680000000

// scanned is what the splitter needs to know about a line; expfmt does the
// real parsing of the lines that are kept.
type scanned struct {
	kind   int
	name   string // metric name (sample) or family (HELP/TYPE)
	typ    string // TYPE's kind
	series string // the sample's name and label block, as written
	hasTS  bool
	ts     int64 // sample timestamp, ms
	reason string
}

// scanLine classifies a line: "# HELP name text", "# TYPE name kind",
// another comment, or "name{labels} value [timestamp]".
func scanLine(line string) scanned {
	s := strings.TrimLeft(line, " \t")
	switch {
	case strings.TrimRight(s, " \t") == "":
		return scanned{kind: lineBlank}
	case s[0] == '#':
		return scanComment(s[1:])
	}
	return scanSample(strings.TrimRight(s, " \t"))
}

func scanComment(s string) scanned {
	f := strings.Fields(s)
	if len(f) < 2 || (f[0] != "HELP" && f[0] != "TYPE") {
		return scanned{kind: lineComment}
	}
	if !validName(f[1]) {
		return scanned{kind: lineBad, reason: "invalid metric name " + strconv.Quote(f[1]) + " in # " + f[0]}
	}
	if f[0] == "HELP" {
		return scanned{kind: lineHelp, name: f[1]}
	}
	if len(f) < 3 {
		return scanned{kind: lineComment}
	}
	return scanned{kind: lineType, name: f[1], typ: f[2]}
}

// scanSample reads "name{labels} value [timestamp]". A sample whose name is
// inside the braces (UTF-8 names) has no name here: it is never a
// histogram line latscope reads.
func scanSample(s string) scanned {
	i := 0
	for i < len(s) && nameByte(s[i], i == 0) {
		i++
	}
	name := s[:i]
	if name == "" && (s == "" || s[0] != '{') {
		return scanned{kind: lineBad, reason: "not a sample, # HELP, # TYPE or comment line"}
	}
	if i < len(s) && s[i] == '{' {
		end, ok := labelsEnd(s, i)
		if !ok {
			return scanned{kind: lineBad, reason: "unterminated label set"}
		}
		i = end
	}
	series := s[:i]
	rest := strings.Fields(s[i:])
	if len(rest) == 0 || len(rest) > 2 || (i < len(s) && s[i] != ' ' && s[i] != '\t') {
		return scanned{kind: lineBad, reason: "want NAME{LABELS} VALUE [TIMESTAMP]"}
	}
	sc := scanned{kind: lineSample, name: name, series: series}
	if len(rest) == 2 {
		ts, err := strconv.ParseInt(rest[1], 10, 64)
		if err != nil || ts < 0 || ts > maxTimestamp {
			return scanned{kind: lineBad, reason: "timestamp " + strconv.Quote(rest[1]) + " is not milliseconds between 1970 and 3000"}
		}
		sc.hasTS, sc.ts = true, ts
	}
	return sc
}

// labelsEnd returns the index just after the '}' closing the label set that
// opens at s[open], skipping quoted values with their escapes.
func labelsEnd(s string, open int) (int, bool) {
	quoted := false
	for i := open + 1; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == '}':
			return i + 1, true
		}
	}
	return 0, false
}

// nameByte says c may be part of a legacy metric name.
func nameByte(c byte, first bool) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i], i == 0) {
			return false
		}
	}
	return true
}

// histogramFamily returns the histogram family a sample name belongs to
// (x for x_bucket, x_sum, x_count), or "" when it belongs to none.
func histogramFamily(name string, isHistogram func(string) bool) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && isHistogram(base) {
			return base
		}
	}
	return ""
}
