package collapse

import (
	"bytes"
	"hash/maphash"
	"iter"
	"math"
)

// perfSettings are the options one parser applies (fixed for a run).
type perfSettings struct {
	perl                         bool // stackcollapse-perf.pl's reading (--compat perl)
	pid, tid, kernel, jit, addrs bool
	hook                         func(name, module string) string
	seed                         maphash.Seed // of every parser's perfStackSet (set by perfRun)
}

func newPerfSettings(o Options) perfSettings {
	return perfSettings{perl: o.Perl, pid: o.PID, tid: o.TID, kernel: o.Kernel || o.All, jit: o.JIT || o.All, addrs: o.Addrs, hook: o.FrameHook}
}

// perfEntry is one distinct folded stack: its weight and where it first
// appeared (chunk<<32 | sample number) so the merged order is the input's.
type perfEntry struct {
	count int64
	first uint64
}

// perfProblem is a skipped line (line number absolute in the input).
type perfProblem struct {
	line   int
	reason string
}

// perfChunkReport is what parsing one chunk found besides stacks.
type perfChunkReport struct {
	lines    int // lines in the chunk
	problems []perfProblem
	// openSample is the header line of a sample still open at the chunk's
	// end (0: none); only meaningful for the input's last chunk.
	openSample int
}

// perfParser is stackcollapse-perf.pl's main loop over lines, with its
// per-sample state, accumulating stacks into its own map. One per worker.
type perfParser struct {
	set perfSettings
	// filter is the kept event; known says whether it is decided (an
	// explicit --event-filter or the first event of the input).
	filter []byte
	known  bool
	others perfEventCounts // samples skipped per other event

	// Current sample (perl's $pname, @stack, $m_period).
	active    bool
	skipping  bool // a sample of another event (default reading only)
	pname     []byte
	java      bool // pname starts with "java": tidy Java class names
	period    int64
	headerAt  int
	frames    [][]byte // frames, grouped per stack line
	groups    []int    // start of each stack line's frames in frames
	arena     []byte   // storage of rewritten frames for this sample
	detached  int      // frames[:detached] are in arena, not in the chunk
	key       []byte
	sampleSeq uint64

	stacks perfStackSet
}

func newPerfParser(set perfSettings) *perfParser {
	return &perfParser{set: set, stacks: newPerfStackSet(set.seed),
		arena: make([]byte, 0, 4096), key: make([]byte, 0, 1024)}
}

// parseChunk parses whole lines of data, the first being line firstLine of
// the input; chunk is the chunk's order in the input.
func (p *perfParser) parseChunk(data []byte, chunk uint64, firstLine int) perfChunkReport {
	var rep perfChunkReport
	p.sampleSeq = chunk << 32
	n := firstLine
	for line := range perfLines(data) {
		p.line(line, n, &rep)
		n++
	}
	rep.lines = n - firstLine
	if p.active {
		rep.openSample = p.headerAt
		p.detach()
	}
	return rep
}

// perfLines yields the lines of data without their '\n'.
func perfLines(data []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for len(data) > 0 {
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if !yield(line) {
				return
			}
		}
	}
}

// detach copies the open sample's frames that still point into the
// chunk, which is about to be reused, into the parser's arena, for a
// sample that goes on in the next chunk. Frames detached before are not
// copied again, so a sample cut into many chunks costs its size once.
func (p *perfParser) detach() {
	for i := p.detached; i < len(p.frames); i++ {
		start := len(p.arena)
		p.arena = append(p.arena, p.frames[i]...)
		p.frames[i] = p.arena[start:len(p.arena):len(p.arena)]
	}
	p.detached = len(p.frames)
}

// line reads one line: the script's main loop, or inferno's by default.
func (p *perfParser) line(line []byte, n int, rep *perfChunkReport) {
	if !p.set.perl {
		p.lineDefault(line, n, rep)
		return
	}
	if len(line) == 0 {
		p.endSample()
		return
	}
	if line[0] == '#' {
		return
	}
	if h, ok := perfMatchHeader(line); ok {
		p.header(line, h, n)
		return
	}
	if f, ok := perfMatchFrame(line); ok {
		if p.active {
			p.frame(f)
		}
		return
	}
	rep.problems = append(rep.problems, perfProblem{n, "not a perf script sample header or stack line: " + perfQuote(line)})
}

// header starts a sample (or skips one of a filtered-out event: as in the
// script, the previous sample's state is then left as it was).
func (p *perfParser) header(line []byte, h perfHeader, n int) {
	event, period, hasEvent := perfMatchEvent(line)
	if hasEvent {
		switch {
		case !p.known:
			p.filter, p.known = append(p.filter[:0], event...), true
		case !bytes.Equal(event, p.filter):
			p.others.add(event)
			return
		}
	}
	p.period = perfPeriod(period)
	pid, tid := h.pid, h.tid
	if len(tid) == 0 || (len(tid) == 1 && tid[0] == '0') { // perl: not $tid
		pid, tid = nil, pid
	}
	p.setPname(h.comm, pid, tid)
	p.active = true
	p.headerAt = n
}

// setPname makes the root frame: comm (blanks as '_'), with -PID or
// -PID/TID as the options ask; a nil pid is unknown ("?").
func (p *perfParser) setPname(comm, pid, tid []byte) {
	if pid == nil {
		pid = perfUnknownPID[:]
	}
	p.pname = append(p.pname[:0], comm...)
	if p.set.tid {
		p.pname = append(append(append(append(p.pname, '-'), pid...), '/'), tid...)
	} else if p.set.pid {
		p.pname = append(append(p.pname, '-'), pid...)
	}
	for i, c := range p.pname {
		if c == ' ' {
			p.pname[i] = '_'
		}
	}
	p.java = bytes.HasPrefix(p.pname, []byte("java"))
}

// perfUnknownPID is the pid written for samples that name only a tid
// (an array, so no caller can grow it).
var perfUnknownPID = [1]byte{'?'}

// perfEventCounts counts skipped samples per event. Events are few, so a
// slice searched in order beats a map keyed by a string made per sample.
type perfEventCounts []perfEventCount

type perfEventCount struct {
	event string
	n     int64
}

func (c *perfEventCounts) add(event []byte) {
	for i := range *c {
		if (*c)[i].event == string(event) {
			(*c)[i].n++
			return
		}
	}
	*c = append(*c, perfEventCount{string(event), 1})
}

// perfPeriod is the sample weight: the period column, 1 when absent or
// "0" (perl: not $period); saturated at MaxInt64.
func perfPeriod(b []byte) int64 {
	if len(b) == 0 || (len(b) == 1 && b[0] == '0') {
		return 1
	}
	var v int64
	for _, c := range b {
		d := int64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			return math.MaxInt64
		}
		v = v*10 + d
	}
	return v
}

// endSample is the blank line: record the sample's stack.
func (p *perfParser) endSample() {
	if !p.active {
		return
	}
	if len(p.frames) > 0 {
		p.record()
	}
	p.active, p.skipping = false, false
	p.detached = 0
	p.frames = p.frames[:0]
	p.groups = p.groups[:0]
	p.arena = p.arena[:0]
}

// record adds "pname;root;...;leaf" (stack lines come leaf first).
func (p *perfParser) record() {
	k := append(p.key[:0], p.pname...)
	end := len(p.frames)
	for g := len(p.groups) - 1; g >= 0; g-- {
		for _, f := range p.frames[p.groups[g]:end] {
			k = append(append(k, ';'), f...)
		}
		end = p.groups[g]
	}
	p.key = k
	if p.stacks.addBytes(k, p.period, p.sampleSeq) {
		p.sampleSeq++
	}
}

// frame handles one stack line of the current sample.
func (p *perfParser) frame(f perfFrameLine) {
	raw := perfStripOffset(f.rawfunc)
	if len(raw) > 0 && raw[0] == '(' { // "skip process names"
		return
	}
	p.groups = append(p.groups, len(p.frames))
	parts := 0
	// perl's split /->/ drops trailing empty fields only.
	for bytes.HasSuffix(raw, []byte("->")) {
		raw = raw[:len(raw)-2]
	}
	for more := len(raw) > 0; more; {
		fn := raw
		if i := bytes.Index(raw, []byte("->")); i >= 0 {
			fn, raw = raw[:i], raw[i+2:]
		} else {
			more = false
		}
		p.frames = append(p.frames, p.tidy(fn, f, parts > 0))
		parts++
	}
	if parts == 0 {
		p.groups = p.groups[:len(p.groups)-1]
	}
}

// perfStripOffset removes a trailing "+0x<lower hex>" symbol offset.
func perfStripOffset(b []byte) []byte {
	h := len(b)
	for h > 0 && (perfDigit(b[h-1]) || (b[h-1] >= 'a' && b[h-1] <= 'f')) {
		h--
	}
	if h < len(b) && h >= 3 && b[h-3] == '+' && b[h-2] == '0' && b[h-1] == 'x' {
		return b[:h-3]
	}
	return b
}

// perfSpecial marks bytes that make a function name need rewriting by
// the script.
var perfSpecial = [256]bool{';': true, '(': true, '"': true, '\'': true}

// tidy returns the frame's name as the script writes it, then rewritten by
// the options' FrameHook (the database decoder's marker) when there is one.
func (p *perfParser) tidy(fn []byte, f perfFrameLine, inlined bool) []byte {
	name := p.tidyName(fn, f, inlined)
	if p.set.hook == nil {
		return name
	}
	start := len(p.arena)
	p.arena = append(p.arena, p.set.hook(string(name), string(f.module))...)
	return p.arena[start:len(p.arena):len(p.arena)]
}

// tidyName applies the script's per-function rewriting: [unknown]
// fallback, generic tidying, Java class names, and the _[i]/_[k]/_[j]
// annotations. It returns fn itself when nothing changes (the common case).
func (p *perfParser) tidyName(fn []byte, f perfFrameLine, inlined bool) []byte {
	suffix := p.annotation(f.module, inlined)
	plain := len(fn) == 0 || (fn[0] != '[' && !(p.java && fn[0] == 'L'))
	if plain && suffix == "" && !p.set.perl {
		// The default reading only cuts the name or changes ';': cutting
		// needs no copy, so one pass decides and usually nothing is written.
		if cut, semicolon := perfArgsCutDefault(fn); !semicolon {
			return fn[:cut:cut]
		}
		plain = false
	}
	for _, c := range fn {
		if perfSpecial[c] {
			plain = false
			break
		}
	}
	if plain && suffix == "" {
		return fn
	}
	start := len(p.arena)
	if string(fn) == "[unknown]" {
		name := []byte("unknown")
		if string(f.module) != "[unknown]" {
			name = f.module[bytes.LastIndexByte(f.module, '/')+1:]
		}
		p.arena = append(append(p.arena, '['), name...)
		if p.set.addrs {
			p.arena = append(append(append(p.arena, " <"...), f.pc...), '>')
		}
		p.arena = append(p.arena, ']')
	} else {
		p.arena = append(p.arena, fn...)
	}
	if p.set.perl {
		p.arena = perfTidyGeneric(p.arena, start)
	} else {
		p.arena = perfTidyDefault(p.arena, start)
	}
	if p.java && len(p.arena) > start && p.arena[start] == 'L' && bytes.IndexByte(p.arena[start:], '/') >= 0 {
		p.arena = append(p.arena[:start], p.arena[start+1:]...)
	}
	switch {
	case suffix == "":
	case suffix == "_[k]" || !bytes.Contains(p.arena[start:], []byte(suffix)):
		p.arena = append(p.arena, suffix...)
	}
	// Later appends never write below len (a reallocation copies), so the
	// frame stays valid until the sample ends.
	return p.arena[start:len(p.arena):len(p.arena)]
}

// annotation returns the suffix the options add to a frame of module.
func (p *perfParser) annotation(module []byte, inlined bool) string {
	kernel, jit := perfKernelModuleDefault, perfJITModuleDefault
	if p.set.perl {
		kernel, jit = perfKernelModule, perfJITModule
	}
	switch {
	case inlined:
		return "_[i]"
	case p.set.kernel && kernel(module):
		return "_[k]"
	case p.set.jit && jit(module):
		return "_[j]"
	}
	return ""
}

// perfKernelModule is the script's kernel test: /(^\[|vmlinux$)/ and not
// /unknown/ ("[kernel.kallsyms]", "[nf_conntrack]", ".../vmlinux").
func perfKernelModule(m []byte) bool {
	return (bytes.HasPrefix(m, []byte("[")) || bytes.HasSuffix(m, []byte("vmlinux"))) &&
		!bytes.Contains(m, []byte("unknown"))
}

// perfJITModule is the script's JIT test: m:/tmp/perf-\d+\.map:.
func perfJITModule(m []byte) bool {
	for {
		i := bytes.Index(m, []byte("/tmp/perf-"))
		if i < 0 {
			return false
		}
		m = m[i+len("/tmp/perf-"):]
		d := 0
		for d < len(m) && perfDigit(m[d]) {
			d++
		}
		if d > 0 && bytes.HasPrefix(m[d:], []byte(".map")) {
			return true
		}
	}
}

// perfTidyGeneric rewrites b[start:] as the script's $tidy_generic: ';'
// becomes ':', the argument list is cut (from the first '(' not opening
// "(anonymous namespace)", unless the name looks like a Go method
// ".(*T)."), and quotes are dropped.
func perfTidyGeneric(b []byte, start int) []byte {
	fn := b[start:]
	for i, c := range fn {
		if c == ';' {
			fn[i] = ':'
		}
	}
	if !perfGoMethod(fn) {
		for i := 0; i < len(fn); i++ {
			if fn[i] == '(' && !bytes.HasPrefix(fn[i+1:], []byte("anonymous namespace)")) {
				fn = fn[:i]
				break
			}
		}
	}
	out := fn[:0]
	for _, c := range fn {
		if c != '"' && c != '\'' {
			out = append(out, c)
		}
	}
	return b[:start+len(out)]
}

// perfGoMethod matches /\.\(.*\)\./.
func perfGoMethod(fn []byte) bool {
	i := bytes.Index(fn, []byte(".("))
	return i >= 0 && bytes.LastIndex(fn, []byte(").")) >= i+2
}

// perfQuote shortens a bad line for a message.
func perfQuote(line []byte) string {
	const max = 80
	s := line
	if len(s) > max {
		s = s[:max]
	}
	q := make([]byte, 0, len(s)+8)
	q = append(q, '"')
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '"' {
			q = append(q, '.')
		} else {
			q = append(q, c)
		}
	}
	q = append(q, '"')
	if len(line) > max {
		q = append(q, "..."...)
	}
	return string(q)
}
