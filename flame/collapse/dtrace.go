package collapse

import (
	"bytes"
	"strings"
	"unicode"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/input"
)

// DTraceFormat collapses DTrace stack()/ustack() aggregation output as
// inferno-collapse-dtrace does (or as FlameGraph's stackcollapse.pl with
// Options.Perl): frames one per line (leaf first), then the count on a
// line of its own. Offsets ("+0x1c") are stripped, C++ argument lists and
// template arguments cut after the last "::" part ("ns::C::f(int)" →
// "ns::C::f"), ';' in names becomes ':', "a->b" inline chains become
// "a;b_[i]", empty frames "-". By default the lines above the first blank
// line are a header and skipped, Rust symbols with a hash are demangled
// and inlined Java frames lose their leading 'L's, as in inferno.
func DTraceFormat() Format {
	return Format{
		Name: "dtrace",
		Description: "DTrace stack()/ustack() aggregation output (dtrace -n '... { @[ustack()] = count(); }'): " +
			"frames leaf first, then a count line; recognised by the \"CPU ID FUNCTION:NAME\" header or " +
			"module`function frames; counts are per-stack totals",
		Detect:   detectDTrace,
		Collapse: collapseDTrace,
	}
}

// detectDTrace says Yes when the first lines (after dtrace's "CPU ID
// FUNCTION:NAME" header and probe line, absent with dtrace -q) are an
// indented stack: a module`function frame, or raw-address frames followed
// by a count. A DTrace quantize() histogram or any text is refused.
func detectDTrace(prefix []byte) input.Verdict {
	others, addrs := 0, 0
	skip := 0 // lines to pass over: dtrace's header and probe line
	for l := range txtDetectScan().Lines(prefix) {
		line := l.Text
		if l.N == 1 && isDTraceHeader(line) {
			skip = 2
		}
		if l.N <= skip || l.Blank() {
			continue
		}
		text := bytes.TrimSpace(line)
		switch {
		case !txtIsIndented(line) || bytes.Contains(line, []byte(" : ")) || bytes.IndexByte(line, '|') >= 0:
			return input.No
		case bytes.IndexByte(text, '`') > 0:
			return input.Yes
		case txtIsDigits(text) && addrs > 0:
			return input.Yes
		case bytes.HasPrefix(text, []byte("0x")) && bytes.IndexByte(text, ' ') < 0:
			addrs++
		default: // an aggregation key such as execname may precede a stack
			if others++; others > 3 {
				return input.No
			}
		}
	}
	return input.NeedMore
}

// isDTraceHeader matches dtrace's "CPU     ID    FUNCTION:NAME" line.
func isDTraceHeader(line []byte) bool {
	f := bytes.Fields(line)
	return len(f) == 3 && string(f[0]) == "CPU" && string(f[1]) == "ID" && string(f[2]) == "FUNCTION:NAME"
}

func collapseDTrace(in Input, opts Options, p *flame.Profile) error {
	if opts.Perl {
		return collapseDTracePerl(in, p)
	}
	c := stackCounter{in: in, p: p}
	h := dtraceHeader{inHeader: true}
	err := txtEachLine(in, func(l txtLine) {
		for _, l := range h.pass(l) {
			c.line(l, dtraceFrameDefault)
		}
	})
	for _, l := range h.end() {
		c.line(l, dtraceFrameDefault)
	}
	c.finish()
	return err
}

// dtraceHeader holds back the lines above the first blank line: inferno
// skips them as dtrace's header ("CPU ID FUNCTION:NAME", the probe line,
// or anything else printed there). When they hold a count line they are
// a stack (output of dtrace -q without a blank line first) and are kept,
// where inferno loses that stack.
type dtraceHeader struct {
	inHeader bool
	held     []txtLine
	count    bool
}

// pass returns the lines to collapse now.
func (h *dtraceHeader) pass(l txtLine) []txtLine {
	if !h.inHeader {
		return []txtLine{l}
	}
	text := bytes.TrimSpace(l.text)
	if len(text) > 0 {
		h.held = append(h.held, txtLine{n: l.n, text: bytes.Clone(l.text)})
		h.count = h.count || txtIsDigits(text)
		return nil
	}
	return h.end()
}

// end closes the header: the held lines if they are a stack.
func (h *dtraceHeader) end() []txtLine {
	h.inHeader = false
	held := h.held
	h.held = nil
	if h.count {
		return held
	}
	return nil
}

// collapseDTracePerl reads as stackcollapse.pl does, but drops the first
// lines only when they are dtrace's header.
func collapseDTracePerl(in Input, p *flame.Profile) error {
	c := stackCounter{in: in, p: p}
	skip := 0 // header lines still to skip
	err := txtEachLine(in, func(l txtLine) {
		// stackcollapse.pl drops the first three lines unconditionally;
		// we drop them only when they are dtrace's header, so the first
		// stack of `dtrace -q` output is kept.
		if l.n == 1 && isDTraceHeader(l.text) {
			skip = 2
			return
		}
		if skip > 0 && l.n <= 3 {
			skip--
			return
		}
		c.line(l, dtraceFrame)
	})
	c.finish()
	return err
}

// dtraceFrameDefault tidies one DTrace frame like inferno: dtraceFrame's
// steps, plus Rust symbols demangled in full and the leading 'L's of Java
// class names dropped from inline chains.
func dtraceFrameDefault(frame string) string {
	inlines := strings.Contains(frame, "->") // before the offset goes, as inferno tests
	if i := strings.LastIndexByte(frame, '+'); i >= 0 {
		frame = frame[:i]
	}
	frame = stripCxxArgs(frame)
	if frame == "" {
		return "-"
	}
	frame = dtraceFixRust(frame)
	if !inlines {
		return strings.ReplaceAll(frame, ";", ":")
	}
	parts := strings.Split(frame, "->")
	for i, part := range parts {
		parts[i] = strings.ReplaceAll(strings.TrimLeft(part, "L"), ";", ":")
		if i > 0 {
			parts[i] += "_[i]"
		}
	}
	return strings.Join(parts, ";")
}

// dtraceFixRust demangles the function of a "module`function" frame that
// DTrace left partly mangled (a Rust hash at its end).
func dtraceFixRust(frame string) string {
	module, fn, ok := strings.Cut(frame, "`")
	fn = strings.TrimRightFunc(fn, unicode.IsSpace)
	if !ok || !perfRustHashed([]byte(fn)) {
		return frame
	}
	return module + "`" + string(perfFixRustSymbol(nil, []byte(fn)))
}

// dtraceFrame tidies one DTrace frame like stackcollapse.pl.
func dtraceFrame(frame string) string {
	if i := strings.LastIndexByte(frame, '+'); i >= 0 {
		frame = frame[:i]
	}
	frame = stripCxxArgs(frame)
	if frame == "" {
		return "-"
	}
	if !strings.Contains(frame, "->") {
		return strings.ReplaceAll(frame, ";", ":")
	}
	parts := strings.Split(frame, "->")
	for i, part := range parts {
		parts[i] = strings.ReplaceAll(part, ";", ":")
		if i > 0 {
			parts[i] += "_[i]"
		}
	}
	return strings.Join(parts, ";")
}

// stripCxxArgs applies stackcollapse.pl's s/(::.*)[(<].*/$1/: after the
// first "::", everything from the last '(' or '<' on is cut.
func stripCxxArgs(frame string) string {
	i := strings.Index(frame, "::")
	if i < 0 {
		return frame
	}
	if j := strings.LastIndexAny(frame[i+2:], "(<"); j >= 0 {
		return frame[:i+2+j]
	}
	return frame
}

// stackCounter gathers "frames then a count line" stacks (DTrace and
// SystemTap): non-blank lines are frames, leaf first, until a line holding
// only digits gives the count.
type stackCounter struct {
	in     Input
	p      *flame.Profile
	frames []string // leaf first
	first  int      // line of the first pending frame
	join   strings.Builder
}

func (c *stackCounter) line(l txtLine, tidy func(string) string) {
	text := bytes.TrimSpace(l.text)
	if len(text) == 0 {
		return
	}
	if !txtIsDigits(text) {
		if len(c.frames) == 0 {
			c.first = l.n
		}
		c.frames = append(c.frames, tidy(string(text)))
		return
	}
	count, ok := txtParseCount(text)
	switch {
	case !ok:
		c.in.Diag.Malformed(c.in.Name, l.n, "count "+string(text)+" too large: stack skipped")
	case len(c.frames) == 0:
		c.in.Diag.Malformed(c.in.Name, l.n, "count "+string(text)+" without a stack before it: skipped")
	default:
		c.p.Add(c.folded(), count)
	}
	c.frames = c.frames[:0]
}

// folded joins the pending frames root first.
func (c *stackCounter) folded() string {
	c.join.Reset()
	for i := len(c.frames) - 1; i >= 0; i-- {
		c.join.WriteString(c.frames[i])
		if i > 0 {
			c.join.WriteByte(';')
		}
	}
	return c.join.String()
}

// finish reports a stack cut off before its count line.
func (c *stackCounter) finish() {
	if len(c.frames) > 0 {
		c.in.Diag.Malformed(c.in.Name, c.first, "stack without a count line at the end of the input (truncated?): skipped")
	}
}
