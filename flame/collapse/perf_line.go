package collapse

// Line matchers for `perf script` text, byte-for-byte equivalent to the
// regular expressions of FlameGraph's stackcollapse-perf.pl (perl matches
// bytes, leftmost-first with backtracking; the hand-written matchers below
// reproduce the captures the backtracking would find, without its cost).
// perf_line_test.go checks them against Go regexps of the same patterns.

// perfSpace is perl's \s on byte strings: space, \t, \n, \v, \f, \r.
func perfSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func perfDigit(c byte) bool { return c >= '0' && c <= '9' }

// perfWord is perl's \w on byte strings (ASCII only).
func perfWord(c byte) bool {
	return perfDigit(c) || c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// perfHeader holds the captures of the sample header regex
// /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/: comm, pid and (maybe empty) tid.
type perfHeader struct {
	comm, pid, tid []byte
}

// perfMatchHeader matches /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/. The lazy comm
// ends at the first whitespace (at offset >= 2) after which the rest
// matches.
func perfMatchHeader(line []byte) (perfHeader, bool) {
	if len(line) < 4 || perfSpace(line[0]) || line[0] == '\n' || line[1] == '\n' {
		return perfHeader{}, false
	}
	for e := 2; e < len(line); e++ {
		if line[e] == '\n' { // perl's . stops at a newline (never in a chomped line)
			break
		}
		if !perfSpace(line[e]) || (e > 2 && perfSpace(line[e-1])) {
			continue // candidates are the first blank of each run (from offset 2)
		}
		if h, ok := perfMatchHeaderRest(line, e); ok {
			h.comm = line[:e]
			return h, true
		}
	}
	return perfHeader{}, false
}

// perfMatchHeaderRest matches \s+(\d+)\/*(\d+)*\s+ at line[e:].
func perfMatchHeaderRest(line []byte, e int) (perfHeader, bool) {
	i := e
	for i < len(line) && perfSpace(line[i]) {
		i++
	}
	d := i
	for i < len(line) && perfDigit(line[i]) {
		i++
	}
	if i == d || i == len(line) {
		return perfHeader{}, false
	}
	h := perfHeader{pid: line[d:i]}
	if perfSpace(line[i]) {
		return h, true
	}
	if line[i] != '/' {
		return perfHeader{}, false
	}
	for i < len(line) && line[i] == '/' {
		i++
	}
	t := i
	for i < len(line) && perfDigit(line[i]) {
		i++
	}
	if i == len(line) || !perfSpace(line[i]) {
		return perfHeader{}, false
	}
	h.tid = line[t:i]
	return h, true
}

// perfMatchEvent matches /:\s*(\d+)*\s+(\S+):\s*$/ anywhere in line: the
// event is the last word (which ends with ':'), optionally preceded by a
// period, after a ':' (the timestamp's). ok is false when the line names
// no event.
func perfMatchEvent(line []byte) (event, period []byte, ok bool) {
	end := len(line)
	for end > 0 && perfSpace(line[end-1]) {
		end--
	}
	if end == 0 || line[end-1] != ':' {
		return nil, nil, false
	}
	tok := end - 1 // start of the last word
	for tok > 0 && !perfSpace(line[tok-1]) {
		tok--
	}
	if tok == end-1 || tok == 0 {
		return nil, nil, false
	}
	event = line[tok : end-1]
	a := tok // start of the blank run before the word
	for a > 0 && perfSpace(line[a-1]) {
		a--
	}
	if a == 0 {
		return nil, nil, false
	}
	if line[a-1] == ':' {
		// ":<blanks>event:" would also match with a period before it when
		// there is none; the leftmost ':' wins, which is this one.
		return event, nil, true
	}
	if !perfDigit(line[a-1]) {
		return nil, nil, false
	}
	d := a - 1
	for d > 0 && perfDigit(line[d-1]) {
		d--
	}
	b := d
	for b > 0 && perfSpace(line[b-1]) {
		b--
	}
	if b == 0 || line[b-1] != ':' {
		return nil, nil, false
	}
	return event, line[d:a], true
}

// perfFrameLine holds the captures of the stack line regex
// /^\s*(\w+)\s*(.+) \((\S*)\)/.
type perfFrameLine struct {
	pc, rawfunc, module []byte
}

// perfMatchFrame matches /^\s*(\w+)\s*(.+) \((\S*)\)/ (no end anchor: the
// greedy (.+) makes the module the last " (...)" group whose word holds a
// ')').
func perfMatchFrame(line []byte) (perfFrameLine, bool) {
	w := 0
	for w < len(line) && perfSpace(line[w]) {
		w++
	}
	q := w
	for q < len(line) && perfWord(line[q]) {
		q++
	}
	if q == w {
		return perfFrameLine{}, false
	}
	r, close := perfLastModule(line, q)
	if r < 0 {
		return perfFrameLine{}, false
	}
	s := q // end of the blanks after the pc
	for s < len(line) && perfSpace(line[s]) {
		s++
	}
	var f perfFrameLine
	switch {
	case r >= s+1:
		f = perfFrameLine{pc: line[w:q], rawfunc: line[s:r]}
	case r >= q+1: // (.+) must take one of the blanks
		f = perfFrameLine{pc: line[w:q], rawfunc: line[r-1 : r]}
	case r == q && q-w >= 2: // backtrack one character of the pc into (.+)
		f = perfFrameLine{pc: line[w : q-1], rawfunc: line[q-1 : r]}
	default:
		return perfFrameLine{}, false
	}
	f.module = line[r+2 : close]
	return f, true
}

// perfLastModule returns the largest r >= from such that line[r:] starts
// with " (" followed by a run of non-blanks containing ')', and the index of
// the last ')' of that run; r is -1 if there is none.
func perfLastModule(line []byte, from int) (r, close int) {
	for i := len(line) - 2; i >= from; i-- {
		if line[i] == ' ' && line[i+1] == '(' {
			if rc := perfRunClose(line, i+2); rc >= 0 {
				return i, rc
			}
		}
	}
	return -1, -1
}

// perfRunClose returns the index of the last ')' in the non-blank run that
// starts at i, or -1.
func perfRunClose(line []byte, i int) int {
	last := -1
	for ; i < len(line) && !perfSpace(line[i]); i++ {
		if line[i] == ')' {
			last = i
		}
	}
	return last
}
