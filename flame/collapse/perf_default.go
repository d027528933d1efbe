package collapse

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// The default reading of `perf script` text, inferno-collapse-perf's
// (0.12): a sample is an event line and every non-blank line after it up
// to a blank (or whitespace-only) line; the last sample counts even
// without a blank line after it; C++ argument lists are cut only at the
// top level (templates, lambdas and std::function<int (int)> keep their
// names); quotes stay. Differences that remain are listed in
// docs/flamegraphs.md. perf_line.go and perf_parse.go hold the Perl
// reading (--compat perl).

// lineDefault is one iteration of inferno's loop over lines.
func (p *perfParser) lineDefault(line []byte, n int, rep *perfChunkReport) {
	if len(line) > 0 && line[0] == '#' {
		return
	}
	line = perfTrimRight(line)
	switch {
	case len(line) == 0:
		p.endSample()
	case !p.active:
		p.eventLine(line, n, rep)
	case p.skipping: // a sample of another event
	default:
		if f, ok := perfStackParts(line); ok {
			p.frameDefault(f)
			return
		}
		rep.problems = append(rep.problems, perfProblem{n, "not a perf script stack line: " + perfQuote(line)})
	}
}

// eventLine starts a sample at an event line ("comm pid/tid [cpu] time:
// period event:"), which may carry a one-frame stack after the event.
func (p *perfParser) eventLine(line []byte, n int, rep *perfChunkReport) {
	h, end, ok := perfEventParts(line)
	if !ok {
		rep.problems = append(rep.problems, perfProblem{n, "not a perf script sample header: " + perfQuote(line)})
		return
	}
	p.active, p.headerAt, p.period = true, n, 1
	ev := perfEventFields(line[end:])
	if ev.hasEvent {
		p.period = perfPeriodDefault(ev.period)
		switch {
		case !p.known:
			p.filter, p.known = append(p.filter[:0], ev.event...), true
		case !bytes.Equal(ev.event, p.filter):
			p.others.add(ev.event)
			p.skipping = true
			return
		}
	}
	p.setPname(h.comm, h.pid, h.tid)
	if len(ev.single) == 0 {
		return
	}
	// Trailing text that is no stack line (a tracepoint's fields, as in
	// "sched:sched_switch: prev_comm=..."), is not read as a frame:
	// inferno does, and then loses the sample's stack lines.
	if f, ok := perfStackParts(ev.single); ok {
		p.frameDefault(f)
		p.endSample()
	}
}

// perfEventParts finds the pid (or pid/tid) word of an event line as
// inferno does: the first all-digit word after a space that a space
// follows; comm is the trimmed text before it, pid nil without a tid.
// end is the offset after the space that follows the word.
func perfEventParts(line []byte) (h perfHeader, end int, ok bool) {
	wordStart, allDigits, lastSpace, slash := 0, false, false, -1
	for i, c := range line {
		switch {
		case c == ' ':
			if allDigits && !lastSpace {
				if slash >= 0 {
					h.pid, h.tid = line[wordStart:slash], line[slash+1:i]
				} else {
					h.tid = line[wordStart:i] // pid nil: unknown
				}
				h.comm = bytes.TrimSpace(line[:wordStart-1])
				return h, i + 1, true
			}
			wordStart, allDigits = i+1, true
		case c == '/':
			if allDigits {
				slash = i
			}
		case perfDigit(c):
		default:
			allDigits, slash = false, -1
		}
		lastSpace = c == ' '
	}
	return perfHeader{}, 0, false
}

// perfEvent is what follows the pid of an event line.
type perfEvent struct {
	event, period []byte
	hasEvent      bool
	single        []byte // a one-frame stack after the event, or nil
}

// perfEventFields reads "time: period event:[rest]": the event is the
// last word between the first two colons, the period the word before it.
func perfEventFields(rest []byte) (ev perfEvent) {
	i := bytes.IndexByte(rest, ':')
	if i < 0 {
		return ev
	}
	field := rest[i+1:]
	ev.hasEvent = true
	if j := bytes.IndexByte(field, ':'); j >= 0 {
		post := field[j+1:]
		field = field[:j]
		start := bytes.IndexAny(post, ": ") + 1 // "cycles:u:  addr ..." or "cycles:  addr ..."
		ev.single = bytes.TrimSpace(post[start:])
	}
	k := bytes.LastIndexByte(field, ' ')
	if k < 0 {
		ev.event = field
		return ev
	}
	ev.event = field[k+1:]
	ev.period = field[:k]
	if m := bytes.LastIndexByte(ev.period, ' '); m >= 0 {
		ev.period = ev.period[m+1:]
	}
	return ev
}

// perfPeriodDefault parses the period as an unsigned decimal ("+" sign
// allowed); anything else counts 1. Values beyond int64 saturate.
func perfPeriodDefault(b []byte) int64 {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if len(b) == 0 {
		return 1
	}
	var v uint64
	for _, c := range b {
		if !perfDigit(c) {
			return 1
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 1 // not a u64: inferno counts 1
		}
		v = v*10 + d
	}
	return int64(min(v, math.MaxInt64))
}

// perfStackParts splits a stack line "pc rawfunc (module)" as inferno
// does: pc up to the first space, module the last space-separated word
// in parentheses, rawfunc what lies between (" " when nothing).
func perfStackParts(line []byte) (perfFrameLine, bool) {
	line = perfTrimLeft(line)
	i := bytes.IndexByte(line, ' ')
	if i < 0 {
		return perfFrameLine{}, false
	}
	pc, rest := perfTrimRight(line[:i]), line[i+1:]
	j := perfLastSpace(rest)
	if j < 0 {
		return perfFrameLine{}, false
	}
	module := rest[j+1:]
	if len(module) < 2 || module[0] != '(' || module[len(module)-1] != ')' {
		return perfFrameLine{}, false
	}
	raw := bytes.TrimSpace(rest[:j])
	if len(raw) == 0 {
		raw = []byte(" ")
	}
	return perfFrameLine{pc: pc, rawfunc: raw, module: module[1 : len(module)-1]}, true
}

// frameDefault handles one stack line of the current sample.
func (p *perfParser) frameDefault(f perfFrameLine) {
	raw := perfStripOffsetDefault(f.rawfunc)
	if len(raw) > 0 && raw[0] == '(' { // "skip process names"
		return
	}
	if perfRustHashed(raw) {
		start := len(p.arena)
		p.arena = perfFixRustSymbol(p.arena, raw)
		raw = p.arena[start:len(p.arena):len(p.arena)]
	}
	p.groups = append(p.groups, len(p.frames))
	for inlined := false; ; inlined = true {
		fn, rest, more := perfCutArrow(raw)
		p.frames = append(p.frames, p.tidy(fn, f, inlined))
		if !more {
			return
		}
		raw = rest
	}
}

// perfLastSpace is bytes.LastIndexByte(b, ' '), eight bytes at a time:
// the module path it skips is often longer than the rest of the line.
func perfLastSpace(b []byte) int {
	const ones, highs, spaces = 0x0101010101010101, 0x8080808080808080, 0x2020202020202020
	i := len(b)
	for ; i >= 8; i -= 8 {
		x := binary.LittleEndian.Uint64(b[i-8:i]) ^ spaces // space bytes now 0
		// High bit of each byte set where it is 0, exactly (no borrow
		// from the byte below, unlike (x - ones) & ^x & highs).
		zero := ^(((x &^ highs) + (highs - ones)) | x) & highs
		if zero != 0 {
			return i - 8 + (63-bits.LeadingZeros64(zero))/8
		}
	}
	return bytes.LastIndexByte(b[:i], ' ')
}

// perfCutArrow is bytes.Cut(raw, []byte("->")) by a search for '-',
// rare in symbols, instead of a two-byte substring search per frame.
func perfCutArrow(raw []byte) (before, after []byte, found bool) {
	for off := 0; ; {
		i := bytes.IndexByte(raw[off:], '-')
		if i < 0 {
			return raw, nil, false
		}
		i += off
		if i+1 < len(raw) && raw[i+1] == '>' {
			return raw[:i], raw[i+2:], true
		}
		off = i + 1
	}
}

// perfStripOffsetDefault removes a "+0x<hex>" symbol offset after the
// last "+0x". Only hex digits may follow that "+0x", and 'x' is no hex
// digit, so it is the one just before the trailing run of hex digits:
// one backward scan instead of a substring search.
func perfStripOffsetDefault(b []byte) []byte {
	h := len(b)
	for h > 0 && perfHexDigit(b[h-1]) {
		h--
	}
	if h >= 3 && b[h-3] == '+' && b[h-2] == '0' && b[h-1] == 'x' {
		return b[:h-3]
	}
	return b
}

func perfHexDigit(c byte) bool { return perfDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// perfTidyDefault rewrites b[start:] as inferno's tidy_generic: ';'
// becomes ':' and the argument list is cut (perfArgsCutDefault).
func perfTidyDefault(b []byte, start int) []byte {
	cut, _ := perfArgsCutDefault(b[start:])
	fn := b[start : start+cut]
	for i, c := range fn {
		if c == ';' {
			fn[i] = ':'
		}
	}
	return b[:start+cut]
}

// perfTidyClass marks the bytes perfArgsCutDefault looks at; the others
// are skipped with one table load.
var perfTidyClass = func() (t [256]bool) {
	for _, c := range []byte(";<{[>}]()") {
		t[c] = true
	}
	return t
}()

// perfArgsCutDefault returns where inferno's tidy_generic cuts fn: at the
// first '(' outside <>, {}, [] and () that neither follows a '.' (Go's
// "pkg.(*T).M") nor opens "(anonymous namespace)", else len(fn); and
// whether fn[:cut] holds a ';' (which tidying turns into ':'). It reads
// fn only, so a name needing no change is never copied.
func perfArgsCutDefault(fn []byte) (cut int, semicolon bool) {
	if bytes.IndexByte(fn, '(') < 0 { // two thirds of real frames: no scan
		return len(fn), bytes.IndexByte(fn, ';') >= 0
	}
	depth := 0
	for i, c := range fn {
		if !perfTidyClass[c] {
			continue
		}
		switch c {
		case ';':
			semicolon = true
		case '<', '{', '[':
			depth++
		case '>', '}', ']', ')':
			depth--
		case '(':
			if depth == 0 && (i == 0 || fn[i-1] != '.') && !bytes.HasPrefix(fn[i:], []byte("(anonymous namespace)")) {
				return i, semicolon
			}
			depth++
		}
	}
	return len(fn), semicolon
}

// perfKernelModuleDefault is inferno's kernel test: "[...]" modules,
// ".ko" files and vmlinux images, not "[unknown]".
func perfKernelModuleDefault(m []byte) bool {
	return (bytes.HasPrefix(m, []byte("[")) || bytes.HasSuffix(m, []byte(".ko")) || perfVmlinux(m)) &&
		string(m) != "[unknown]"
}

// perfVmlinux: "vmlinux" followed only by a version ("vmlinux-5.4.14").
func perfVmlinux(m []byte) bool {
	i := bytes.LastIndex(m, []byte("vmlinux"))
	if i < 0 {
		return false
	}
	for _, c := range m[i:] {
		if !perfWord(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// perfJITModuleDefault is inferno's JIT test: /tmp/perf-PID.map or a
// jitted-*.so of perf inject --jit.
func perfJITModuleDefault(m []byte) bool {
	return (bytes.HasPrefix(m, []byte("/tmp/perf-")) && bytes.HasSuffix(m, []byte(".map"))) ||
		(bytes.Contains(m, []byte("/jitted-")) && bytes.HasSuffix(m, []byte(".so")))
}

// perfTrimLeft drops leading white space (Unicode's, as inferno's
// trim_start), with a fast path for ASCII.
func perfTrimLeft(b []byte) []byte {
	for i, c := range b {
		if c >= utf8.RuneSelf {
			return bytes.TrimLeftFunc(b[i:], unicode.IsSpace)
		}
		if !perfSpace(c) {
			return b[i:]
		}
	}
	return nil
}

// perfTrimRight drops trailing white space (Unicode's, as inferno's
// trim_end), with a fast path for ASCII.
func perfTrimRight(b []byte) []byte {
	for len(b) > 0 {
		c := b[len(b)-1]
		if c < utf8.RuneSelf {
			if !perfSpace(c) {
				return b
			}
			b = b[:len(b)-1]
			continue
		}
		r, size := utf8.DecodeLastRune(b)
		if !unicode.IsSpace(r) {
			return b
		}
		b = b[:len(b)-size]
	}
	return b
}

// rustHashLen is the length of a legacy Rust symbol hash "h<16 hex>".
const rustHashLen = 17

// perfRustHashed reports whether sym ends with a Rust hash, the mark of
// a symbol the profiler demangled only in part.
func perfRustHashed(sym []byte) bool {
	if len(sym) < rustHashLen || sym[len(sym)-rustHashLen] != 'h' {
		return false
	}
	for _, c := range sym[len(sym)-rustHashLen+1:] {
		if !perfHexDigit(c) {
			return false
		}
	}
	return true
}

// rustEscapes are the $..$ escapes of legacy Rust mangling.
var rustEscapes = []struct{ from, to string }{
	{"$SP$", "@"}, {"$BP$", "*"}, {"$RF$", "&"}, {"$LT$", "<"}, {"$GT$", ">"}, {"$LP$", "("}, {"$RP$", ")"},
	{"$C$", ","}, {"$u7e$", "~"}, {"$u20$", " "}, {"$u27$", "'"}, {"$u3d$", "="}, {"$u5b$", "["}, {"$u5d$", "]"},
	{"$u7b$", "{"}, {"$u7d$", "}"}, {"$u3b$", ";"}, {"$u2b$", "+"}, {"$u21$", "!"}, {"$u22$", "\""},
}

// perfFixRustSymbol appends sym (perfRustHashed) to dst with its hash
// dropped and its legacy escapes decoded ("_$LT$a..B$GT$::f::h0123..." →
// "<a::B>::f"), as inferno does for partly demangled Rust symbols.
func perfFixRustSymbol(dst, sym []byte) []byte {
	rest := sym[:len(sym)-rustHashLen]
	rest = bytes.TrimSuffix(rest, []byte("::"))
	if bytes.HasPrefix(rest, []byte("_$")) {
		rest = rest[1:]
	}
	for len(rest) > 0 {
		switch rest[0] {
		case '.':
			if len(rest) > 1 && rest[1] == '.' {
				dst, rest = append(dst, "::"...), rest[2:]
			} else {
				dst, rest = append(dst, '.'), rest[1:]
			}
		case '$':
			n := len(dst)
			for _, e := range rustEscapes {
				if bytes.HasPrefix(rest, []byte(e.from)) {
					dst, rest = append(dst, e.to...), rest[len(e.from):]
					break
				}
			}
			if len(dst) == n { // unknown escape: the rest as it is
				return append(dst, rest...)
			}
		default:
			i := bytes.IndexAny(rest, "$.")
			if i < 0 {
				i = len(rest)
			}
			dst, rest = append(dst, rest[:i]...), rest[i:]
		}
	}
	return dst
}
