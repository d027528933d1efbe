package collapse

import (
	"strconv"
	"strings"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

// FoldedFormat reads stacks that are already folded: "root;...;leaf count"
// (any stackcollapse output) or "root;...;leaf base new" (difffolded.pl,
// inferno-diff-folded), summing repeated stacks. As in flamegraph.pl the
// count is the last white-space separated number and frames may contain
// spaces. The first stack line decides between the two shapes; a line of
// the other shape is reported. Fractional counts (some tools print them)
// are truncated to integers with one warning, as inferno-flamegraph does:
// scale them up beforehand to keep the precision.
func FoldedFormat() Format {
	return Format{
		Name: "folded",
		Description: "folded stacks, \"root;...;leaf count\" per line (stackcollapse*/inferno-collapse-* output), " +
			"or \"stack base new\" differentials (difffolded.pl); repeated stacks are summed, fractional " +
			"counts truncated; counts are per-stack totals",
		Detect:   detectFolded,
		Collapse: collapseFolded,
	}
}

// detectFolded says Yes when the first stack line has the folded shape
// and either holds a ';' or the next line is folded too (a perf script
// line such as "dd 1234 250000" must not pass for a one-frame stack).
func detectFolded(prefix []byte) input.Verdict {
	good := 0
	for l := range txtDetectScan().Lines(prefix) {
		if l.Blank() {
			continue
		}
		if c := l.Text[0]; c == ' ' || c == '\t' || c == '#' || c == '@' {
			return input.No
		}
		fl, ok := parseFoldedLine(string(l.Text))
		if !ok {
			return input.No
		}
		if good++; strings.IndexByte(fl.stack, ';') >= 0 || good == 2 {
			return input.Yes
		}
	}
	return input.NeedMore
}

// foldedLine is one parsed line.
type foldedLine struct {
	stack           string
	oneCountStack   string // the stack if the line has one count
	count, base     string // decimal numbers, maybe fractional
	diff            bool   // the line has a base count
	diffAmbiguously bool   // a one-count line whose stack ends in a number
}

// parseFoldedLine splits "stack [base] count" like flamegraph.pl's
// /^(.*)\s+?(\d+(?:\.\d*)?)$/, applied twice for differentials.
func parseFoldedLine(line string) (foldedLine, bool) {
	stack, count, ok := cutFoldedNumber(strings.TrimRight(line, " \t"))
	if !ok || strings.TrimSpace(stack) == "" {
		return foldedLine{}, false
	}
	fl := foldedLine{stack: stack, oneCountStack: stack, count: count}
	if s, base, ok := cutFoldedNumber(stack); ok && strings.TrimSpace(s) != "" {
		fl.diffAmbiguously = true
		fl.base, fl.stack = base, s
	}
	return fl, true
}

// cutFoldedNumber cuts a trailing " 12" or " 12.5" off s. It walks back
// over the number only: a stack without one is not scanned to its start.
func cutFoldedNumber(s string) (rest, number string, ok bool) {
	i := len(s)
	for i > 0 && (s[i-1] >= '0' && s[i-1] <= '9' || s[i-1] == '.') {
		i--
	}
	if i == 0 || (s[i-1] != ' ' && s[i-1] != '\t') || !isFoldedNumber(s[i:]) {
		return "", "", false
	}
	return s[:i-1], s[i:], true // \s+? is lazy: only one blank goes
}

// isFoldedNumber matches \d+(\.\d*)?.
func isFoldedNumber(s string) bool {
	whole, frac, _ := strings.Cut(s, ".")
	return txtIsDigits([]byte(whole)) && (frac == "" || txtIsDigits([]byte(frac)))
}

// foldedCollapser remembers the shape chosen by the first line.
type foldedCollapser struct {
	in         Input
	p          *flame.Profile
	shapeKnown bool
	diff       bool
	shapeLine  int
	fractional int
}

func collapseFolded(in Input, _ Options, p *flame.Profile) error {
	c := foldedCollapser{in: in, p: p}
	err := txtEachLine(in, c.line)
	if c.fractional > 0 {
		in.Diag.Warn(in.Name, "%d fractional sample counts truncated to integers (scale the counts up to keep the precision)", c.fractional)
	}
	return err
}

func (c *foldedCollapser) line(l txtLine) {
	if txtIsBlank(l.text) {
		return
	}
	fl, ok := parseFoldedLine(string(l.text))
	if !ok {
		c.in.Diag.Malformed(c.in.Name, l.n, "not a folded stack (\"frame;frame;... count\"): skipped")
		return
	}
	if !c.shapeKnown {
		c.shapeKnown, c.diff, c.shapeLine = true, fl.diffAmbiguously, l.n
		c.p.Diff = c.p.Diff || c.diff
	}
	switch {
	case c.diff && !fl.diffAmbiguously:
		c.in.Diag.Malformed(c.in.Name, l.n, "one count on a line of a differential (\"stack base new\", line "+
			strconv.Itoa(c.shapeLine)+"): skipped")
		return
	case !c.diff && fl.diffAmbiguously: // a frame ending in " 12": part of the stack
		fl.stack, fl.base = fl.oneCountStack, ""
	}
	count, ok1 := c.number(fl.count)
	base, ok2 := c.number(fl.base)
	if !ok1 || !ok2 {
		c.in.Diag.Malformed(c.in.Name, l.n, "count too large: skipped")
		return
	}
	c.p.AddDiff(fl.stack, base, count)
}

// number parses a count, truncating a fraction.
func (c *foldedCollapser) number(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	whole, frac, _ := strings.Cut(s, ".")
	if strings.Trim(frac, "0") != "" {
		c.fractional++
	}
	return txtParseCount([]byte(whole))
}
