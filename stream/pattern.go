package stream

import (
	"fmt"
	"regexp"
	"strings"
)

// SeriesPattern compiles a --series glob (*, ?, [classes], backslash escapes)
// into an anchored regular expression; stores select a series when it
// matches the series' event or its source.
func SeriesPattern(pattern string) (*regexp.Regexp, error) {
	var re strings.Builder
	re.WriteString("^(?s:")
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '*':
			re.WriteString(".*")
		case '?':
			re.WriteString(".")
		case '[':
			end := strings.IndexByte(pattern[i+1:], ']')
			if end < 0 {
				return nil, fmt.Errorf("series pattern %q: unclosed [", pattern)
			}
			// A class reads as in path.Match and in regexp alike: [abc],
			// [a-z], [^a-z].
			re.WriteString(pattern[i : i+2+end])
			i += end + 1
		case '\\':
			if i+1 < len(pattern) {
				i++
			}
			re.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		default:
			re.WriteString(regexp.QuoteMeta(pattern[i : i+1])) // bytes, so that UTF-8 stays whole
		}
	}
	re.WriteString(")$")
	r, err := regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("series pattern %q: %w", pattern, err)
	}
	return r, nil
}
